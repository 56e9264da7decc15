#include "rota/api/snapshot.h"
#include "rota/kubectl/context.h"
#include "rota/kubectl/durations.h"
#include "rota/kubectl/output.h"
#include "rota/kubectl/preempted.h"
#include "rota/kubectl/resources.h"
#include "rota/kubectl/table.h"

namespace rota::kubectl {
namespace {

using Json = nlohmann::json;

std::string Or(const std::string& text, const char* otherwise) { return text.empty() ? otherwise : text; }
std::string TimeText(int64_t t) { return t ? api::FormatTime(t) : "<unknown>"; }
std::string LostText(const std::optional<double>& gpu_hours) {
  return gpu_hours ? FormatGpuHours(*gpu_hours) : "<unknown>";
}

std::string GpusText(double gpus) {
  std::string text = FormatGpuHours(gpus);  // (two decimals, then trimmed: "4", "0.25")
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

// The columns: NAMESPACE with -A; the Job, the times and the message with -o wide.
std::vector<std::string> Headers(bool all_namespaces, bool wide) {
  std::vector<std::string> h;
  if (all_namespaces) h.push_back("NAMESPACE");
  for (const char* c : {"WORKLOAD", "CLUSTERQUEUE", "PREEMPTED BY", "REASON", "AGE", "GPUS", "LOST GPU-H"})
    h.push_back(c);
  if (wide)
    for (const char* c : {"JOB", "TIME", "ADMITTED", "CHECKPOINTED", "MESSAGE"}) h.push_back(c);
  return h;
}

}  // namespace

void RenderPreemptions(const std::vector<Preemption>& list, bool all_namespaces, bool wide, int64_t now,
                       std::ostream& out) {
  Table t(Headers(all_namespaces, wide));
  for (const Preemption& p : list) {
    std::vector<std::string> row;
    if (all_namespaces) row.push_back(p.ns);
    for (std::string cell :
         {p.workload, Or(p.cluster_queue, "<unknown>"), Or(p.preemptor, "<unknown>"), Or(p.reason, "<unknown>"),
          HumanDuration(now - p.at), GpusText(p.gpus), LostText(p.gpu_hours_lost)})
      row.push_back(std::move(cell));
    if (wide) {
      for (std::string cell : {Or(p.job, "<none>"), TimeText(p.at), TimeText(p.admitted_at),
                               p.checkpointed_at ? TimeText(p.checkpointed_at) : "<none>", p.message})
        row.push_back(std::move(cell));
    }
    t.AddRow(std::move(row));
  }
  t.Render(out);
}

Json PreemptionsDocument(const std::vector<Preemption>& list) {
  Json items = Json::array();
  for (const Preemption& p : list) {
    Json item = {{"namespace", p.ns},
                 {"workload", p.workload},
                 {"job", p.job},
                 {"clusterQueue", p.cluster_queue},
                 {"preemptor", p.preemptor},
                 {"reason", p.reason},
                 {"message", p.message},
                 {"time", TimeText(p.at)},
                 {"gpus", p.gpus}};
    if (p.admitted_at) item["admittedAt"] = TimeText(p.admitted_at);
    if (p.checkpointed_at) item["checkpointedAt"] = TimeText(p.checkpointed_at);
    item["gpuHoursLost"] = p.gpu_hours_lost ? Json(*p.gpu_hours_lost) : Json();
    items.push_back(std::move(item));
  }
  return ListDocument("PreemptionList", std::move(items));
}

int RunPreempted(const Context& ctx) {
  const std::string ns = ctx.ListNamespace();
  auto workloads = ctx.cluster.Workloads(ns);
  if (!workloads.ok()) return Fail(ctx, workloads.error());
  auto events = ctx.cluster.WorkloadEvents(ns);
  if (!events.ok()) return Fail(ctx, events.error());
  auto lqs = ctx.cluster.LocalQueues(ns);
  if (!lqs.ok()) return Fail(ctx, lqs.error());
  const int64_t since = ctx.inv.since_seconds > 0 ? ctx.now - ctx.inv.since_seconds : 0;
  const auto list = CollectPreemptions(*workloads, *events, *lqs, since);
  if (Structured(ctx.inv.output)) {
    WriteDocument(PreemptionsDocument(list), ctx.inv.output, ctx.out);
  } else if (list.empty()) {
    ctx.err << (ns.empty() ? std::string("No preemptions found\n") : "No preemptions found in " + ns + " namespace.\n");
  } else {
    RenderPreemptions(list, ctx.inv.all_namespaces, ctx.inv.output == Output::kWide, ctx.now, ctx.out);
  }
  return 0;
}

}  // namespace rota::kubectl
