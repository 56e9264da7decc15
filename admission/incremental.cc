#include "rota/admission/incremental.h"

#include <algorithm>
#include <deque>
#include <map>
#include <numeric>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace rota::admission {
namespace {

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

bool Before(const Waiting& a, const Waiting& b) { return InSchedulingOrder(a, b); }

Waiting EntryOf(const Stored* s, std::string_view reason = {}, std::string_view message = {}) {
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
AlikeKey AlikeOf(const Waiting& w) { return {w.cq, w.alike, w.priority, w.may_preempt}; }

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

void Part::MergeIn(const std::vector<Waiting>& fresh) {
  std::sort(removed.begin(), removed.end());
  auto gone = [this](const Waiting& w) {
    return !removed.empty() && std::binary_search(removed.begin(), removed.end(), w.w);
  };
  std::vector<Waiting>& merged = spare;
  merged.clear();
  merged.reserve(waiting.size() + fresh.size());
  auto f = fresh.begin();
  for (const Waiting& w : waiting) {
    if (gone(w)) continue;
    for (; f != fresh.end() && Before(*f, w); ++f) merged.push_back(*f);
    merged.push_back(w);
  }
  merged.insert(merged.end(), f, fresh.end());
  waiting.swap(merged);
  removed.clear();
}

struct QueueInfo {
  size_t part = 0;
  int32_t number = 0;
  bool strict = false;
  bool by_creation = false;  // preemption within it compares creation times
};

}  // namespace

struct IncrementalScheduler::State {
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

namespace {

// Union-find over queue and cohort names: the parts are its classes that hold a queue.
class Classes {
 public:
  std::string Find(const std::string& x) {
    auto it = parent_.find(x);
    if (it == parent_.end()) {
      parent_[x] = x;
      return x;
    }
    if (it->second == x) return x;
    std::string root = Find(it->second);
    parent_[x] = root;
    return root;
  }
  void Join(const std::string& a, const std::string& b) {
    const std::string ra = Find(a), rb = Find(b);
    if (ra != rb) parent_[ra] = rb;
  }

