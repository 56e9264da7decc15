#pragma once

// `kubectl rota why JOB|WORKLOAD`: why a workload is where it is. Explain() is pure: it is given
// everything read from the cluster (WhyInputs) and says the state, the pending reason in words,
// its position and forecast (the visibility API), the admitted workloads that hold the quota it
// needs, and whether preemption could help.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rota/api/kueue.h"
#include "rota/kubectl/cluster.h"
#include "rota/kubectl/preemption_help.h"
#include "rota/kubectl/resources.h"

namespace rota::kubectl {

// What `why` was asked about: "job/NAME", "workload/NAME" (also jobs.batch/, workloads/,
// workloads.kueue.x-k8s.io/, wl/) or a bare NAME (a Job first, then a Workload).
struct Target {
  enum class Kind { kAny, kJob, kWorkload } kind = Kind::kAny;
  std::string name;
};
// An error names what is wrong with `text`.
Result<Target> ParseTarget(const std::string& text);

// The Workload `target` names in `ns`: the Workload itself, or the one rota made for the Job
// (label kueue.x-k8s.io/job-uid). `job` is the Job's name when a Job was named.
struct Resolved {
  api::Workload workload;
  std::string job;
};
Fetched<Resolved> ResolveTarget(ClusterReader& cluster, const std::string& ns, const Target& target);

struct WhyInputs {
  api::Workload workload;
  std::string job;                            // the Job asked about, or the Workload's owner
  std::vector<api::LocalQueue> local_queues;  // of the workload's namespace
  std::vector<api::ClusterQueue> cluster_queues;
  std::vector<api::Workload> workloads;  // every namespace, or only the workload's (holders_note)
  std::string holders_note;              // why `workloads` is only the workload's namespace
  std::vector<api::WorkloadPriorityClass> priority_classes;
  std::optional<nlohmann::json> pending;  // the visibility API's PendingWorkloadsSummary
  std::string visibility_error;           // why `pending` is absent, when it was asked for
};

// The visibility API's word on the workload (PendingWorkloadsSummary item).
struct Position {
  bool known = false;
  std::string unknown_because;
  int32_t in_cluster_queue = 0, in_local_queue = 0;
  std::string estimated_start;  // RFC 3339; "" when there is no estimate
  std::string basis;            // what the estimate assumes
};

struct Explanation {
  std::string ns, name, job;
  std::string state;            // Pending, Admitted, Finished, Evicted, WaitingForCheckpoint, Inactive
  std::string summary;          // the state in words
  std::string reason, message;  // of the QuotaReserved condition, when it is not admitted
  std::string reason_words;
  std::string local_queue, cluster_queue, cohort;
  int32_t priority = 0;
  Amounts requests;
  double gpus = 0;
  bool waiting = false;  // not admitted and not finished: the rest below applies
  bool would_borrow = false;
  Position position;
  std::vector<Holder> holders;
  std::string holders_note;  // the holders are of its namespace only, and why
  std::optional<PreemptionVerdict> preemption;
};

Explanation Explain(const WhyInputs& in);

// The state of `w` (as Explanation::state) and a sentence for it.
std::pair<std::string, std::string> StateOf(const api::Workload& w);
// A pending reason (QuotaReserved's reason and message) in words.
std::string ReasonInWords(const std::string& reason, const std::string& message);

// The admitted workloads holding the quota `w` needs in `cq` (and, with `cohort_too`, in the other
// queues of its cohort), most GPUs first.
std::vector<Holder> HoldersOf(const api::Workload& w, const api::ClusterQueue& cq, const WhyInputs& in,
                              bool cohort_too);

void RenderExplanation(const Explanation& e, int64_t now, std::ostream& out);
nlohmann::json ExplanationDocument(const Explanation& e);

}  // namespace rota::kubectl
