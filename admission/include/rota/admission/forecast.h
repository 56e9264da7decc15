#pragma once

// Start-time forecasts: the queue run forward on a virtual clock. From a snapshot, the engine
// decides a pass; admitted workloads hold their quota for their expected run time and then
// release it; the clock jumps to the next release and the engine decides again, until every
// pending workload has started or a limit is reached. Nothing new arrives, nothing is deleted,
// and a preempted workload goes back to its queue to run its whole run time again. Pure, as the
// engine: the caller gives the run times and the snapshot's `now`.

#include <cstdint>
#include <functional>
#include <vector>

#include "rota/admission/snapshot.h"

namespace rota::admission {

// A run time that is not known: such a workload, once admitted, holds its quota for good.
inline constexpr int64_t kUnknownRunTime = -1;
// No estimate for this workload.
inline constexpr int64_t kNoEstimate = -1;

struct ForecastLimits {
  int64_t horizon = 30 * 24 * 3600;  // seconds past `now`: later starts are not estimated
  size_t max_passes = 20000;         // engine passes, each at one release time
  // The pending workloads of a ClusterQueue that take part in a pass: the first `window` of it
  // in scheduling order (more join as those start). A pass costs in proportion to the pending
  // workloads it looks at, and one deep in a queue rarely starts before those ahead of it; when
  // it could (a small workload that fits where the ones ahead do not, in a BestEffortFIFO
  // queue), the forecast has it start later than it would, and the workloads it would have
  // delayed perhaps sooner. 0: no window.
  size_t window = 16;
  // Asked before every pass: false stops the forecast there (as the pass limit does). For a
  // caller that must be able to give up (a shutdown); none: never stops early.
  std::function<bool()> keep_going;
};

struct Forecast {
  // Per index of Snapshot::workloads: when a workload pending in the snapshot is expected to be
  // admitted (the snapshot's time unit, seconds), or kNoEstimate: never within the limits, not
  // pending, or pending for a reason no release can cure (no such queue, an inactive queue).
  std::vector<int64_t> start;
  size_t passes = 0;
  // The limit that ended the forecast before every pending workload had a start, if one did.
  bool hit_horizon = false;
  bool hit_max_passes = false;
};

// `run_time[i]`: the expected run time, in seconds, of workloads[i] (kUnknownRunTime when not
// known). An admitted workload is expected to end at admission_time + run time, or at `now` if
// that has passed. Needs `snapshot.now`; an empty forecast (every start kNoEstimate) without it.
Forecast ForecastStarts(const Snapshot& snapshot, const std::vector<int64_t>& run_time,
                        const ForecastLimits& limits = {});

}  // namespace rota::admission
