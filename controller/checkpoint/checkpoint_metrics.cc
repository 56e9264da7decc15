#include "checkpoint/checkpoint_metrics.h"

#include "rota/admission/lost_work.h"

namespace rota::controller {

void RecordCheckpointMetrics(Metrics& metrics, const CheckpointPass& pass, const admission::Decisions& d,
                             const api::SnapshotBuilder& builder, int64_t now) {
  for (const auto& o : pass.outcomes) {
    if (o.result == "requested") continue;
    metrics.Add("rota_checkpoint_requests_total", {{"cluster_queue", o.cluster_queue}, {"result", o.result}});
    if (o.result != "cancelled") metrics.Observe("rota_checkpoint_wait_seconds", {}, o.wait_seconds);
  }
  for (const auto& p : d.preempted) {
    const admission::WorkloadSpec* w = builder.Find(p.workload);
    if (!w || !w->admission) continue;
    // (A victim that has just checkpointed loses nothing: its series shows 0.)
    const double seconds = static_cast<double>(admission::SecondsSinceSave(*w, now));
    for (const auto& ps : w->admission->pod_sets) {
      for (const auto& [resource, milli] : ps.usage) {
        metrics.Add("rota_preemption_lost_resource_seconds_total",
                    {{"cluster_queue", p.cluster_queue}, {"resource", resource}},
                    static_cast<double>(milli) / 1000 * seconds);
      }
    }
  }
}

std::string CheckpointEventReason(const std::string& result) {
  if (result == "requested") return "CheckpointRequested";
  if (result == "acknowledged") return "Checkpointed";
  if (result == "timed_out") return "CheckpointTimeout";
  return "CheckpointCancelled";
}

}  // namespace rota::controller
