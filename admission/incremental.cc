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

#include "incremental_state.h"

namespace rota::admission {
namespace incremental {

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

}  // namespace incremental

using incremental::AlikeOf;
using incremental::Before;
using incremental::EntryOf;
using incremental::Part;
using incremental::Stored;
using incremental::Waiting;

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
