#pragma once

// The incremental engine's state (IncrementalScheduler::State) and the types it keeps, shared by
// its sources: incremental.cc (the parts and their decisions) and incremental_order.cc (handing
// back the parts' decisions in scheduling order). Internal to rota_admission.

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "rota/admission/engine.h"
#include "rota/admission/incremental.h"
#include "rota/admission/snapshot.h"

namespace rota::admission {
namespace incremental {

// A workload as the scheduler keeps it. Replaced, not changed, by Upsert: a part's decisions
// point at the one they were made for.
struct Stored {
  WorkloadSpec spec;
  uint32_t slot = 0;
  size_t part = 0;
  bool member = false;  // still in its part (false once removed or replaced)
  int32_t cq = -1;      // its ClusterQueue's number (QueueInfo), or -1
  // Its shape, when waiting workloads of its queue, priority and tier with this shape are
  // decided alike (Alike); 0 otherwise.
  uint32_t alike = 0;
};

// A waiting workload's decision as its part keeps it.
struct Waiting {
  int32_t priority;
  int64_t creation_time;
  std::string_view key;  // (these three for InSchedulingOrder)
  const Stored* w;
  std::string_view reason, message;  // into the part's texts, a stored spec, or static text
  int32_t cq;                        // for its position: its ClusterQueue's number, or -1
  uint32_t slot;                     // (copied: the passes over thousands of these read no spec)
  uint32_t alike;                    // Stored::alike
  bool may_preempt;
};

inline bool Before(const Waiting& a, const Waiting& b) { return InSchedulingOrder(a, b); }

inline Waiting EntryOf(const Stored* s, std::string_view reason = {}, std::string_view message = {}) {
  return {s->spec.priority, s->spec.creation_time, s->spec.key, s, reason, message, s->cq, s->slot,
          s->alike,         s->spec.may_preempt};
}

// Waiting workloads of one ClusterQueue that are decided alike in a part that admits nothing:
// the same shape (pod sets and tier), priority and may_preempt, and nothing else of theirs that
// the engine reads (Stored::alike). Against the same quota, the engine gives them the same
// reason and message (as its own look-alike memo does within a pass).
struct AlikeKey {
  int32_t cq;
  uint32_t shape;
  int32_t priority;
  bool may_preempt;
  friend bool operator==(const AlikeKey&, const AlikeKey&) = default;
};
struct AlikeHash {
  size_t operator()(const AlikeKey& k) const {
    return std::hash<uint64_t>()((uint64_t{k.shape} << 32 | static_cast<uint32_t>(k.cq)) * 31 +
                                 static_cast<uint32_t>(k.priority) * 2 + k.may_preempt);
  }
};
inline AlikeKey AlikeOf(const Waiting& w) { return {w.cq, w.alike, w.priority, w.may_preempt}; }

// The ClusterQueues of one cohort tree (or one queue without a cohort), their workloads, what
// changed since they were last decided, and those decisions.
struct Part {
  // Its flavors, cohorts and queues; each pass of it names its workloads (workload_refs).
  Snapshot snapshot;
  std::unique_ptr<Workspace> workspace = std::make_unique<Workspace>();
  bool min_runtime = false;  // a queue protects recent admissions: time changes its decisions
  // The latest save (admission or checkpoint) of its admitted workloads: a victim saved after the
  // pass's time counts as saved at it, which time passing changes.
  int64_t latest_save = 0;
  std::unordered_set<const Stored*> admitted;
  // Changes since the last decisions.
  bool whole = true;                 // decide it again whole
  std::vector<const Stored*> added;  // waiting workloads (some may have been removed since)
  // Waiting workloads removed (the entries of `waiting` to drop; found by address, which reads
  // no spec: those are scattered, and the lists are long).
  std::vector<const Stored*> removed;
  void DropRemoved() {
    if (removed.empty()) return;
    std::sort(removed.begin(), removed.end());
    std::erase_if(waiting,
                  [this](const Waiting& w) { return std::binary_search(removed.begin(), removed.end(), w.w); });
    removed.clear();
  }
  // Drops the removed and merges in `fresh` (in scheduling order), in one pass over `waiting`.
  void MergeIn(const std::vector<Waiting>& fresh);
  // The last decisions (admissions and victims in their order, waiting in scheduling order).
  std::vector<AdmitDecision> admissions;
  std::vector<Waiting> admission_order;  // per admission: its workload's order (reason unused)
  std::vector<PreemptDecision> preemptions;
  std::vector<Waiting> waiting;
  // The texts `waiting` points into: the last whole decision's, and those of workloads decided
  // since, kept once each (look-alikes share their reasons).
  std::deque<std::string> texts;
  std::unordered_set<std::string> added_texts;
  // While it stays quiet: the decision of each kind of look-alike among `waiting` (once known).
  struct Said {
    std::string_view reason, message;
  };
  std::unordered_map<AlikeKey, Said, AlikeHash> alikes;
  bool alikes_known = false;
  template <typename It>
  void LearnAlikes(It from, It to) {
    for (; from != to; ++from)
      if (from->alike) alikes.try_emplace(AlikeOf(*from), Said{from->reason, from->message});
  }
  std::vector<Waiting> spare;  // the memory of an earlier `waiting`, for the next one
  // What the current pass did with it, and when it decided only new workloads, those it took
  // into `waiting` (in scheduling order): Merge follows the cluster's order by these.
  enum class Done { kKept, kNew, kWhole } done = Done::kWhole;
  std::vector<Waiting> entered;

