#pragma once

// `kubectl rota top`: the resources admitted workloads hold (status.admission's resourceUsage),
// by namespace (the team), ClusterQueue or LocalQueue; most GPUs first.

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rota/api/kueue.h"
#include "rota/kubectl/cli.h"
#include "rota/kubectl/resources.h"

namespace rota::kubectl {

struct UsageGroup {
  std::string name;  // the namespace, ClusterQueue, or LocalQueue as "ns/name"
  int32_t workloads = 0;
  Amounts usage;
  double gpus = 0;
};

// The groups, most GPU-equivalents first, then by name. Only workloads that hold quota count.
std::vector<UsageGroup> TallyUsage(const std::vector<api::Workload>& workloads, GroupBy by);

// Columns: GPU-equivalents, then each GPU resource, cpu and memory (`wide`: every resource).
void RenderUsage(const std::vector<UsageGroup>& groups, GroupBy by, bool wide, std::ostream& out);
nlohmann::json UsageDocument(const std::vector<UsageGroup>& groups, GroupBy by);

}  // namespace rota::kubectl
