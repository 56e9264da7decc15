#pragma once

// How fast the scheduling loop goes: how long a pass waits for its batch of changes, how often a
// busy queue's status is written, and whether the apiserver is behind on admissions. Pure
// functions and a small state machine of values; no clock is read here.

#include <chrono>
#include <optional>

#include "scheduling/tuning.h"

namespace rota::controller {

// How long changes gather before the scheduler's next pass: the configured batch period, or
// (1 / cpu_share - 1) times the CPU time the last pass took when that is longer (at most
// `max_stretch`), so that under a steady stream of changes the loop uses at most about
// `cpu_share` of a core however deep the backlog (by default 1/21: 20 times the pass).
std::chrono::nanoseconds BatchWait(std::chrono::milliseconds batch_period, std::chrono::nanoseconds last_pass_cpu,
                                   double cpu_share = 1.0 / 21,
                                   std::chrono::milliseconds max_stretch = SchedulingTuning{}.max_batch_stretch);

// How often a queue's status is written at most while its counts keep changing (see
// SchedulingTuning's queue status fields): with the defaults every 3 s, or, with more than 150
// ClusterQueues and LocalQueues in all, so that all of them busy at once are written at most 50
// times a second on average (25 while the apiserver is behind: more than 75 queues).
std::chrono::steady_clock::duration QueueStatusInterval(size_t queues, bool apiserver_behind = false,
                                                        const SchedulingTuning& tuning = {});

// Whether the apiserver is behind on admissions, from how long the scheduling loop waited for
// the status writer to take the last pass's admissions and evictions (SchedulingTuning's
// behind_wait and behind_hold).
class ApiserverBehind {
 public:
  explicit ApiserverBehind(const SchedulingTuning& tuning = {})
      : behind_wait_(tuning.behind_wait), behind_hold_(tuning.behind_hold) {}
  // After the loop's wait for the writer ended at `now`, having taken `waited`; returns whether
  // the apiserver is behind now.
  bool Observe(std::chrono::steady_clock::duration waited, std::chrono::steady_clock::time_point now);
  bool behind() const { return behind_; }

 private:
  std::chrono::milliseconds behind_wait_;
  std::chrono::seconds behind_hold_;
  std::optional<std::chrono::steady_clock::time_point> until_;
  bool behind_ = false;
};

}  // namespace rota::controller
