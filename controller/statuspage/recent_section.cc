#include "html.h"
#include "sections.h"

namespace rota::statuspage {
namespace {

// Kinds a class of their own for colour: "kind-admitted", "kind-preempted", ...; others "kind-other".
std::string KindClass(const std::string& kind) {
  if (kind == "Admitted") return "kind-admitted";
  if (kind == "Preempted") return "kind-preempted";
  if (kind == "Evicted") return "kind-evicted";
  if (kind == "CheckpointRequested") return "kind-checkpoint";
  return "kind-other";
}

std::string ActivityRowHtml(const ActivityRow& a) {
  return "<tr class=\"activity-row\"><td><time>" + Escape(a.time) + "</time></td><td class=\"" + KindClass(a.kind) +
         "\">" + Escape(a.kind) + "</td><td class=\"name\">" + Escape(a.workload) + "</td><td>" +
         Escape(a.cluster_queue) + "</td><td class=\"message\">" + Escape(a.detail) + "</td></tr>\n";
}

}  // namespace

std::string RenderRecentSection(const StatusPage& page) {
  std::string out = "<section id=\"recent\">\n<h2>Recent admissions and preemptions</h2>\n";
  if (page.recent.empty()) return out + "<p class=\"empty\">No recent admissions or preemptions</p>\n</section>\n";
  out +=
      "<table><thead><tr><th>Time</th><th>Event</th><th>Workload</th><th>ClusterQueue</th><th>Detail</th>"
      "</tr></thead><tbody>\n";
  for (const ActivityRow& a : page.recent) out += ActivityRowHtml(a);
  return out + "</tbody></table>\n</section>\n";
}

}  // namespace rota::statuspage
