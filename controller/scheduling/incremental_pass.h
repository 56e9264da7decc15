#pragma once

// The scheduling loop's engine: the snapshot builder's entries fed to an IncrementalScheduler by
// what changed since the last pass, so that a pass costs what changed rather than the whole
// backlog. Its decisions are Schedule's on the builder's snapshot, with indices that are places in
// that snapshot, as Schedule's are.
//
// What changed is told by the builder's stamps (SnapshotBuilder::StampOf): an entry whose stamp is
// the one fed last is the same entry, wherever the builder moved it; any other entry is fed again,
// and an entry whose stamp is gone and whose key the builder no longer has is removed. Flavors,
// cohorts and ClusterQueues are fed again when they differ from those fed last.
//
// Fair sharing, budget pools and admission fair sharing tie the whole cluster together, and the
// engine decides every such pass whole. While any of them is in use, passes call Schedule on the
// builder's snapshot directly (which reads it in place), and the engine is fed afresh afterwards.
// Not thread-safe: the loop's thread alone uses it.

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "rota/admission/engine.h"
#include "rota/admission/incremental.h"
#include "rota/api/snapshot.h"

namespace rota::controller {

class IncrementalPass {
 public:
  IncrementalPass();
  IncrementalPass(const IncrementalPass&) = delete;
  IncrementalPass& operator=(const IncrementalPass&) = delete;

  // Decides as admission::Schedule(builder.snapshot(), workspace, limits) would. The decisions'
  // views are valid until the next Decide or Recycle, and while the builder is not built again.
  admission::Decisions Decide(const api::SnapshotBuilder& builder, const admission::ScheduleLimits& limits);
  // Takes back decisions that are no longer needed (their memory holds the next pass's).
  void Recycle(admission::Decisions&& decisions);

  // What the last Decide did, for the pass's debug log.
  struct Stats {
    bool whole = false;  // Schedule on the snapshot (a cluster-wide setting is in use)
    size_t fed = 0;      // entries fed to the engine (new or changed)
    size_t removed = 0;  // entries the engine forgot
    admission::IncrementalScheduler::PassStats engine;
  };
  const Stats& last() const { return stats_; }

 private:
  static bool TiesTheCluster(const admission::Snapshot& s);
  void Forget();  // the engine and what was fed to it, to be fed afresh
  void FeedQueues(const admission::Snapshot& s);
  void FeedWorkloads(const api::SnapshotBuilder& builder);
  void RemoveGone(const api::SnapshotBuilder& builder, const std::vector<uint64_t>& gone);

  std::unique_ptr<admission::IncrementalScheduler> engine_;
  admission::Workspace workspace_;  // for Schedule on the snapshot
  bool fed_ = false;                // the engine holds the cluster as of the last pass
  std::vector<admission::FlavorSpec> flavors_;
  std::vector<admission::CohortSpec> cohorts_;
  std::vector<admission::ClusterQueueSpec> queues_;
  std::vector<uint64_t> stamp_at_;                  // by snapshot place: the stamp of the entry fed from it
  std::unordered_map<uint64_t, uint32_t> slot_of_;  // by stamp fed: the engine's slot of that entry
  std::vector<uint32_t> place_of_;                  // by engine slot: its entry's place in the snapshot
  Stats stats_;
};

}  // namespace rota::controller
