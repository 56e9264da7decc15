#pragma once
// The status page `rota run` serves on its metrics port at `/`: queues with usage bars against
// quota, pending workloads with their positions and forecasts, recent admissions and preemptions.
//
// A pure renderer: the caller fills a StatusPage with plain values (from the controller's cache)
// and serves the string RenderStatusPage returns. No I/O, no clock, no logging. The page is one
// self-contained HTML5 document: inline CSS and SVG, no script, no external URL, and a
// <meta http-equiv="refresh"> so a browser reloads it every refresh_seconds.
//
// Every string of the model is HTML-escaped where it is written (names come from users).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace rota::statuspage {

// One resource of one flavor of a ClusterQueue's quota, in display units (GPUs, GiB, ...).
struct ResourceUsage {
  std::string flavor;    // ResourceFlavor name, e.g. "a100-80gb"
  std::string resource;  // e.g. "nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "memory"
  std::string unit;      // appended to the amounts shown: "" for counts, "Gi" for memory
  double nominal = 0;
  std::optional<double> borrowing_limit;  // absent: may borrow what the cohort lends
  double in_use = 0;                      // admitted usage; beyond nominal is borrowed
};

struct QueueRow {
  std::string name;
  std::string cohort;  // empty: not in a cohort
  std::vector<ResourceUsage> resources;
  size_t pending = 0;
  size_t admitted = 0;
  bool active = true;
  std::string inactive_reason;  // shown when !active, e.g. "FlavorNotFound"
};

// A pending workload; positions are 1-based and 0 means unknown.
struct PendingRow {
  std::string namespace_;
  std::string name;
  std::string cluster_queue;
  std::string local_queue;
  int priority = 0;
  size_t position_in_cluster_queue = 0;
  size_t position_in_local_queue = 0;
  std::string reason;           // e.g. "Pending", "QuotaReserved"
  std::string message;          // the condition's message
  std::string estimated_start;  // RFC 3339; empty: no estimate ("none" is shown)
  std::string estimate_basis;   // how the estimate was made, shown as the cell's tooltip
};

// One recent decision, newest first in StatusPage::recent.
struct ActivityRow {
  std::string time;      // RFC 3339
  std::string kind;      // "Admitted", "Preempted", "Evicted", "CheckpointRequested"
  std::string workload;  // "namespace/name"
  std::string cluster_queue;
  std::string detail;  // e.g. "preempted by ns/x: InCohortReclamation"
};

struct StatusPage {
  std::string generated_at;  // RFC 3339
  int refresh_seconds = 5;   // values below 1 are rendered as 1
  bool is_leader = true;     // false: a standby replica, whose positions and forecasts may lag
  std::vector<QueueRow> queues;
  std::vector<PendingRow> pending;  // the first of the pending workloads, in order
  size_t pending_total = 0;         // all pending workloads; below pending.size() counts as pending.size()
  std::vector<ActivityRow> recent;
};

// The whole document. Sections carry stable ids for tests and scrapers: "queues" (rows of
// class "queue-row", one <svg class="usage-bar"> per resource), "pending" (rows of class
// "pending-row") and "recent" (rows of class "activity-row").
std::string RenderStatusPage(const StatusPage& page);

}  // namespace rota::statuspage
