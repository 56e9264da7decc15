#pragma once

// Whether preemption could make room for a pending workload, by its ClusterQueue's
// spec.preemption and the workloads holding the quota it needs (Kueue's rules):
// - withinClusterQueue: LowerPriority preempts lower priorities in its own queue;
//   LowerOrNewerEqualPriority also equal priorities created later; Never none.
// - reclaimWithinCohort: when it fits in its own nominal quota, takes back what other queues of the
//   cohort borrow, from lower priorities (LowerPriority) or any (Any).
// - borrowWithinCohort: LowerPriority: when it must borrow, preempts lower priorities in other
//   queues of the cohort, at most maxPriorityThreshold when one is set.
// A workload of a non-preemptible priority class is never a candidate. The answer says whether
// candidates exist, not whether they free enough: that is the scheduler's call.

#include <cstdint>
#include <string>
#include <vector>

#include "rota/api/kueue.h"

namespace rota::kubectl {

// An admitted workload that holds quota the pending one needs.
struct Holder {
  std::string ns, name, cluster_queue;
  int32_t priority = 0;
  bool preemptible = true;
  std::string created;           // RFC 3339
  std::string admitted_at;       // RFC 3339; "" when not known
  bool same_queue = true;        // in the pending workload's own ClusterQueue
  bool queue_borrowing = false;  // its ClusterQueue uses more than its nominal quota
  double gpus = 0;               // GPU-equivalents it holds
  std::string usage;             // what it holds of the needed resources, e.g. "nvidia.com/gpu: 4"
};

struct PreemptionQuestion {
  api::ClusterQueuePreemption policy;
  int32_t priority = 0;
  std::string created;  // RFC 3339, for LowerOrNewerEqualPriority
  bool in_cohort = false;
  bool would_borrow = false;  // it needs more than its queue's free nominal quota
  std::vector<Holder> holders;
};

struct PreemptionVerdict {
  bool could_help = false;
  std::string answer;                   // "yes: ..." or "no: ..."
  std::vector<std::string> candidates;  // "ns/name" of the workloads that could be preempted
};

PreemptionVerdict AssessPreemption(const PreemptionQuestion& q);

}  // namespace rota::kubectl