  bool Quiet() const { return admissions.empty() && preemptions.empty(); }
  bool Changed() const { return whole || !added.empty() || !removed.empty(); }
};

struct QueueInfo {
  size_t part = 0;
  int32_t number = 0;
  bool strict = false;
  bool by_creation = false;  // preemption within it compares creation times
};

}  // namespace incremental

struct IncrementalScheduler::State {
  using Stored = incremental::Stored;
  using Waiting = incremental::Waiting;
  using Part = incremental::Part;
  using QueueInfo = incremental::QueueInfo;

  std::vector<FlavorSpec> flavors;
  std::vector<CohortSpec> cohorts;
  std::vector<ClusterQueueSpec> queues;
  bool duplicate_queues = false;
  bool fair_sharing = false;
  std::vector<BudgetPool> budget_pools;
  AdmissionFairSharing admission_fair_sharing;
  int64_t now = 0;

  std::unordered_map<std::string, QueueInfo> queue_info;
  std::vector<Part> parts;  // the last one holds the workloads of no known ClusterQueue
  std::unordered_map<std::string, std::unique_ptr<Stored>> by_key;
  std::vector<Stored*> slots;
  std::vector<uint32_t> free_slots;
  std::vector<std::unique_ptr<Stored>> replaced;  // kept until the parts have let go of them
  ShapeTable shapes;                              // (its own numbers: the caller's are ignored)
  Snapshot whole_snapshot;                        // a whole-cluster pass's, which its views point into
  Workspace whole_workspace;                      // and its memory
  std::vector<PendingDecision> recycled;          // a pending list handed back (Recycle)
  PassStats stats;
  bool stopped_at_limit = false;  // the last pass was decided whole and reached its change limit

  // The waiting workloads of every part in scheduling order, as the last pass handed them back:
  // the part each is in, its slot, and the generation of that slot's workload then. A pass that
  // follows it merges in only the workloads that entered a part's list, instead of merging all
  // the parts' lists again (see Merge). Valid while `order_valid`.
  struct Placed {
    uint32_t part, slot, gen;
  };
  std::vector<Placed> order, order_spare;
  bool order_valid = false;
  std::vector<uint32_t> gen_of;    // by slot: changes whenever a workload is put in it or removed
  std::vector<uint32_t> in_order;  // by slot: the generation of its entry in `order`, 0 if none
  std::vector<uint32_t> seen;      // by slot: the last pass that found it waiting in a part decided whole
  uint32_t passes = 0;
  void Bump(uint32_t slot) {
    if (slot >= gen_of.size()) {
      gen_of.resize(slot + 1, 0);
      in_order.resize(slot + 1, 0);
      seen.resize(slot + 1, 0);
    }
    ++gen_of[slot];
  }

  bool WholeClusterOnly() const {
    return fair_sharing || !budget_pools.empty() || !admission_fair_sharing.queues.empty() || duplicate_queues;
  }
  const std::string& QueueOf(const WorkloadSpec& w) const {
    return w.admission ? w.admission->cluster_queue : w.cluster_queue;
  }
  size_t PartOf(const WorkloadSpec& w) const {
    auto it = queue_info.find(QueueOf(w));
    return it == queue_info.end() ? parts.size() - 1 : it->second.part;
  }
  bool Strict(const WorkloadSpec& w) const {
    auto it = queue_info.find(QueueOf(w));
    return it != queue_info.end() && it->second.strict;
  }

  void MakeParts();
  void Attach(Stored* s);
  void Detach(Stored* s);
  Decisions Decide(Part& p, const std::vector<const Stored*>& workloads, bool ordered) const;
  // `text`, kept in the part's texts for workloads decided one part at a time.
  static std::string_view Intern(Part& p, std::string_view text) {
    return text.empty() ? text : std::string_view(*p.added_texts.emplace(text).first);
  }
  // Keeps the decisions `d` made on `from` as the part's. The entries of `from` from
  // `first_known` on are also `known`'s, as Waiting entries (copied instead of read from their
  // specs).
  void Keep(Part& p, const std::vector<const Stored*>& from, Decisions& d, size_t first_known,
            const std::vector<Waiting>& known) const;
  void DecideWhole(Part& p);
  bool DecideNew(Part& p);
  Decisions Merge();
  // Decides the whole cluster, and leaves every part to be decided whole when next used.
  Decisions WholeClusterFromParts(const ScheduleLimits& limits);
  // Appends to `out.pending` the parts' waiting workloads in scheduling order, the two ways.
  // FollowOrder returns false (and may have appended some) where `order` does not fit the parts.
  bool FollowOrder(Decisions& out);
  void MergeAll(Decisions& out);
  Decisions WholeCluster(const ScheduleLimits& limits);
};

}  // namespace rota::admission
