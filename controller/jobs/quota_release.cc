#include "jobs/quota_release.h"

#include <map>

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
  set(wc::kRequeued, "True", reason, message);
  Json list = Json::array();
  for (auto& [type, c] : conds) list.push_back(std::move(c));
  return {{"metadata", {{"resourceVersion", wl.metadata.resource_version}}},
          {"status", {{"admission", nullptr}, {"conditions", std::move(list)}}}};
}

}  // namespace rota::controller
