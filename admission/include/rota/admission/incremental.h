#pragma once

// An engine that keeps its cluster between passes and takes changes as they come, so that a pass
// costs what changed since the last one rather than the whole backlog. Its decisions are exactly
// those of Schedule() on a snapshot of the same cluster (same admissions in the same order, same
// victims, same pending reasons, messages and positions): tests/admission drive random changes
// through both and compare every pass.
//
// How: ClusterQueues that share no cohort tree never affect each other's decisions, so the cluster
// is cut into independent parts (the queues of one cohort tree, or one queue without a cohort).
// A part whose inputs did not change keeps its last decisions. A part that admitted and preempted
// nothing last time, and since gained or lost only waiting workloads of BestEffortFIFO queues,
// has its new workloads decided against its unchanged quota (its old ones would be decided as
// before: nothing they see has changed); only when one of them is admitted is the part decided
// again whole. Any other change decides the part again whole.
//
// Every pass hands back all waiting workloads in scheduling order. The engine keeps the order it
// handed back last time and merges into it only the workloads that entered a part's list since
// (new, given back, or changed), so that a pass is one walk over that order rather than a merge
// of every part's list.
//
// What is decided on the whole cluster every pass (as Schedule does), because it ties parts
// together: fair sharing, budget pools and admission fair sharing. A change limit that the
// parts' changes reach also takes the whole-cluster pass (its decisions stop partway).
//
// Pure and deterministic like Schedule: no I/O, clock, logging or randomness. One thread.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rota/admission/engine.h"
#include "rota/admission/snapshot.h"

namespace rota::admission {

class IncrementalScheduler {
 public:
  IncrementalScheduler();
  ~IncrementalScheduler();
  IncrementalScheduler(const IncrementalScheduler&) = delete;
  IncrementalScheduler& operator=(const IncrementalScheduler&) = delete;

  // The flavors, cohorts and ClusterQueues, all at once (a change of any is rare: the next pass
  // decides every part again).
  void SetQueues(std::vector<FlavorSpec> flavors, std::vector<CohortSpec> cohorts,
                 std::vector<ClusterQueueSpec> cluster_queues);
  // Snapshot's cluster-wide settings; any of them in use makes every pass a whole-cluster one.
  void SetFairSharing(bool on);
  void SetBudgetPools(std::vector<BudgetPool> pools);
  void SetAdmissionFairSharing(AdmissionFairSharing fair_sharing);
  // Snapshot::now for the next passes.
  void SetNow(int64_t now);

  // Adds a workload, or replaces the one with the same key (pending or admitted, as `w` says).
  // Returns its slot: the number its decisions carry as their index (Pass), the same as before
  // when it replaces one.
  uint32_t Upsert(WorkloadSpec w);
  // Forgets a workload (finished or deleted); a key not known is ignored.
  void Remove(std::string_view key);

  // The workload with this key, or null.
  const WorkloadSpec* Find(std::string_view key) const;
  size_t size() const;

  // Decides as Schedule(snapshot, workspace, limits) would on a snapshot of everything set above.
  // The decisions' views (pending keys, reasons, messages) are valid until the next call of any
  // method but the const ones. AdmitDecision::index and PendingDecision::index are not places in
  // a snapshot here: they are the workload's slot, a number it keeps while it is known (Slot()).
  Decisions Pass(const ScheduleLimits& limits = {});

  // Takes back decisions that are no longer needed, to hold the next pass's pending list (as
  // Workspace::Recycle: a list of 100,000 is megabytes, which a new pass would otherwise touch
  // afresh).
  void Recycle(Decisions&& decisions);

  // The workload in `slot` (a PendingDecision::index), or null.
  const WorkloadSpec* Slot(size_t slot) const;

  // What the last pass did, for benchmarks and tests.
  struct PassStats {
    size_t parts = 0;     // independent parts of the cluster
    size_t reused = 0;    // parts whose decisions were kept
    size_t new_only = 0;  // parts where only new waiting workloads were decided
    size_t decided = 0;   // parts decided again whole
    bool whole = false;   // the pass was decided on the whole cluster
    // The waiting workloads were handed back by the last pass's order, with those that entered
    // a part merged in (rather than by merging every part's list again).
    bool followed = false;
  };
  const PassStats& last_pass() const;

  struct State;  // (defined by the implementation)

 private:
  std::unique_ptr<State> state_;
};

}  // namespace rota::admission
