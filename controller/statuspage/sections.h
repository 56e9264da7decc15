#pragma once
// The status page's three sections (private to rota_statuspage), each a <section> with a stable
// id holding a table, or a sentence saying it is empty. Every model string is escaped.

#include <string>

#include "status_page.h"

namespace rota::statuspage {

// <section id="queues">: one <tr class="queue-row"> per ClusterQueue, a usage bar per resource.
std::string RenderQueuesSection(const StatusPage& page);

// <section id="pending">: one <tr class="pending-row"> per pending workload given, and how many
// of pending_total are shown.
std::string RenderPendingSection(const StatusPage& page);

// <section id="recent">: one <tr class="activity-row"> per recent admission or preemption.
std::string RenderRecentSection(const StatusPage& page);

}  // namespace rota::statuspage
