#include "jobs/pods_ready.h"

#include <algorithm>

#include "jobs/condition_patch.h"

namespace rota::controller {
namespace {

using api::Json;
namespace wc = api::workload_condition;

}  // namespace

int64_t PodsReadySecondsLeft(const api::Workload& wl, std::chrono::seconds timeout, int64_t now) {
  const api::Condition* admitted = wl.status ? api::FindCondition(wl.status->conditions, wc::kAdmitted) : nullptr;
  auto since = api::ParseTime(admitted ? admitted->last_transition_time : "");
  return (since.ok() ? *since : 0) + timeout.count() - now;
}

int64_t RequeueBackoffSeconds(int32_t count, const RunConfig& config) {
  return std::min<int64_t>(config.backoff_max_seconds, static_cast<int64_t>(config.backoff_base_seconds)
                                                           << std::min(count - 1, 30));
}

PodsReadyEviction EvictForPodsReadyTimeout(const api::Workload& wl, const RunConfig& config, int64_t now) {
  PodsReadyEviction e;
  e.count = (wl.status && wl.status->requeue_state ? wl.status->requeue_state->count.value_or(0) : 0) + 1;
  e.deactivate = config.backoff_limit && e.count > *config.backoff_limit;
  const std::string key = wl.metadata.namespace_ + "/" + wl.metadata.name;
  e.message = e.deactivate ? "Deactivated: the workload was evicted " + std::to_string(e.count) +
                                 " times for exceeding the PodsReady timeout"
                           : "Exceeded the PodsReady timeout " + key;
  // Conditions: the current ones, with the eviction's on top.
  ConditionPatch conds(wl, api::FormatTime(now));
  auto set = [&conds](std::string_view type, const char* status, const std::string& reason, const std::string& msg) {
    conds.Set(type, status, reason, msg);
  };
  set(wc::kEvicted, "True", e.deactivate ? "DeactivatedDueToRequeuingLimitExceeded" : "PodsReadyTimeout", e.message);
  set(wc::kPodsReady, "False", "PodsReadyTimeout", "Not all pods became ready in time");
  e.status = api::Json::object();
  if (!e.deactivate) {
    const std::string requeue_at = api::FormatTime(now + RequeueBackoffSeconds(e.count, config));
    e.status["requeueState"] = {{"count", e.count}, {"requeueAt", requeue_at}};
    set(wc::kRequeued, "False", "Backoff", "Requeued after backoff at " + requeue_at);
  }
  e.status["conditions"] = conds.List();
  return e;
}

}  // namespace rota::controller
