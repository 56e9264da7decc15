#pragma once

// stopPolicy HoldAndDrain: the admitted workloads of a stopped ClusterQueue or LocalQueue are
// evicted (Hold lets them run; both stop new admissions, which the engine sees to).

#include <functional>
#include <string>
#include <vector>

#include "rota/admission/engine.h"
#include "rota/api/snapshot.h"
#include "scheduling/workload_status.h"

namespace rota::controller {

struct Drained {
  std::string key;            // the workload, "namespace/name"
  std::string cluster_queue;  // that admitted it
  std::string reason;         // ClusterQueueStopped or LocalQueueStopped
  WorkloadWrite write;
};

// The evictions that queues with HoldAndDrain call for, of the workloads admitted in the built
// snapshot that this pass's decisions `d` leave alone. A workload for which `has_pods` holds is
// evicted keeping its quota until its pods are gone; once so evicted, it is left alone.
std::vector<Drained> DrainStoppedQueues(const api::ClusterState& state, const api::SnapshotBuilder& builder,
                                        const admission::Decisions& d, const std::string& now,
                                        const std::function<bool(const api::Workload&)>& has_pods);

}  // namespace rota::controller
