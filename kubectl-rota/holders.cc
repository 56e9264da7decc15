#include <algorithm>

#include "rota/kubectl/why.h"
#include "rota/kubectl/workload_facts.h"

namespace rota::kubectl {
namespace {

using FlavorResources = std::set<std::pair<std::string, std::string>>;

// The (flavor, resource) pairs of `cq` that could serve `requests`.
FlavorResources Needed(const api::ClusterQueue& cq, const Amounts& requests) {
  FlavorResources out;
  for (const auto& group : cq.spec.resource_groups)
    for (const auto& flavor : group.flavors)
      for (const auto& r : flavor.resources)
        if (requests.count(r.name)) out.insert({flavor.name, r.name});
  return out;
}

// Whether `cq` borrows any of `needed` (status.flavorsUsage[].resources[].borrowed).
bool Borrows(const api::ClusterQueue& cq, const FlavorResources& needed) {
  if (!cq.status) return false;
  for (const auto& f : cq.status->flavors_usage)
    for (const auto& r : f.resources)
      if (r.borrowed.milli() > 0 && needed.count({f.name, r.name})) return true;
  return false;
}

// `w`'s hold on `needed`, or nullopt when it holds none of it.
std::optional<Holder> HoldOf(const api::Workload& w, const FlavorResources& needed,
                             const std::vector<api::WorkloadPriorityClass>& classes) {
  const api::Admission& a = *w.status->admission;
  const Amounts usage = UsageOf(a);
  std::set<std::string> resources;
  for (const auto& fr : FlavorResourcesOf(a))
    if (needed.count(fr) && usage.count(fr.second)) resources.insert(fr.second);
  std::string held;
  for (const std::string& r : OrderResources(resources))
    held += (held.empty() ? "" : ", ") + r + ": " + FormatAmount(r, usage.at(r));
  if (held.empty()) return std::nullopt;
  Holder h{w.metadata.namespace_, w.metadata.name,           a.cluster_queue,
           PriorityOf(w),         IsPreemptible(w, classes), w.metadata.creation_timestamp};
  const api::Condition* reserved = ConditionOf(w, api::workload_condition::kQuotaReserved);
  if (reserved && reserved->status == api::ConditionStatus::kTrue) h.admitted_at = reserved->last_transition_time;
  h.gpus = GpuEquivalents(usage);
  h.usage = held;
  return h;
}

}  // namespace

std::vector<Holder> HoldersOf(const api::Workload& w, const api::ClusterQueue& cq, const WhyInputs& in,
                              bool cohort_too) {
  auto requests = RequestsOf(w);
  if (!requests.ok()) return {};
  const FlavorResources needed = Needed(cq, *requests);
  // The queues whose holders count: its own, and the cohort's that borrow (or all, with cohort_too).
  std::map<std::string, bool> queues = {{cq.metadata.name, false}};
  for (const auto& other : in.cluster_queues) {
    if (cq.spec.cohort_name.empty() || other.spec.cohort_name != cq.spec.cohort_name || &other == &cq) continue;
    if (other.metadata.name == cq.metadata.name) continue;
    const bool borrows = Borrows(other, needed);
    if (cohort_too || borrows) queues[other.metadata.name] = borrows;
  }
  std::vector<Holder> out;
  for (const api::Workload& x : in.workloads) {
    if (!HoldsQuota(x) || KeyOf(x) == KeyOf(w)) continue;
    auto queue = queues.find(x.status->admission->cluster_queue);
    if (queue == queues.end()) continue;
    auto hold = HoldOf(x, needed, in.priority_classes);
    if (!hold) continue;
    hold->same_queue = queue->first == cq.metadata.name;
    hold->queue_borrowing = queue->second;
    out.push_back(std::move(*hold));
  }
  std::sort(out.begin(), out.end(), [](const Holder& a, const Holder& b) {
    return a.gpus != b.gpus ? a.gpus > b.gpus : a.priority != b.priority ? a.priority < b.priority : a.name < b.name;
  });
  return out;
}

}  // namespace rota::kubectl
