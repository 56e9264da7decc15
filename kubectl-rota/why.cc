#include "rota/kubectl/why.h"

#include "rota/kubectl/workload_facts.h"

namespace rota::kubectl {
namespace {

using Json = nlohmann::json;

// Whether `requests` exceed what `cq` has free of its nominal quota (resources over all flavors).
bool WouldBorrow(const api::ClusterQueue& cq, const Amounts& requests) {
  Amounts nominal, in_use;
  for (const auto& group : cq.spec.resource_groups)
    for (const auto& flavor : group.flavors)
      for (const auto& r : flavor.resources) nominal[r.name] += r.nominal_quota.milli();
  if (cq.status)
    for (const auto& f : cq.status->flavors_usage)
      for (const auto& r : f.resources) in_use[r.name] += r.total.milli();
  for (const auto& [resource, amount] : requests)
    if (amount > 0 && in_use[resource] + amount > nominal[resource]) return true;
  return false;
}

Position PositionOf(const WhyInputs& in, const std::string& local_queue) {
  Position p;
  if (local_queue.empty()) {
    p.unknown_because = "it names no LocalQueue";
    return p;
  }
  if (!in.pending) {
    p.unknown_because = "the visibility API is not available: " + in.visibility_error;
    return p;
  }
  const Json& items = in.pending->contains("items") ? (*in.pending)["items"] : Json::array();
  for (const Json& item : items) {
    const Json meta = item.value("metadata", Json::object());
    if (meta.value("name", "") != in.workload.metadata.name) continue;
    p.known = true;
    p.in_cluster_queue = item.value("positionInClusterQueue", 0);
    p.in_local_queue = item.value("positionInLocalQueue", 0);
    p.estimated_start = item.value("estimatedStartTime", "");
    p.basis = item.value("estimateBasis", "");
    return p;
  }
  p.unknown_because = "the visibility API does not list it among the pending workloads of LocalQueue " + local_queue;
  return p;
}

const api::ClusterQueue* FindQueue(const WhyInputs& in, const std::string& name) {
  for (const auto& cq : in.cluster_queues)
    if (cq.metadata.name == name) return &cq;
  return nullptr;
}

// The ClusterQueue it is (or would be) admitted to: its admission's, else its LocalQueue's.
std::string ClusterQueueOf(const WhyInputs& in) {
  const api::Workload& w = in.workload;
  if (w.status && w.status->admission) return w.status->admission->cluster_queue;
  for (const auto& lq : in.local_queues)
    if (lq.metadata.name == w.spec.queue_name) return lq.spec.cluster_queue;
  return "";
}

}  // namespace

Explanation Explain(const WhyInputs& in) {
  const api::Workload& w = in.workload;
  Explanation e{w.metadata.namespace_, w.metadata.name, in.job.empty() ? JobOf(w) : in.job};
  std::tie(e.state, e.summary) = StateOf(w);
  e.priority = PriorityOf(w);
  if (auto requests = RequestsOf(w); requests.ok()) e.requests = *requests;
  e.gpus = GpuEquivalents(e.requests);
  e.local_queue = w.spec.queue_name;
  e.cluster_queue = ClusterQueueOf(in);
  const api::ClusterQueue* cq = FindQueue(in, e.cluster_queue);
  if (cq) e.cohort = cq->spec.cohort_name;
  e.waiting = w.spec.active && !IsFinished(w) && !(w.status && w.status->admission);
  if (!e.waiting) return e;
  if (const api::Condition* c = ConditionOf(w, api::workload_condition::kQuotaReserved)) {
    e.reason = c->reason;
    e.message = c->message;
  }
  e.reason_words = ReasonInWords(e.reason, e.message);
  e.position = PositionOf(in, e.local_queue);
  if (!cq) return e;
  e.would_borrow = !e.cohort.empty() && WouldBorrow(*cq, e.requests);
  e.holders = HoldersOf(w, *cq, in, e.would_borrow);
  e.holders_note = in.holders_note;
  e.preemption = AssessPreemption(
      {cq->spec.preemption, e.priority, w.metadata.creation_timestamp, !e.cohort.empty(), e.would_borrow, e.holders});
  return e;
}

}  // namespace rota::kubectl
