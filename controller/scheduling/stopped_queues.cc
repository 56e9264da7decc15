#include "scheduling/stopped_queues.h"

#include <set>

#include "cache/compact_workload.h"
#include "jobs/quota_release.h"

namespace rota::controller {

std::vector<Drained> DrainStoppedQueues(const api::ClusterState& state, const api::SnapshotBuilder& builder,
                                        const admission::Decisions& d, const std::string& now,
                                        const std::function<bool(const api::Workload&)>& has_pods) {
  std::set<std::string> draining_cqs, draining_lqs;
  for (const auto& cq : state.cluster_queues)
    if (cq.spec.stop_policy == api::StopPolicy::kHoldAndDrain) draining_cqs.insert(cq.metadata.name);
  for (const auto& lq : state.local_queues)
    if (lq.spec.stop_policy == api::StopPolicy::kHoldAndDrain)
      draining_lqs.insert(lq.metadata.namespace_ + "/" + lq.metadata.name);
  std::vector<Drained> out;
  if (draining_cqs.empty() && draining_lqs.empty()) return out;
  std::set<std::string> decided;
  for (const auto& a : d.admitted) decided.insert(a.workload);
  for (const auto& p : d.preempted) decided.insert(p.workload);
  for (size_t i = 0; i < builder.snapshot().workloads.size(); ++i) {
    const api::Workload& w = builder.ObjectAt(i);
    if (!w.status || !w.status->admission) continue;
    const std::string key = w.metadata.namespace_ + "/" + w.metadata.name;
    if (decided.count(key) || IsFinished(w) || EvictedHoldingQuota(w)) continue;
    const std::string& cq = w.status->admission->cluster_queue;
    const bool by_cq = draining_cqs.count(cq) > 0;
    if (!by_cq && !draining_lqs.count(w.metadata.namespace_ + "/" + w.spec.queue_name)) continue;
    out.push_back(
        {key, cq, by_cq ? "ClusterQueueStopped" : "LocalQueueStopped", DrainWrite(w, by_cq, now, has_pods(w))});
  }
  return out;
}

}  // namespace rota::controller
