#include "jobs/max_exec_time.h"

#include "jobs/condition_patch.h"
#include "rota/api/snapshot.h"

namespace rota::controller {
namespace {

using api::Json;
namespace wc = api::workload_condition;
constexpr const char* kReason = "MaximumExecutionTimeExceeded";

int64_t PastSeconds(const api::Workload& wl) {
  if (!wl.status || !wl.status->extra.is_object()) return 0;
  auto it = wl.status->extra.find("accumulatedPastExecutionTimeSeconds");
  return it != wl.status->extra.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

}  // namespace

std::optional<int64_t> MaxExecSecondsLeft(const api::Workload& wl, int64_t now) {
  if (!wl.spec.maximum_execution_time_seconds || !wl.status) return std::nullopt;
  const api::Condition* admitted = api::FindCondition(wl.status->conditions, wc::kAdmitted);
  if (!admitted || admitted->status != api::ConditionStatus::kTrue) return std::nullopt;
  auto since = api::ParseTime(admitted->last_transition_time);
  if (!since.ok()) return std::nullopt;
  return *wl.spec.maximum_execution_time_seconds - PastSeconds(wl) - (now - *since);
}

MaxExecDeactivation DeactivateForMaxExecTime(const api::Workload& wl, int64_t now) {
  MaxExecDeactivation d;
  d.message = "The maximum execution time (" + std::to_string(wl.spec.maximum_execution_time_seconds.value_or(0)) +
              "s) exceeded";
  ConditionPatch conditions(wl, api::FormatTime(now));
  conditions.Set("DeactivationTarget", "True", kReason, "exceeding the maximum execution time");
  conditions.Set(wc::kEvicted, "True", std::string("DeactivatedDueTo") + kReason, d.message);
  // (On its resourceVersion: a merge patch replaces the whole list, so a stale one must fail.)
  d.patch = {{"metadata", {{"resourceVersion", wl.metadata.resource_version}}},
             {"status", {{"conditions", conditions.List()}}}};
  return d;
}

}  // namespace rota::controller
