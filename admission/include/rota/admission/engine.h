#pragma once

// The admission engine: one scheduling pass over a Snapshot, returning decisions. Pure and
// deterministic: no I/O, clock, logging or randomness; the same snapshot (in any order of its
// lists) gives the same decisions, and so does one whose `order` is given (it spares the sort).
//
// Semantics (Kueue's documented behaviour, see docs/engine.md):
// - quota per ClusterQueue, flavor and resource; nominal quota is guaranteed; within a cohort
//   tree a queue borrows unused quota up to its borrowingLimit and lends at most its
//   lendingLimit; a Cohort's own quota is shared by its subtree;
// - pending workloads are considered by priority (higher first), then creation time, then key;
//   with fair sharing, queues of a cohort take turns by dominant resource share / weight;
// - StrictFIFO: a workload that does not fit blocks the rest of its queue; BestEffortFIFO does not;
// - every workload that fits is admitted in the same pass (not one head per queue per pass);
// - a workload that needs room gets a minimal set of victims (preemption), is admitted at once
//   as if they had released their quota, and the victims are reported as preempted;
// - all pod sets of a workload are admitted together or none are (gang at the quota level).

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rota/admission/snapshot.h"

namespace rota::admission {

struct AdmitDecision {
  std::string workload;  // key
  std::string cluster_queue;
  std::vector<PodSetAdmission> pod_sets;
  bool borrowing = false;  // uses quota beyond its queue's nominal quota
  // Admitted in the pass's first round (within its ClusterQueue's nominal quota, without
  // borrowing or preempting), which comes before the rest in admission order.
  bool first_round = false;
  size_t index = 0;  // the workload's place in Snapshot::workloads (or workload_refs)
};

enum class PreemptionReason {
  kInClusterQueue,
  kInCohortReclamation,
  kInCohortReclaimWhileBorrowing,
  kInCohortFairSharing,
};
const char* ToString(PreemptionReason reason);

struct PreemptDecision {
  std::string workload;  // the victim
  std::string preemptor;
  std::string cluster_queue;  // the victim's
  PreemptionReason reason = PreemptionReason::kInClusterQueue;
};

// A pending decision's text is not copied per workload (a deep queue of look-alikes shares one
// reason): its views point into the Snapshot the decisions were made from and into the
// Decisions' own `texts`, so they are valid while both are (and the snapshot is unchanged).
struct PendingDecision {
  std::string_view workload;  // its key
  std::string_view reason;    // Kueue's words: WaitingForQuota, NoMatchingFlavor, ExceedsMaxQuota, ...
  std::string_view message;   // a sentence a person can act on
  size_t index = 0;           // the workload's position in Snapshot::workloads
  // Its place among its ClusterQueue's pending workloads in scheduling order (0: the head), as
  // Kueue's positionInClusterQueue; -1 when it names no ClusterQueue that exists.
  int32_t position = -1;
};

struct Decisions {
  std::vector<AdmitDecision> admitted;     // newly admitted in this pass, in admission order
  std::vector<PreemptDecision> preempted;  // in the order they were chosen
  // Every pending workload not admitted, in scheduling order (priority, then creation time, then
  // key): a queue's head comes first. A pass that stopped at its change limit (ScheduleLimits)
  // lists only the workloads it considered.
  std::vector<PendingDecision> pending;
  // Pending workloads a pass that stopped at its change limit did not consider: neither admitted
  // nor among `pending`. 0 when the pass went through them all.
  size_t not_considered = 0;
  // The text the pending decisions' views point into (a deque: its strings stay where they are as
  // it grows, and when the Decisions are moved). A copy would point into the original's, so
  // Decisions move but do not copy.
  std::deque<std::string> texts;

  Decisions() = default;
  Decisions(Decisions&&) = default;
  Decisions& operator=(Decisions&&) = default;
  Decisions(const Decisions&) = delete;
  Decisions& operator=(const Decisions&) = delete;
};

// What one pass may decide.
struct ScheduleLimits {
  // The pass stops considering workloads once its admissions and evictions together reach this
  // many (0: no limit). What it decided up to there is what a pass without the limit decides
  // first (a pass decides in admission order and never goes back on a decision), and the last
  // admission may take the total past the limit by its victims; KeepFirstAdmissions trims to
  // the limit. A controller whose writer takes a few hundred changes at a time spares the pass
  // the thousands it would decide, hand over none of, and decide again next time.
  size_t max_changes = 0;
};

// Runs one scheduling pass.
Decisions Schedule(const Snapshot& snapshot);

// Memory that passes over the same cluster reuse: the pass's arrays of one entry per workload,
// and the pending list of Decisions handed back with Recycle. Without it each pass allocates
// those afresh; with tens of thousands of workloads they are megabytes, which the allocator
// returns to the system when the pass frees them, so that the next pass takes a page fault for
// every 4 KiB it touches again. An array a pass used under a quarter of (beyond a few thousand
// entries) is let go, so that a drained burst's memory is not kept for good. A pass's decisions
// do not depend on what the workspace held before. One pass at a time per workspace.
class Workspace {
 public:
  Workspace();
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  // Takes back decisions that are no longer needed, to hold the next pass's pending list.
  void Recycle(Decisions&& decisions);

  struct Buffers;  // (defined by the engine)

 private:
  friend Decisions Schedule(const Snapshot& snapshot, Workspace& workspace, const ScheduleLimits& limits);
  std::unique_ptr<Buffers> buffers_;
};

// Runs one scheduling pass in `workspace`'s memory; decides as Schedule(snapshot) does, up to
// `limits`.
Decisions Schedule(const Snapshot& snapshot, Workspace& workspace, const ScheduleLimits& limits = {});

// Gives workloads their WorkloadSpec::shape: one number per distinct shape, the same for as long
// as the table lives, so a snapshot kept from pass to pass numbers a workload once. Holds one
// short text per distinct shape; past `max_shapes` of them, a new shape gets 0 (the engine then
// compares pod sets for it as it would without a number).
class ShapeTable {
 public:
  explicit ShapeTable(size_t max_shapes = 65536) : max_shapes_(max_shapes) {}
  // The workload's shape number, or 0 when one of its pod sets has placement constraints of its
  // own (those are never look-alikes) or the table is full.
  uint32_t Of(const WorkloadSpec& w);
  size_t size() const { return ids_.size(); }

 private:
  size_t max_shapes_;
  std::unordered_map<std::string, uint32_t> ids_;
};

// Keeps the first admissions, in admission order, and the evictions made for them, while the two
// together number at most `max_changes` (the first admission is kept whatever its victims).
// Each admission was decided on the state the earlier ones left, so the kept ones stand as a pass
// of their own; the others are decided again by the next pass. Returns how many were dropped.
size_t KeepFirstAdmissions(Decisions& d, size_t max_changes);

}  // namespace rota::admission
