#pragma once

// stopPolicy HoldAndDrain: the admitted workloads of a stopped ClusterQueue or LocalQueue are
// evicted (Hold lets them run; both stop new admissions, which the engine sees to).

#include <chrono>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "rota/admission/engine.h"
#include "rota/api/snapshot.h"
#include "rota/apiclient/clock.h"
#include "scheduling/workload_status.h"

namespace rota::controller {

struct Drained {
  std::string key;            // the workload, "namespace/name"
  std::string cluster_queue;  // that admitted it
  std::string reason;         // ClusterQueueStopped or LocalQueueStopped
  WorkloadWrite write;
  bool keeps_quota = false;  // until its pods are gone
};

// The evictions that queues with HoldAndDrain call for, of the workloads admitted in the built
// snapshot that this pass's decisions `d` leave alone. A workload for which `has_pods` holds is
// evicted keeping its quota until its pods are gone; once so evicted, it is left alone.
std::vector<Drained> DrainStoppedQueues(const api::ClusterState& state, const api::SnapshotBuilder& builder,
                                        const admission::Decisions& d, const std::string& now,
                                        const std::function<bool(const api::Workload&)>& has_pods);

// Drains written with the quota kept, until the cache shows them: the passes in between would
// find the workload still admitted and not evicted, and drain it again.
class DrainsInFlight {
 public:
  using TimePoint = apiclient::Clock::TimePoint;
  // Forgets the drains the cache shows (evicted, or no longer admitted or present, by
  // `object_of`) and those written more than `retry_after` ago (the write may have failed: the
  // drain is made again); then takes out of `drained` the drains still in flight, and remembers
  // the new ones that keep their quota.
  void Filter(std::vector<Drained>& drained, const std::function<const api::Workload*(const std::string&)>& object_of,
              TimePoint now, std::chrono::seconds retry_after = std::chrono::seconds(10));

 private:
  std::unordered_map<std::string, TimePoint> in_flight_;
};

}  // namespace rota::controller
