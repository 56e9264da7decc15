#pragma once

// waitForPodsReady's timing (Kueue's semantics): an admitted gang whose pods are not all ready
// within the timeout of its admission is evicted and requeued after an exponential backoff, or
// deactivated once it has been requeued more than the backoff limit allows. Pure functions of
// the Workload, the configuration and the wall time (seconds since the epoch).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "rota/api/kueue.h"
#include "rota/api/snapshot.h"
#include "run_config.h"

namespace rota::controller {

// Seconds until the PodsReady timeout of the admitted Workload `wl` is up (0 or less: it is).
int64_t PodsReadySecondsLeft(const api::Workload& wl, std::chrono::seconds timeout, int64_t now);

// How long the `count`th eviction for the timeout waits before the Workload is requeued:
// backoffBaseSeconds doubled for each earlier one, at most backoffMaxSeconds.
int64_t RequeueBackoffSeconds(int32_t count, const RunConfig& config);

struct PodsReadyEviction {
  int32_t count = 0;        // evictions for the timeout, this one included
  bool deactivate = false;  // past the backoff limit: spec.active goes false
  std::string message;
  api::Json status;  // the merge patch's status: conditions and requeueState
};
// The eviction of `wl` for the timeout at `now`. The Workload keeps its admission, as a preempted
// one does: the Job integration suspends the Job and gives the quota back once its pods are gone
// (jobs/quota_release.h), and the backoff then runs until requeueAt.
PodsReadyEviction EvictForPodsReadyTimeout(const api::Workload& wl, const RunConfig& config, int64_t now);

}  // namespace rota::controller
