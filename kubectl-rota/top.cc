#include "rota/kubectl/top.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "rota/kubectl/context.h"
#include "rota/kubectl/output.h"
#include "rota/kubectl/table.h"
#include "rota/kubectl/workload_facts.h"

namespace rota::kubectl {
namespace {

using Json = nlohmann::json;

std::string GroupOf(const api::Workload& w, GroupBy by) {
  switch (by) {
    case GroupBy::kNamespace:
      return w.metadata.namespace_;
    case GroupBy::kClusterQueue:
      return w.status->admission->cluster_queue;
    case GroupBy::kLocalQueue:
      return w.metadata.namespace_ + "/" + w.spec.queue_name;
  }
  return "";
}

const char* GroupHeader(GroupBy by) {
  return by == GroupBy::kNamespace ? "NAMESPACE" : by == GroupBy::kClusterQueue ? "CLUSTERQUEUE" : "LOCALQUEUE";
}

const char* GroupField(GroupBy by) {
  return by == GroupBy::kNamespace ? "namespace" : by == GroupBy::kClusterQueue ? "clusterQueue" : "localQueue";
}

std::string Gpus(double gpus) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", gpus);
  return text;
}

}  // namespace

std::vector<UsageGroup> TallyUsage(const std::vector<api::Workload>& workloads, GroupBy by) {
  std::map<std::string, UsageGroup> groups;
  for (const api::Workload& w : workloads) {
    if (!HoldsQuota(w)) continue;
    UsageGroup& g = groups[GroupOf(w, by)];
    g.name = GroupOf(w, by);
    ++g.workloads;
    AddAmounts(g.usage, UsageOf(*w.status->admission));
  }
  std::vector<UsageGroup> out;
  for (auto& [name, g] : groups) {
    g.gpus = GpuEquivalents(g.usage);
    out.push_back(std::move(g));
  }
  std::stable_sort(out.begin(), out.end(), [](const UsageGroup& a, const UsageGroup& b) { return a.gpus > b.gpus; });
  return out;
}

void RenderUsage(const std::vector<UsageGroup>& groups, GroupBy by, bool wide, std::ostream& out) {
  std::set<std::string> names;
  for (const UsageGroup& g : groups)
    for (const auto& [r, milli] : g.usage)
      if (wide || IsGpuResource(r) || r == "cpu" || r == "memory") names.insert(r);
  const std::vector<std::string> resources = OrderResources(names);
  std::vector<std::string> headers = {GroupHeader(by), "WORKLOADS", "GPU-EQ"};
  headers.insert(headers.end(), resources.begin(), resources.end());
  Table t(headers);
  for (const UsageGroup& g : groups) {
    std::vector<std::string> row = {g.name, std::to_string(g.workloads), Gpus(g.gpus)};
    for (const std::string& r : resources) row.push_back(g.usage.count(r) ? FormatAmount(r, g.usage.at(r)) : "0");
    t.AddRow(std::move(row));
  }
  t.Render(out);
}

Json UsageDocument(const std::vector<UsageGroup>& groups, GroupBy by) {
  Json items = Json::array();
  for (const UsageGroup& g : groups) {
    Json usage = Json::object();
    for (const auto& [r, milli] : g.usage) usage[r] = FormatAmount(r, milli);
    items.push_back(
        {{GroupField(by), g.name}, {"workloads", g.workloads}, {"gpuEquivalents", g.gpus}, {"usage", usage}});
  }
  return ListDocument("UsageList", std::move(items));
}

int RunTop(const Context& ctx) {
  auto workloads = ctx.cluster.Workloads(ctx.ListNamespace());
  if (!workloads.ok()) return Fail(ctx, workloads.error());
  const auto groups = TallyUsage(*workloads, ctx.inv.by);
  if (Structured(ctx.inv.output)) {
    WriteDocument(UsageDocument(groups, ctx.inv.by), ctx.inv.output, ctx.out);
  } else if (groups.empty()) {
    const std::string ns = ctx.ListNamespace();
    ctx.err << (ns.empty() ? std::string("No admitted workloads found\n")
                           : "No admitted workloads found in " + ns + " namespace.\n");
  } else {
    RenderUsage(groups, ctx.inv.by, ctx.inv.output == Output::kWide, ctx.out);
  }
  return 0;
}

}  // namespace rota::kubectl