 private:
  std::unordered_map<std::string, std::string> parent_;
};

}  // namespace

void IncrementalScheduler::State::MakeParts() {
  // Queue and cohort names live in one namespace here; a queue is told from a cohort of the same
  // name by a prefix.
  Classes classes;
  for (const auto& q : queues) {
    classes.Find("q/" + q.name);
    if (!q.cohort.empty()) classes.Join("q/" + q.name, "c/" + q.cohort);
  }
  for (const auto& c : cohorts)
    if (!c.parent.empty()) classes.Join("c/" + c.name, "c/" + c.parent);
  std::map<std::string, size_t> part_of_class;
  parts.clear();
  queue_info.clear();
  order_valid = false;
  std::unordered_set<std::string> names;
  duplicate_queues = false;
  for (const auto& q : queues) {
    auto [it, fresh] = part_of_class.emplace(classes.Find("q/" + q.name), parts.size());
    if (fresh) parts.emplace_back().snapshot.flavors = flavors;
    Part& p = parts[it->second];
    p.snapshot.cluster_queues.push_back(q);
    p.min_runtime = p.min_runtime || q.preempt_min_runtime > 0 || q.reclaim_min_runtime > 0;
    duplicate_queues = duplicate_queues || !names.insert(q.name).second;
    queue_info[q.name] = {it->second, static_cast<int32_t>(queue_info.size()),
                          q.queueing_strategy == QueueingStrategy::kStrictFIFO,
                          q.within_cluster_queue == WithinClusterQueue::kLowerOrNewerEqualPriority};
  }
  for (const auto& c : cohorts) {
    auto it = part_of_class.find(classes.Find("c/" + c.name));
    if (it != part_of_class.end()) parts[it->second].snapshot.cohorts.push_back(c);
  }
  parts.emplace_back().snapshot.flavors = flavors;  // the workloads of no known ClusterQueue
  for (auto& [key, s] : by_key) Attach(s.get());
}

void IncrementalScheduler::State::Attach(Stored* s) {
  s->part = PartOf(s->spec);
  s->member = true;
  auto q = queue_info.find(s->spec.cluster_queue);
  s->cq = q == queue_info.end() ? -1 : q->second.number;
  const WorkloadSpec& w = s->spec;
  const bool alike = q != queue_info.end() && !q->second.by_creation && !w.admission && !w.evicted &&
                     w.inadmissible_reason.empty() && w.budget_charges.empty() && w.fair_queue < 0;
  s->alike = alike ? w.shape : 0;
  Part& p = parts[s->part];
  if (s->spec.admission) {
    p.admitted.insert(s);
    p.latest_save = std::max({p.latest_save, s->spec.admission_time, s->spec.last_checkpoint});
    p.whole = true;
    return;
  }
  p.added.push_back(s);
  if (Strict(s->spec)) p.whole = true;
}

void IncrementalScheduler::State::Detach(Stored* s) {
  s->member = false;
  Part& p = parts[s->part];
  if (p.admitted.erase(s)) {
    p.whole = true;
    return;
  }
  p.removed.push_back(s);
  if (Strict(s->spec)) p.whole = true;
}

Decisions IncrementalScheduler::State::Decide(Part& p, const std::vector<const Stored*>& workloads,
                                              bool ordered) const {
  Snapshot& snap = p.snapshot;
  snap.workload_refs.clear();
  for (const Stored* s : workloads) snap.workload_refs.push_back(&s->spec);
  snap.order.resize(ordered ? workloads.size() : 0);
  std::iota(snap.order.begin(), snap.order.end(), 0u);
  snap.now = now;
  return Schedule(snap, *p.workspace);
}

void IncrementalScheduler::State::Keep(Part& p, const std::vector<const Stored*>& from, Decisions& d,
                                       size_t first_known, const std::vector<Waiting>& known) const {
  for (AdmitDecision& a : d.admitted) {
    const Stored* s = from[a.index];
    p.admission_order.push_back(EntryOf(s));
    a.index = s->slot;
    p.admissions.push_back(std::move(a));
  }
  for (PreemptDecision& v : d.preempted) p.preemptions.push_back(std::move(v));
  std::vector<Waiting>& waiting = p.waiting;
  waiting.clear();
  waiting.reserve(d.pending.size());
  for (const PendingDecision& w : d.pending) {
    if (w.index >= first_known && w.index - first_known < known.size()) {
      waiting.push_back(known[w.index - first_known]);  // (copied: reading the spec costs a cache miss)
      waiting.back().reason = w.reason;
      waiting.back().message = w.message;
      continue;
    }
    waiting.push_back(EntryOf(from[w.index], w.reason, w.message));
  }
  p.texts = std::move(d.texts);  // (a deque's strings stay where they are)
}

void IncrementalScheduler::State::DecideWhole(Part& p) {
  // The admitted first, then the waiting in scheduling order: those listed as waiting last time
  // that are still there, merged with those added since and those admitted last time whose
  // admission the caller did not take.
  p.DropRemoved();
  std::vector<Waiting> added;
  for (const Stored* s : p.added)
    if (s->member) added.push_back(EntryOf(s));
  for (const Waiting& a : p.admission_order)
    if (a.w->member) added.push_back(EntryOf(a.w));
  std::sort(added.begin(), added.end(), Before);
  std::vector<Waiting> waiting;
  waiting.reserve(p.waiting.size() + added.size());
  std::merge(p.waiting.begin(), p.waiting.end(), added.begin(), added.end(), std::back_inserter(waiting), Before);
  std::vector<const Stored*> from(p.admitted.begin(), p.admitted.end());
  from.reserve(from.size() + waiting.size());
  for (const Waiting& w : waiting) from.push_back(w.w);
  p.admissions.clear();
  p.admission_order.clear();
  p.preemptions.clear();
  p.waiting.clear();
  p.texts.clear();
  p.added_texts.clear();
  p.alikes.clear();
  p.alikes_known = false;
  p.added.clear();
  p.whole = false;
  p.done = Part::Done::kWhole;
  if (from.empty()) return;
  Decisions d = Decide(p, from, true);
  Keep(p, from, d, p.admitted.size(), waiting);
}

bool IncrementalScheduler::State::DecideNew(Part& p) {
  if (!p.alikes_known) {  // (a removed workload's decision still holds for its look-alikes)
    p.LearnAlikes(p.waiting.begin(), p.waiting.end());
    p.alikes_known = true;
  }
  // New workloads with a look-alike waiting take its decision; the others are decided.
  std::vector<const Stored*> from(p.admitted.begin(), p.admitted.end());
  const size_t admitted = from.size();
  std::vector<Waiting> fresh;
  for (const Stored* s : p.added) {
    if (!s->member) continue;  // (added and removed since)
    Waiting w = EntryOf(s);
    auto it = w.alike ? p.alikes.find(AlikeOf(w)) : p.alikes.end();
    if (it == p.alikes.end()) {
      from.push_back(s);
      continue;
    }
    w.reason = it->second.reason;
    w.message = it->second.message;
    fresh.push_back(w);
  }
  if (from.size() > admitted) {
    Decisions d = Decide(p, from, false);
    if (!d.admitted.empty() || !d.preempted.empty()) {
      // The part's quota changes before some of its older workloads are considered: all again.
      DecideWhole(p);
      return false;
    }
    const size_t decided = fresh.size();
    for (const PendingDecision& w : d.pending)
      fresh.push_back(EntryOf(from[w.index], Intern(p, w.reason), Intern(p, w.message)));
    p.LearnAlikes(fresh.begin() + static_cast<std::ptrdiff_t>(decided), fresh.end());
  }
  p.added.clear();
  std::sort(fresh.begin(), fresh.end(), Before);
  p.MergeIn(fresh);
  p.entered.swap(fresh);
  p.done = Part::Done::kNew;
  return true;
}

Decisions IncrementalScheduler::State::Merge() {
  Decisions out;
  // Admissions: the first round's, then the rest, each in scheduling order (as Schedule admits);
  // a part's victims follow the admission they were chosen for.
  struct Ref {
    size_t part, i;
  };
  std::vector<Ref> refs;
  for (size_t p = 0; p < parts.size(); ++p)
    for (size_t i = 0; i < parts[p].admissions.size(); ++i) refs.push_back({p, i});
  std::sort(refs.begin(), refs.end(), [this](const Ref& x, const Ref& y) {
    const bool fx = parts[x.part].admissions[x.i].first_round, fy = parts[y.part].admissions[y.i].first_round;
    if (fx != fy) return fx;
    return Before(parts[x.part].admission_order[x.i], parts[y.part].admission_order[y.i]);
  });
  std::vector<size_t> victim(parts.size(), 0);
  for (const Ref& r : refs) {
    const Part& p = parts[r.part];
    out.admitted.push_back(p.admissions[r.i]);
    size_t& v = victim[r.part];
    while (v < p.preemptions.size() && p.preemptions[v].preemptor == p.admissions[r.i].workload)
      out.preempted.push_back(p.preemptions[v++]);
  }
  out.pending.swap(recycled);
  out.pending.clear();
  stats.followed = order_valid && FollowOrder(out);
  if (!stats.followed) {
    out.pending.clear();
    MergeAll(out);
  }
  return out;
}

bool IncrementalScheduler::State::FollowOrder(Decisions& out) {
  ++passes;
  // What entered a part's list since the last pass: the new workloads a part took in, and in a
  // part decided whole each workload `order` does not hold (new, given back, or changed).
  std::vector<const Waiting*> fresh;
  std::vector<uint32_t> to_enter(parts.size(), 0);  // by part: its entries in `fresh` not yet taken
  for (size_t i = 0; i < parts.size(); ++i) {
    const Part& p = parts[i];
    if (p.done == Part::Done::kNew) {
      for (const Waiting& w : p.entered) fresh.push_back(&w);
      to_enter[i] = static_cast<uint32_t>(p.entered.size());
    } else if (p.done == Part::Done::kWhole) {
      for (const Waiting& w : p.waiting) {
        seen[w.slot] = passes;
        if (in_order[w.slot] == gen_of[w.slot]) continue;
        fresh.push_back(&w);
        ++to_enter[i];
      }
    }
  }
  std::sort(fresh.begin(), fresh.end(), [](const Waiting* a, const Waiting* b) { return Before(*a, *b); });
  // Each part's list is in scheduling order, so the cluster's order tells which list goes next.
  // (Per part, what the walk reads for every entry, apart from the large parts.)
  struct Cursor {
    const Waiting* next;
    const Waiting* end;
    uint32_t to_enter;
    Part::Done done;
  };
  std::vector<Cursor> cursors(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::vector<Waiting>& list = parts[i].waiting;
    cursors[i] = {list.data(), list.data() + list.size(), to_enter[i], parts[i].done};
  }
  std::vector<int32_t> queued(queue_info.size(), 0);
  const size_t most = order.size() + fresh.size();
  order_spare.resize(most);
  out.pending.resize(most);
  Placed* placed = order_spare.data();
  PendingDecision* pending = out.pending.data();
  auto emit = [&](uint32_t part, const Waiting& w, uint32_t gen) {
    *pending++ = {w.key, w.reason, w.message, w.slot, w.cq < 0 ? -1 : queued[w.cq]++};
    *placed++ = {part, w.slot, gen};
  };
  auto take_fresh = [&](const Waiting& w) {
    const auto part = static_cast<uint32_t>(w.w->part);
    Cursor& c = cursors[part];
    if (c.to_enter == 0 || c.next == c.end || c.next->slot != w.slot) return false;
    --c.to_enter;
    ++c.next;
    in_order[w.slot] = gen_of[w.slot];
    emit(part, w, gen_of[w.slot]);
    return true;
  };
  auto f = fresh.begin();
  for (const Placed& e : order) {
    Cursor& c = cursors[e.part];
    // Gone: removed or changed since, or no longer listed by a part decided whole (admitted).
    if (c.done != Part::Done::kKept &&
        (e.gen != gen_of[e.slot] || (c.done == Part::Done::kWhole && seen[e.slot] != passes))) {
      if (in_order[e.slot] == e.gen) in_order[e.slot] = 0;
      continue;
    }
    if (f != fresh.end()) {
      // Its entry: in its part's list after those of the part's entering ones that go before it.
      const Waiting* at = c.next;
      const Waiting* end = c.end - at > c.to_enter ? at + c.to_enter + 1 : c.end;
      while (at < end && at->slot != e.slot) ++at;
      if (at == end) return false;
      for (; f != fresh.end() && Before(**f, *at); ++f)
        if (!take_fresh(**f)) return false;
    }
    if (c.next == c.end || c.next->slot != e.slot) return false;
    // (The parts' lists are read in turns, too many at once for the hardware to see them as
    // streams: the entry after next is fetched ahead.)
    __builtin_prefetch(c.next + 2);
    emit(e.part, *c.next++, e.gen);
  }
  for (; f != fresh.end(); ++f)
    if (!take_fresh(**f)) return false;
  for (const Cursor& c : cursors)
    if (c.next != c.end) return false;
  order_spare.resize(static_cast<size_t>(placed - order_spare.data()));
  out.pending.resize(static_cast<size_t>(pending - out.pending.data()));
  order.swap(order_spare);
  return true;
}

void IncrementalScheduler::State::MergeAll(Decisions& out) {
  // The parts' lists merged in scheduling order, with places in their queues. A part's run of
  // workloads that go before every other part's next one is taken at once.
  struct Ref {
    size_t part, i;
  };
  auto later = [this](const Ref& x, const Ref& y) {
    return Before(parts[y.part].waiting[y.i], parts[x.part].waiting[x.i]);
  };
  std::priority_queue<Ref, std::vector<Ref>, decltype(later)> heads(later);
  size_t total = 0;
  for (size_t p = 0; p < parts.size(); ++p) {
    total += parts[p].waiting.size();
    if (!parts[p].waiting.empty()) heads.push({p, 0});
  }
  out.pending.reserve(total);
  order.clear();
  order.reserve(total);
  std::fill(in_order.begin(), in_order.end(), 0);
  std::vector<int32_t> queued(queue_info.size(), 0);
  while (!heads.empty()) {
    Ref r = heads.top();
    heads.pop();
    const std::vector<Waiting>& list = parts[r.part].waiting;
    const Waiting* bound = heads.empty() ? nullptr : &parts[heads.top().part].waiting[heads.top().i];
    do {
      const Waiting& w = list[r.i];
      out.pending.push_back({w.key, w.reason, w.message, w.slot, w.cq < 0 ? -1 : queued[w.cq]++});
      order.push_back({static_cast<uint32_t>(r.part), w.slot, gen_of[w.slot]});
      in_order[w.slot] = gen_of[w.slot];
      ++r.i;
    } while (r.i < list.size() && (!bound || Before(list[r.i], *bound)));
    if (r.i < list.size()) heads.push(r);
  }
  order_valid = true;
}

Decisions IncrementalScheduler::State::WholeClusterFromParts(const ScheduleLimits& limits) {
  // (The parts are decided whole once they are used again; until then they only keep which
  // waiting workloads they hold, in `waiting` and `added`.)
  for (Part& p : parts) {
    p.DropRemoved();
    for (const Waiting& a : p.admission_order) p.added.push_back(a.w);
    std::erase_if(p.added, [](const Stored* w) { return !w->member; });
    p.admissions.clear();
    p.admission_order.clear();
    p.preemptions.clear();
    p.whole = true;
  }
  replaced.clear();
  order_valid = false;
  stats.whole = true;
  return WholeCluster(limits);
}

Decisions IncrementalScheduler::State::WholeCluster(const ScheduleLimits& limits) {
  whole_snapshot = Snapshot{};
  whole_snapshot.flavors = flavors;
  whole_snapshot.cohorts = cohorts;
  whole_snapshot.cluster_queues = queues;
  whole_snapshot.fair_sharing = fair_sharing;
  whole_snapshot.budget_pools = budget_pools;
  whole_snapshot.admission_fair_sharing = admission_fair_sharing;
  whole_snapshot.now = now;
  std::vector<uint32_t> slot_of;
  whole_snapshot.workload_refs.reserve(by_key.size());
  for (const auto& [key, s] : by_key) {
    whole_snapshot.workload_refs.push_back(&s->spec);  // (stored until the next call: the views stay good)
    slot_of.push_back(s->slot);
  }
  Decisions d = Schedule(whole_snapshot, whole_workspace, limits);
  stopped_at_limit = limits.max_changes > 0 && d.admitted.size() + d.preempted.size() >= limits.max_changes;
  for (AdmitDecision& a : d.admitted) a.index = slot_of[a.index];
  for (PendingDecision& p : d.pending) p.index = slot_of[p.index];
  return d;
}

IncrementalScheduler::IncrementalScheduler() : state_(std::make_unique<State>()) { state_->MakeParts(); }
IncrementalScheduler::~IncrementalScheduler() = default;

void IncrementalScheduler::SetQueues(std::vector<FlavorSpec> flavors, std::vector<CohortSpec> cohorts,
                                     std::vector<ClusterQueueSpec> cluster_queues) {
  state_->flavors = std::move(flavors);
  state_->cohorts = std::move(cohorts);
  state_->queues = std::move(cluster_queues);
  state_->MakeParts();
}

void IncrementalScheduler::SetFairSharing(bool on) { state_->fair_sharing = on; }
void IncrementalScheduler::SetBudgetPools(std::vector<BudgetPool> pools) { state_->budget_pools = std::move(pools); }
void IncrementalScheduler::SetAdmissionFairSharing(AdmissionFairSharing fair_sharing) {
  state_->admission_fair_sharing = std::move(fair_sharing);
}

void IncrementalScheduler::SetNow(int64_t now) {
  const int64_t was = state_->now;
  if (now == was) return;
  state_->now = now;
  // Time decides who may be preempted (minimum runtimes), the order in which victims are tried
  // (the time since each saved its work, counted from 0 without a time and for saves after it)
  // and which are given back (the work each would lose). The order stays the same when both
  // times are known and no save of the part falls between them; a part that preempted nothing
  // then decides the same.
  for (Part& p : state_->parts) {
    if (p.min_runtime || !p.preemptions.empty() || was <= 0 || now <= 0 || p.latest_save > std::min(was, now))
      p.whole = true;
  }
}

uint32_t IncrementalScheduler::Upsert(WorkloadSpec w) {
  State& st = *state_;
  auto it = st.by_key.find(w.key);
  uint32_t slot;
  if (it != st.by_key.end()) {
    st.Detach(it->second.get());
    slot = it->second->slot;
    st.replaced.push_back(std::move(it->second));
    it->second = std::make_unique<Stored>();
  } else {
    if (st.free_slots.empty()) {
      st.free_slots.push_back(static_cast<uint32_t>(st.slots.size()));
      st.slots.push_back(nullptr);
    }
    slot = st.free_slots.back();
    st.free_slots.pop_back();
    it = st.by_key.emplace(w.key, std::make_unique<Stored>()).first;
  }
  st.Bump(slot);
  Stored* s = it->second.get();
  w.shape = st.shapes.Of(w);
  s->spec = std::move(w);
  s->slot = slot;
  st.slots[slot] = s;
  st.Attach(s);
  return slot;
}

void IncrementalScheduler::Remove(std::string_view key) {
  State& st = *state_;
  auto it = st.by_key.find(std::string(key));
  if (it == st.by_key.end()) return;
  st.Detach(it->second.get());
  st.slots[it->second->slot] = nullptr;
  st.Bump(it->second->slot);
  st.free_slots.push_back(it->second->slot);
  st.replaced.push_back(std::move(it->second));
  st.by_key.erase(it);
}

const WorkloadSpec* IncrementalScheduler::Find(std::string_view key) const {
  auto it = state_->by_key.find(std::string(key));
  return it == state_->by_key.end() ? nullptr : &it->second->spec;
}

size_t IncrementalScheduler::size() const { return state_->by_key.size(); }

const WorkloadSpec* IncrementalScheduler::Slot(size_t slot) const {
  return slot < state_->slots.size() && state_->slots[slot] ? &state_->slots[slot]->spec : nullptr;
}

const IncrementalScheduler::PassStats& IncrementalScheduler::last_pass() const { return state_->stats; }

void IncrementalScheduler::Recycle(Decisions&& decisions) {
  if (decisions.pending.capacity() > state_->recycled.capacity()) state_->recycled.swap(decisions.pending);
}

Decisions IncrementalScheduler::Pass(const ScheduleLimits& limits) {
  State& st = *state_;
  st.stats = PassStats{};
  st.stats.parts = st.parts.size();
  // A pass with a change limit after one that reached it is likely to reach it too: deciding the
  // parts first would be work thrown away.
  if (st.WholeClusterOnly() || (limits.max_changes > 0 && st.stopped_at_limit)) return st.WholeClusterFromParts(limits);
  size_t changes = 0;
  for (Part& p : st.parts) {
    if (!p.Changed()) {
      p.done = Part::Done::kKept;
      ++st.stats.reused;
    } else if (p.whole || !p.Quiet()) {
      st.DecideWhole(p);
      ++st.stats.decided;
    } else if (st.DecideNew(p)) {
      ++st.stats.new_only;
    } else {
      ++st.stats.decided;
    }
    changes += p.admissions.size() + p.preemptions.size();
  }
  st.replaced.clear();  // (no part points at a replaced workload any more)
  if (limits.max_changes > 0 && changes >= limits.max_changes) {
    // The pass would stop at its limit partway through some part's workloads.
    st.order_valid = false;
    st.stats.whole = true;
    return st.WholeCluster(limits);
  }
  st.stopped_at_limit = false;
  return st.Merge();
}

}  // namespace rota::admission
