#include "scheduling/pacing.h"

#include <algorithm>

namespace rota::controller {

std::chrono::nanoseconds BatchWait(std::chrono::milliseconds batch_period, std::chrono::nanoseconds last_pass_cpu,
                                   double cpu_share, std::chrono::milliseconds max_stretch) {
  // A pass looks at every workload, so with a deep backlog it costs milliseconds, and under a
  // steady stream of changes the loop would run a pass every batch period. Waiting a multiple of
  // the last pass's CPU instead bounds the loop's share of a core; a small cluster's passes are
  // far below the batch period. The cap keeps a pass every few seconds whatever the backlog.
  const double multiple = 1 / std::clamp(cpu_share, 1e-3, 1.0) - 1;
  const auto stretched = std::min<std::chrono::nanoseconds>(
      std::chrono::nanoseconds(static_cast<int64_t>(static_cast<double>(last_pass_cpu.count()) * multiple)),
      max_stretch);
  return std::max<std::chrono::nanoseconds>(batch_period, stretched);
}

std::chrono::steady_clock::duration QueueStatusInterval(size_t queues, bool apiserver_behind,
                                                        const SchedulingTuning& tuning) {
  const size_t per_second = apiserver_behind ? tuning.queue_writes_per_second / 2 : tuning.queue_writes_per_second;
  return std::max<std::chrono::steady_clock::duration>(tuning.min_queue_status_interval,
                                                       std::chrono::milliseconds(1000 * queues / per_second));
}

bool ApiserverBehind::Observe(std::chrono::steady_clock::duration waited, std::chrono::steady_clock::time_point now) {
  if (waited >= behind_wait_) until_ = now + behind_hold_;
  behind_ = until_ && now < *until_;
  return behind_;
}

}  // namespace rota::controller
