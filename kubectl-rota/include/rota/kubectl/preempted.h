#pragma once

// `kubectl rota preempted`: who was preempted, by whom, when, and the work lost. Two sources:
// - Workloads whose condition Preempted (or Evicted with reason Preempted) is True: evicted and
//   not yet admitted again; the condition's time is the eviction;
// - the Events rota posts on a Workload it preempts (reason Preempted), which outlive a new
//   admission for as long as the apiserver keeps Events (an hour by default).
// The same preemption seen in both is listed once. The work lost is the victim's GPU-equivalents
// times the time from the later of its admission and its last checkpoint (rota.dev/checkpointed-at)
// to its eviction (admission::SecondsSinceSave), in GPU-hours; its admission time is the
// QuotaReserved condition's while it still holds quota, else the Event rota posted on its
// admission ("Admitted"); when neither is known, the loss is unknown.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rota/api/kueue.h"

namespace rota::kubectl {

struct Preemption {
  std::string ns, workload, job;
  std::string cluster_queue;  // the victim's
  std::string preemptor;      // "ns/name" of the workload it made room for ("" if not said)
  std::string reason;         // InClusterQueue, InCohortReclamation, ... ("" when only the Event says)
  std::string message;
  int64_t at = 0;                        // Unix seconds of the eviction
  int64_t admitted_at = 0;               // 0: not known
  int64_t checkpointed_at = 0;           // 0: none before the eviction
  double gpus = 0;                       // GPU-equivalents it asked for
  std::optional<double> gpu_hours_lost;  // absent: not known
};

// The preemptor named in a message rota writes ("Preempted to accommodate workload NS/NAME due
// to ..."), or "".
std::string PreemptorOf(const std::string& message);

// Work lost in GPU-hours: `gpus` x seconds from max(admitted_at, checkpointed_at) to `at`; absent
// when `admitted_at` is 0.
std::optional<double> GpuHoursLost(double gpus, int64_t admitted_at, int64_t checkpointed_at, int64_t at);

// Every preemption the Workloads and Events tell of, newest first, at or after `since` (Unix
// seconds; 0: all). `local_queues` resolve a victim's ClusterQueue once its admission is gone.
std::vector<Preemption> CollectPreemptions(const std::vector<api::Workload>& workloads,
                                           const std::vector<nlohmann::json>& events,
                                           const std::vector<api::LocalQueue>& local_queues, int64_t since);

// `all_namespaces` adds a NAMESPACE column; `wide` the Job, the times and the message.
void RenderPreemptions(const std::vector<Preemption>& list, bool all_namespaces, bool wide, int64_t now,
                       std::ostream& out);
nlohmann::json PreemptionsDocument(const std::vector<Preemption>& list);

}  // namespace rota::kubectl
