#include "jobs/quota_release.h"

#include <algorithm>
#include <map>

#include "rota/api/snapshot.h"

namespace rota::controller {
namespace {
namespace wc = api::workload_condition;
using api::Json;
}  // namespace

bool EvictedHoldingQuota(const api::Workload& wl) {
  if (!wl.status || !wl.status->admission) return false;
  const api::Condition* evicted = api::FindCondition(wl.status->conditions, wc::kEvicted);
  return evicted && evicted->status == api::ConditionStatus::kTrue;
}

std::optional<int64_t> AccumulatedExecutionSeconds(const api::Workload& wl, const std::string& now) {
  if (!wl.spec.maximum_execution_time_seconds || !wl.status) return std::nullopt;
  const api::Condition* admitted = api::FindCondition(wl.status->conditions, wc::kAdmitted);
  if (!admitted || admitted->status != api::ConditionStatus::kTrue) return std::nullopt;
  auto since = api::ParseTime(admitted->last_transition_time), until = api::ParseTime(now);
  if (!since.ok() || !until.ok()) return std::nullopt;
  int64_t past = 0;
  if (wl.status->extra.is_object()) {
    auto it = wl.status->extra.find("accumulatedPastExecutionTimeSeconds");
    if (it != wl.status->extra.end() && it->is_number_integer()) past = it->get<int64_t>();
  }
  return past + std::max<int64_t>(0, *until - *since);
}

Json QuotaReleasePatch(const api::Workload& wl, const std::string& now) {
  const api::Condition* evicted = wl.status ? api::FindCondition(wl.status->conditions, wc::kEvicted) : nullptr;
  const std::string reason = evicted ? evicted->reason : "Evicted";
  const std::string message = evicted ? evicted->message : "The workload was evicted";
  std::map<std::string, Json> conds;
  if (wl.status)
    for (const auto& c : wl.status->conditions) conds[c.type] = api::EncodeValue(c);
  auto set = [&](std::string_view type, const char* status, const std::string& why, const std::string& text) {
    const std::string key(type);
    const bool same = conds.count(key) && conds[key].value("status", "") == status;
    const std::string since = same ? conds[key].value("lastTransitionTime", now) : now;
    conds[key] = {{"type", key}, {"status", status}, {"reason", why}, {"message", text}, {"lastTransitionTime", since}};
  };
  set(wc::kQuotaReserved, "False", "Pending", message);
  set(wc::kAdmitted, "False", "NoReservation", "The workload has no reservation");
  // As Kueue's Job integration: requeued at once only after a preemption or a node failure;
  // after a PodsReady timeout the backoff decides, after a stopped queue its restart.
  const bool requeued = reason == "Preempted" || reason == "NodeFailures";
  set(wc::kRequeued, requeued ? "True" : "False", reason, message);
  Json list = Json::array();
  for (auto& [type, c] : conds) list.push_back(std::move(c));
  Json status = {{"admission", nullptr}, {"conditions", std::move(list)}};
  if (auto past = AccumulatedExecutionSeconds(wl, now)) status["accumulatedPastExecutionTimeSeconds"] = *past;
  return {{"metadata", {{"resourceVersion", wl.metadata.resource_version}}}, {"status", std::move(status)}};
}

}  // namespace rota::controller
