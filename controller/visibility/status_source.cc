#include "visibility/status_source.h"

#include <map>

#include "rota/api/snapshot.h"

namespace rota::visibility {
namespace {

double Amount(const std::string& resource, const Quantity& q) {
  const double v = static_cast<double>(q.milli()) / 1000.0;
  return resource == "memory" || resource == "ephemeral-storage" ? v / (1024.0 * 1024 * 1024) : v;
}

statuspage::QueueRow QueueRowOf(const api::ClusterQueue& cq) {
  statuspage::QueueRow row;
  row.name = cq.metadata.name;
  row.cohort = cq.spec.cohort_name;
  std::map<std::pair<std::string, std::string>, double> used;  // (flavor, resource)
  if (cq.status) {
    row.pending = static_cast<size_t>(cq.status->pending_workloads);
    row.admitted = static_cast<size_t>(cq.status->admitted_workloads);
    for (const api::FlavorUsage& f : cq.status->flavors_reservation)
      for (const api::ResourceUsage& r : f.resources) used[{f.name, r.name}] = Amount(r.name, r.total);
    for (const api::Condition& c : cq.status->conditions)
      if (c.type == "Active" && c.status != api::ConditionStatus::kTrue) {
        row.active = false;
        row.inactive_reason = c.reason;
      }
  }
  for (const api::ResourceGroup& g : cq.spec.resource_groups)
    for (const api::FlavorQuotas& f : g.flavors)
      for (const api::ResourceQuota& q : f.resources) {
        statuspage::ResourceUsage u;
        u.flavor = f.name;
        u.resource = q.name;
        u.unit = q.name == "memory" || q.name == "ephemeral-storage" ? "Gi" : "";
        u.nominal = Amount(q.name, q.nominal_quota);
        if (q.borrowing_limit) u.borrowing_limit = Amount(q.name, *q.borrowing_limit);
        u.in_use = used[{f.name, q.name}];
        row.resources.push_back(std::move(u));
      }
  return row;
}

statuspage::PendingRow PendingRowOf(const PendingEntry& e, const StartForecast* forecast) {
  statuspage::PendingRow row;
  row.namespace_ = e.ns;
  row.name = e.name;
  row.cluster_queue = e.cluster_queue;
  row.local_queue = e.local_queue;
  row.priority = e.priority;
  // (1-based on the page; 0: unknown)
  row.position_in_cluster_queue = static_cast<size_t>(e.position_in_cluster_queue + 1);
  row.position_in_local_queue = static_cast<size_t>(e.position_in_local_queue + 1);
  row.reason = e.reason;
  row.message = e.message;
  if (forecast) {
    auto it = forecast->start.find(e.ns + "/" + e.name);
    if (it != forecast->start.end()) row.estimated_start = api::FormatTime(std::max(it->second, forecast->made_at));
    row.estimate_basis = forecast->assumption;
  }
  return row;
}

}  // namespace

statuspage::StatusPage MakeStatusPage(const StatusSources& s, bool leader, int64_t now, size_t max_pending) {
  statuspage::StatusPage page;
  page.generated_at = api::FormatTime(now);
  page.is_leader = leader;
  for (const auto& cq : s.cache.cluster_queues().List()) page.queues.push_back(QueueRowOf(*cq));
  if (leader) {
    // (Briefly: the page shares its server's thread with /metrics; it refreshes itself anyway.)
    const VisibilityBoard::Reading r = s.board.Read(std::chrono::milliseconds(500));
    if (r.view) {
      page.pending_total = r.view->entries.size();
      for (size_t i = 0; i < r.view->entries.size() && i < max_pending; ++i)
        page.pending.push_back(PendingRowOf(r.view->entries[i], r.forecast.get()));
    }
  }
  for (const Activity& a : s.publisher.Recent(50))
    page.recent.push_back({api::FormatTime(a.time), a.kind, a.workload, a.cluster_queue, a.detail});
  return page;
}

}  // namespace rota::visibility
