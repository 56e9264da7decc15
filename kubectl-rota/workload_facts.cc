#include "rota/kubectl/workload_facts.h"

#include "rota/api/snapshot.h"

namespace rota::kubectl {

namespace wc = api::workload_condition;

const api::Condition* ConditionOf(const api::Workload& w, std::string_view type) {
  return w.status ? api::FindCondition(w.status->conditions, type) : nullptr;
}

bool IsTrue(const api::Workload& w, std::string_view type) {
  const api::Condition* c = ConditionOf(w, type);
  return c && c->status == api::ConditionStatus::kTrue;
}

bool IsFinished(const api::Workload& w) { return IsTrue(w, wc::kFinished); }

bool HoldsQuota(const api::Workload& w) { return w.status && w.status->admission && !IsFinished(w); }

std::string KeyOf(const api::Workload& w) { return w.metadata.namespace_ + "/" + w.metadata.name; }

int32_t PriorityOf(const api::Workload& w) { return w.spec.priority.value_or(0); }

std::string JobOf(const api::Workload& w) {
  const api::Json& extra = w.metadata.extra;
  if (!extra.is_object() || !extra.contains("ownerReferences") || !extra["ownerReferences"].is_array()) return "";
  for (const api::Json& ref : extra["ownerReferences"]) {
    if (ref.is_object() && ref.value("kind", "") == "Job" && ref.value("controller", false))
      return ref.value("name", "");
  }
  return "";
}

Amounts UsageOf(const api::Admission& admission) {
  Amounts out;
  for (const auto& ps : admission.pod_set_assignments)
    for (const auto& [resource, q] : ps.resource_usage) out[resource] += q.milli();
  return out;
}

std::set<std::pair<std::string, std::string>> FlavorResourcesOf(const api::Admission& admission) {
  std::set<std::pair<std::string, std::string>> out;
  for (const auto& ps : admission.pod_set_assignments)
    for (const auto& [resource, flavor] : ps.flavors) out.insert({flavor, resource});
  return out;
}

Result<Amounts> RequestsOf(const api::Workload& w) {
  Amounts out;
  for (size_t i = 0; i < w.spec.pod_sets.size(); ++i) {
    const api::PodSet& ps = w.spec.pod_sets[i];
    const std::string path = "spec.podSets[" + std::to_string(i) + "].template";
    auto per_pod = api::PodRequests(ps.template_.get(), path);
    if (!per_pod.ok()) return per_pod.status();
    for (const auto& [resource, milli] : *per_pod) out[resource] += milli * ps.count;
  }
  return out;
}

bool IsPreemptible(const api::Workload& w, const std::vector<api::WorkloadPriorityClass>& classes) {
  if (!w.spec.priority_class_ref || w.spec.priority_class_ref->kind != "WorkloadPriorityClass") return true;
  for (const auto& c : classes)
    if (c.metadata.name == w.spec.priority_class_ref->name) return c.preemptible();
  return true;
}

}  // namespace rota::kubectl
