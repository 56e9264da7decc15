#include "rota/kubectl/queues.h"

#include <algorithm>
#include <map>

#include "rota/kubectl/bar.h"
#include "rota/kubectl/context.h"
#include "rota/kubectl/output.h"
#include "rota/kubectl/resources.h"
#include "rota/kubectl/table.h"

namespace rota::kubectl {
namespace {

using Json = nlohmann::json;

QuotaLine& LineFor(QueueSummary& q, const std::string& flavor, const std::string& resource) {
  for (QuotaLine& l : q.lines)
    if (l.flavor == flavor && l.resource == resource) return l;
  return q.lines.emplace_back(QuotaLine{flavor, resource});
}

std::string Amount(const std::string& resource, int64_t milli) { return FormatAmount(resource, milli); }
std::string Limit(const std::string& resource, const std::optional<int64_t>& milli) {
  return milli ? FormatAmount(resource, *milli) : "<none>";
}

// The default rows: each resource with its flavors added up; GPUs only, if the queue has any.
std::vector<QuotaLine> ByResource(const QueueSummary& q) {
  std::map<std::string, QuotaLine> merged;
  bool any_gpu = false;
  for (const QuotaLine& l : q.lines) {
    QuotaLine& m = merged[l.resource];
    m.resource = l.resource;
    m.nominal += l.nominal;
    m.in_use += l.in_use;
    m.borrowed += l.borrowed;
    any_gpu = any_gpu || IsGpuResource(l.resource);
  }
  std::set<std::string> names;
  for (const auto& [name, line] : merged)
    if (!any_gpu || IsGpuResource(name)) names.insert(name);
  std::vector<QuotaLine> out;
  for (const std::string& name : OrderResources(names)) out.push_back(merged[name]);
  return out;
}

}  // namespace

QueueSummary SummarizeQueue(const api::ClusterQueue& cq) {
  QueueSummary q{cq.metadata.name, cq.spec.cohort_name};
  q.stop_policy = std::string(api::EnumName(cq.spec.stop_policy));
  for (const auto& group : cq.spec.resource_groups)
    for (const auto& flavor : group.flavors)
      for (const auto& r : flavor.resources) {
        QuotaLine& l = LineFor(q, flavor.name, r.name);
        l.nominal = r.nominal_quota.milli();
        if (r.borrowing_limit) l.borrowing_limit = r.borrowing_limit->milli();
        if (r.lending_limit) l.lending_limit = r.lending_limit->milli();
      }
  if (!cq.status) return q;
  q.pending = cq.status->pending_workloads;
  q.admitted = cq.status->admitted_workloads;
  q.reserving = cq.status->reserving_workloads;
  for (const auto& f : cq.status->flavors_usage)
    for (const auto& r : f.resources) {
      QuotaLine& l = LineFor(q, f.name, r.name);
      l.in_use = r.total.milli();
      l.borrowed = r.borrowed.milli();
    }
  for (const auto& f : cq.status->flavors_reservation)
    for (const auto& r : f.resources) LineFor(q, f.name, r.name).reserved = r.total.milli();
  return q;
}

void RenderQueues(const std::vector<QueueSummary>& queues, bool wide, std::ostream& out) {
  Table t =
      wide ? Table({"NAME", "COHORT", "FLAVOR", "RESOURCE", "NOMINAL", "BORROWED", "IN USE", "RESERVED",
                    "BORROWING LIMIT", "LENDING LIMIT", "PENDING", "ADMITTED", "STOP POLICY", "USAGE"})
           : Table({"NAME", "COHORT", "RESOURCE", "NOMINAL", "BORROWED", "IN USE", "PENDING", "ADMITTED", "USAGE"});
  for (const QueueSummary& q : queues) {
    const std::string cohort = q.cohort.empty() ? "<none>" : q.cohort;
    const std::string pending = std::to_string(q.pending), admitted = std::to_string(q.admitted);
    const std::vector<QuotaLine> lines = wide ? q.lines : ByResource(q);
    if (lines.empty()) t.AddRow({q.name, cohort, "<none>"});
    for (const QuotaLine& l : lines) {
      const std::string& r = l.resource;
      const std::string bar = UsageBar(l.in_use, l.nominal);
      if (wide) {
        t.AddRow({q.name, cohort, l.flavor, r, Amount(r, l.nominal), Amount(r, l.borrowed), Amount(r, l.in_use),
                  Amount(r, l.reserved), Limit(r, l.borrowing_limit), Limit(r, l.lending_limit), pending, admitted,
                  q.stop_policy, bar});
      } else {
        t.AddRow({q.name, cohort, r, Amount(r, l.nominal), Amount(r, l.borrowed), Amount(r, l.in_use), pending,
                  admitted, bar});
      }
    }
  }
  t.Render(out);
}

Json QueuesDocument(const std::vector<QueueSummary>& queues) {
  Json items = Json::array();
  for (const QueueSummary& q : queues) {
    Json lines = Json::array();
    for (const QuotaLine& l : q.lines) {
      Json line = {{"flavor", l.flavor},
                   {"resource", l.resource},
                   {"nominal", FormatAmount(l.resource, l.nominal)},
                   {"borrowed", FormatAmount(l.resource, l.borrowed)},
                   {"inUse", FormatAmount(l.resource, l.in_use)},
                   {"reserved", FormatAmount(l.resource, l.reserved)}};
      if (l.borrowing_limit) line["borrowingLimit"] = FormatAmount(l.resource, *l.borrowing_limit);
      if (l.lending_limit) line["lendingLimit"] = FormatAmount(l.resource, *l.lending_limit);
      lines.push_back(std::move(line));
    }
    items.push_back({{"name", q.name},
                     {"cohort", q.cohort},
                     {"pendingWorkloads", q.pending},
                     {"admittedWorkloads", q.admitted},
                     {"reservingWorkloads", q.reserving},
                     {"stopPolicy", q.stop_policy},
                     {"resources", std::move(lines)}});
  }
  return ListDocument("QueueSummaryList", std::move(items));
}

int RunQueues(const Context& ctx) {
  auto cqs = ctx.cluster.ClusterQueues();
  if (!cqs.ok()) return Fail(ctx, cqs.error());
  std::vector<QueueSummary> queues;
  for (const auto& cq : *cqs) queues.push_back(SummarizeQueue(cq));
  std::sort(queues.begin(), queues.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  if (Structured(ctx.inv.output)) {
    WriteDocument(QueuesDocument(queues), ctx.inv.output, ctx.out);
  } else if (queues.empty()) {
    ctx.err << "No resources found\n";
  } else {
    RenderQueues(queues, ctx.inv.output == Output::kWide, ctx.out);
  }
  return 0;
}

}  // namespace rota::kubectl
