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
    // (A workload that keeps its quota while evicted is being drained or preempted already.)
    if (decided.count(key) || IsFinished(w) || (EvictedHoldingQuota(w) && has_pods(w))) continue;
    const std::string& cq = w.status->admission->cluster_queue;
    const bool by_cq = draining_cqs.count(cq) > 0;
    if (!by_cq && !draining_lqs.count(w.metadata.namespace_ + "/" + w.spec.queue_name)) continue;
    const bool keep = has_pods(w);
    out.push_back(
        {key, cq, by_cq ? "ClusterQueueStopped" : "LocalQueueStopped", DrainWrite(w, by_cq, now, keep), keep});
  }
  return out;
}

void DrainsInFlight::Filter(std::vector<Drained>& drained,
                            const std::function<const api::Workload*(const std::string&)>& object_of, TimePoint now,
                            std::chrono::seconds retry_after) {
  std::erase_if(in_flight_, [&](const auto& entry) {
    const api::Workload* w = object_of(entry.first);
    return !w || !w->status || !w->status->admission || EvictedHoldingQuota(*w) || now - entry.second > retry_after;
  });
  std::erase_if(drained, [&](const Drained& d) { return in_flight_.count(d.key) > 0; });
  for (const Drained& d : drained)
    if (d.keeps_quota) in_flight_.emplace(d.key, now);
}

}  // namespace rota::controller
