#include "html.h"
#include "sections.h"
#include "usage_bar.h"

namespace rota::statuspage {
namespace {

// One resource of a queue: its bar first (so bars line up whatever the names' lengths), then
// "in use / nominal" and the flavor and resource.
std::string ResourceLine(const ResourceUsage& u) {
  return "<div class=\"resource\">" + RenderUsageBar(u) + "<span class=\"amount\">" + Escape(Amount(u.in_use, u.unit)) +
         " / " + Escape(Amount(u.nominal, u.unit)) + "</span><span class=\"resource-name\">" + Escape(u.flavor) +
         " · " + Escape(u.resource) + "</span></div>";
}

std::string QueueRowHtml(const QueueRow& q) {
  std::string row = "<tr class=\"queue-row\"><td class=\"name\">" + Escape(q.name);
  if (!q.active) {
    row += " <span class=\"inactive\" title=\"" + Escape(q.inactive_reason) + "\">inactive" +
           (q.inactive_reason.empty() ? "" : ": " + Escape(q.inactive_reason)) + "</span>";
  }
  row += "</td><td>" + (q.cohort.empty() ? std::string("<span class=\"none\">none</span>") : Escape(q.cohort)) +
         "</td><td class=\"usage\">";
  if (q.resources.empty()) row += "<span class=\"none\">no quota</span>";
  for (const ResourceUsage& u : q.resources) row += ResourceLine(u);
  return row + "</td><td class=\"num\">" + Count(q.admitted) + "</td><td class=\"num\">" + Count(q.pending) +
         "</td></tr>\n";
}

}  // namespace

std::string RenderQueuesSection(const StatusPage& page) {
  std::string out = "<section id=\"queues\">\n<h2>ClusterQueues</h2>\n";
  if (page.queues.empty()) return out + "<p class=\"empty\">No ClusterQueues</p>\n</section>\n";
  out +=
      "<p class=\"legend\"><span class=\"swatch used\"></span>in use within nominal quota "
      "<span class=\"swatch borrowed\"></span>borrowed beyond nominal "
      "<span class=\"swatch headroom\"></span>borrowing limit</p>\n"
      "<table><thead><tr><th>ClusterQueue</th><th>Cohort</th><th>Usage / nominal</th><th>Admitted</th>"
      "<th>Pending</th></tr></thead><tbody>\n";
  for (const QueueRow& q : page.queues) out += QueueRowHtml(q);
  return out + "</tbody></table>\n</section>\n";
}

}  // namespace rota::statuspage
