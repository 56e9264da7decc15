#include <algorithm>

#include "html.h"
#include "sections.h"

namespace rota::statuspage {
namespace {

std::string Position(size_t p) { return p == 0 ? "-" : Count(p); }

// The estimated start, with how it was made as the tooltip; "none" without an estimate.
std::string EstimateCell(const PendingRow& w) {
  const std::string title = w.estimate_basis.empty() ? "" : " title=\"" + Escape(w.estimate_basis) + "\"";
  if (w.estimated_start.empty()) return "<td class=\"estimate none\"" + title + ">none</td>";
  return "<td class=\"estimate\"" + title + "><time>" + Escape(w.estimated_start) + "</time></td>";
}

std::string PendingRowHtml(const PendingRow& w) {
  return "<tr class=\"pending-row\"><td class=\"num\">" + Position(w.position_in_cluster_queue) +
         "</td><td class=\"num\">" + Position(w.position_in_local_queue) + "</td><td class=\"name\">" +
         Escape(w.namespace_) + "/" + Escape(w.name) + "</td><td>" + Escape(w.cluster_queue) + " / " +
         Escape(w.local_queue) + "</td><td class=\"num\">" + std::to_string(w.priority) + "</td><td>" +
         Escape(w.reason) + "</td><td class=\"message\">" + Escape(w.message) + "</td>" + EstimateCell(w) + "</tr>\n";
}

}  // namespace

std::string RenderPendingSection(const StatusPage& page) {
  std::string out = "<section id=\"pending\">\n<h2>Pending workloads</h2>\n";
  if (page.pending.empty() && page.pending_total == 0) {
    return out + "<p class=\"empty\">Nothing is waiting</p>\n</section>\n";
  }
  const size_t total = std::max(page.pending_total, page.pending.size());
  out += "<p class=\"count\">showing " + Count(page.pending.size()) + " of " + Count(total) + "</p>\n";
  if (page.pending.empty()) return out + "</section>\n";
  out +=
      "<table><thead><tr><th title=\"position in the ClusterQueue\">#CQ</th>"
      "<th title=\"position in the LocalQueue\">#LQ</th><th>Workload</th><th>ClusterQueue / LocalQueue</th>"
      "<th>Priority</th><th>Reason</th><th>Message</th><th>Estimated start</th></tr></thead><tbody>\n";
  for (const PendingRow& w : page.pending) out += PendingRowHtml(w);
  return out + "</tbody></table>\n</section>\n";
}

}  // namespace rota::statuspage
