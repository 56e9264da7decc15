#pragma once

// The last step of the eviction of a Job's Workload, as Kueue's Job integration takes it: once
// the Job is suspended and none of its pods is active, the Workload gives its quota back. Until
// then it keeps it (scheduling/preemption_hold.h), so that running pods never hold more than the
// admitted quota.

#include <cstdint>
#include <optional>
#include <string>

#include "rota/api/kueue.h"

namespace rota::controller {

// Whether the Workload is admitted but evicted: its Job must stop, then release the quota.
bool EvictedHoldingQuota(const api::Workload& wl);

// The merge patch that releases it: admission cleared, QuotaReserved=False (reason Pending, the
// eviction's message), Admitted=False (NoReservation), Requeued with the eviction's reason and
// message (True after a preemption or node failure, else False, as Kueue), the other conditions
// as they are. It carries the resourceVersion it was computed
// from: a merge patch replaces the whole conditions list, so a stale one must fail (409).
// For a Workload with a maximumExecutionTimeSeconds, the patch also adds the time it ran since
// its admission to status.accumulatedPastExecutionTimeSeconds (jobs/max_exec_time.h counts it).
api::Json QuotaReleasePatch(const api::Workload& wl, const std::string& now);
// That sum, or nullopt when the Workload has no limit or was not admitted.
std::optional<int64_t> AccumulatedExecutionSeconds(const api::Workload& wl, const std::string& now);

}  // namespace rota::controller
