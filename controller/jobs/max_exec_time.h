#pragma once

// maximumExecutionTimeSeconds (Kueue's semantics): an admitted Workload that has run longer than
// its limit (time before earlier evictions, status.accumulatedPastExecutionTimeSeconds, plus the
// time since its Admitted condition became True) is deactivated: spec.active false, then
// DeactivationTarget and Evicted conditions with reason ...MaximumExecutionTimeExceeded. It keeps
// its quota while the Job integration suspends its Job and its pods stop, as any eviction does
// (jobs/quota_release.h). Pure functions of the Workload and the wall time.

#include <cstdint>
#include <optional>
#include <string>

#include "rota/api/kueue.h"

namespace rota::controller {

// Seconds until the admitted Workload `wl` reaches its limit (0 or less: it has); nullopt when it
// has no limit or is not admitted.
std::optional<int64_t> MaxExecSecondsLeft(const api::Workload& wl, int64_t now);

struct MaxExecDeactivation {
  std::string message;  // "The maximum execution time (60s) exceeded", as Kueue's Event says
  api::Json patch;      // the merge patch: the conditions, on the Workload's resourceVersion
};
MaxExecDeactivation DeactivateForMaxExecTime(const api::Workload& wl, int64_t now);

}  // namespace rota::controller
