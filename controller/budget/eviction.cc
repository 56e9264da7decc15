#include "budget/eviction.h"

#include "jobs/condition_patch.h"
#include "rota/api/budget.h"
#include "rota/api/snapshot.h"

namespace rota::controller::budget {

namespace wc = api::workload_condition;

bool Running(const api::Workload& wl) {
  if (!wl.status || !wl.status->admission) return false;
  const api::Condition* evicted = api::FindCondition(wl.status->conditions, wc::kEvicted);
  return !evicted || evicted->status != api::ConditionStatus::kTrue;
}

api::Json EvictionPatch(const api::Workload& wl, const std::string& message, int64_t now) {
  ConditionPatch conditions(wl, api::FormatTime(now));
  conditions.Set(wc::kEvicted, "True", std::string(api::kBudgetExhaustedReason), message);
  // (On its resourceVersion: a merge patch replaces the whole list, so a stale one must fail.)
  return {{"metadata", {{"resourceVersion", wl.metadata.resource_version}}},
          {"status", {{"conditions", conditions.List()}}}};
}

}  // namespace rota::controller::budget
