#pragma once

// The status page's model (statuspage/status_page.h) from what rota holds: ClusterQueues from
// the cache (quota from their spec, usage and counts from the status rota writes), pending
// workloads with positions and forecasts from the visibility board, recent decisions from the
// publisher.

#include <string>

#include "cache/cluster_cache.h"
#include "status_page.h"
#include "visibility/board.h"
#include "visibility/publisher.h"

namespace rota::visibility {

struct StatusSources {
  const controller::ClusterCache& cache;
  VisibilityBoard& board;
  const ViewPublisher& publisher;
};

// At most `max_pending` pending rows; `leader`: whether this replica schedules.
statuspage::StatusPage MakeStatusPage(const StatusSources& s, bool leader, int64_t now, size_t max_pending = 200);

}  // namespace rota::visibility
