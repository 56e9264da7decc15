#include "jobs/checkpoint_relay.h"

#include <algorithm>

#include "job_controller.h"
#include "rota/api/checkpoint.h"
#include "rota/api/snapshot.h"

namespace rota::controller {
namespace {

int64_t TimeOr0(const std::string& text) {
  if (text.empty()) return 0;
  auto t = api::ParseTime(text);
  return t.ok() ? *t : 0;
}

}  // namespace

int64_t LatestCheckpoint(const JobInfo& job, const std::vector<std::shared_ptr<const PodInfo>>& pods) {
  int64_t latest = TimeOr0(api::AnnotationOr(job.annotations, api::kCheckpointedAtAnnotation));
  for (const auto& p : pods) latest = std::max(latest, TimeOr0(p->checkpointed_at));
  return latest;
}

api::Json CheckpointSettingsPatch(const std::map<std::string, std::string>& job,
                                  const std::map<std::string, std::string>& workload) {
  api::Json patch = api::Json::object();
  for (std::string_view key :
       {api::kCheckpointAnnotation, api::kCheckpointTimeoutAnnotation, api::kExpectedRuntimeAnnotation}) {
    const std::string want = api::AnnotationOr(job, key), have = api::AnnotationOr(workload, key);
    if (want != have) patch[std::string(key)] = want.empty() ? api::Json(nullptr) : api::Json(want);
  }
  return patch;
}

int64_t WorkloadCheckpoint(const api::Workload& wl) {
  return TimeOr0(api::AnnotationOr(wl.metadata.annotations, api::kCheckpointedAtAnnotation));
}

std::optional<std::string> RequestedAtForPods(const api::Workload& wl) {
  const api::Condition* c =
      wl.status ? api::FindCondition(wl.status->conditions, api::workload_condition::kCheckpointRequested) : nullptr;
  if (!c) return std::nullopt;
  if (c->status == api::ConditionStatus::kTrue) return c->last_transition_time;
  if (c->reason == "Cancelled") return std::string();
  return std::nullopt;  // answered or timed out: the pods are being stopped
}

}  // namespace rota::controller
