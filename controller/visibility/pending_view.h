#pragma once

// What the visibility API, the status page and `kubectl rota why` read of the queue: every
// pending workload a pass looked at (but deactivated ones), in the engine's scheduling order, with its positions in its
// ClusterQueue and LocalQueue (0: the head, as Kueue's positionInClusterQueue), and what a
// start-time forecast needs (the pass's snapshot and each workload's expected run time). Made by
// the scheduling loop from a pass, read by other threads: immutable once made.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "rota/admission/engine.h"
#include "rota/api/kueue.h"
#include "rota/api/snapshot.h"
#include "visibility/run_times.h"

namespace rota::visibility {

struct PendingEntry {
  std::string ns, name, uid, created;  // created: RFC 3339
  std::string local_queue;             // its name, in `ns`
  std::string cluster_queue;
  int32_t priority = 0;
  int32_t position_in_cluster_queue = -1;
  int32_t position_in_local_queue = -1;
  std::string reason, message;  // why it waits (Kueue's words and a sentence)
  api::Json owner_references = api::Json::array();
  size_t snapshot_index = 0;  // in PendingView::snapshot.workloads
};

struct PendingView {
  int64_t now = 0;                    // the pass's wall time, Unix seconds
  uint64_t version = 0;               // grows with every view made
  std::vector<PendingEntry> entries;  // scheduling order
  // Indices of `entries`, in order, by ClusterQueue name and by LocalQueue "namespace/name".
  std::map<std::string, std::vector<uint32_t>> by_cluster_queue;
  std::map<std::string, std::vector<uint32_t>> by_local_queue;
  // For forecasts: the pass's snapshot, and per workload of it the expected run time.
  admission::Snapshot snapshot;
  std::vector<RunTimeEstimate> run_times;
};

// The view of a pass over `builder`'s snapshot that decided `d`.
PendingView MakePendingView(const api::SnapshotBuilder& builder, const admission::Decisions& d,
                            const RunTimeHistory& history, int64_t now, uint64_t version);

}  // namespace rota::visibility
