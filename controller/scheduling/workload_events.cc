#include "scheduling/workload_events.h"

namespace rota::controller {

void PostWorkloadEvents(apiclient::EventRecorder& events, const admission::Decisions& d,
                        const std::vector<WorkloadWrite>& pending_writes,
                        const std::function<const api::Workload*(const std::string&)>& object_of) {
  auto post = [&](const api::Workload* w, const char* type, const char* reason, const std::string& message) {
    (void)events.Post(
        {std::string(api::kApiVersion), "Workload", w->metadata.namespace_, w->metadata.name, w->metadata.uid}, type,
        reason, message);
  };
  for (const auto& a : d.admitted) {
    const api::Workload* w = object_of(a.workload);
    post(w, "Normal", "QuotaReserved", "Quota reserved in ClusterQueue " + a.cluster_queue);
    post(w, "Normal", "Admitted", "Admitted by ClusterQueue " + a.cluster_queue);
  }
  for (const auto& p : d.preempted) {
    const api::Workload* w = object_of(p.workload);
    post(w, "Normal", "Preempted", PreemptionMessage(p));
    post(w, "Normal", "Evicted", "Evicted: " + PreemptionMessage(p));
  }
  for (const auto& pw : pending_writes) {
    const api::Workload* w = object_of(pw.key());
    if (!w) continue;
    for (const auto& cond : pw.body["status"]["conditions"])
      if (cond["type"] == api::workload_condition::kQuotaReserved) post(w, "Warning", "Pending", cond["message"]);
  }
}

}  // namespace rota::controller
