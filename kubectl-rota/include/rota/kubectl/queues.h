#pragma once

// `kubectl rota queues`: each ClusterQueue's quota and use, from its spec.resourceGroups and
// status (flavorsUsage for what admitted workloads use, flavorsReservation for what is reserved).

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rota/api/kueue.h"

namespace rota::kubectl {

// One resource of one flavor of a ClusterQueue, in milli-units.
struct QuotaLine {
  std::string flavor, resource;
  int64_t nominal = 0;
  int64_t in_use = 0;    // status.flavorsUsage total
  int64_t borrowed = 0;  // status.flavorsUsage borrowed
  int64_t reserved = 0;  // status.flavorsReservation total
  std::optional<int64_t> borrowing_limit, lending_limit;
};

struct QueueSummary {
  std::string name, cohort;
  int32_t pending = 0, admitted = 0, reserving = 0;
  std::string stop_policy;       // "None", "Hold", "HoldAndDrain"
  std::vector<QuotaLine> lines;  // in resource-group and flavor order
};

QueueSummary SummarizeQueue(const api::ClusterQueue& cq);

// The table: one row per queue and resource (flavors added up), GPUs only for a queue that has
// any; `wide`: one row per flavor and resource, every resource, with reservations and limits.
void RenderQueues(const std::vector<QueueSummary>& queues, bool wide, std::ostream& out);

// The QueueSummaryList document.
nlohmann::json QueuesDocument(const std::vector<QueueSummary>& queues);

}  // namespace rota::kubectl
