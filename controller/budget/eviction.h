#pragma once

// A Budget with stopRunning: true evicts the running workloads it charges once it is used up:
// their Workload gets Evicted=True with reason BudgetExhausted, and the Job integration then
// suspends the Job and releases the quota, as for any eviction; the workload then waits as a new
// one does (docs/budgets.md).

#include <cstdint>
#include <string>

#include "rota/api/codec.h"
#include "rota/api/kueue.h"

namespace rota::controller::budget {

// Whether the Workload holds quota and is not being evicted already.
bool Running(const api::Workload& wl);

// The status merge patch that evicts `wl` (on its resourceVersion) with `message`, at `now`.
api::Json EvictionPatch(const api::Workload& wl, const std::string& message, int64_t now);

}  // namespace rota::controller::budget
