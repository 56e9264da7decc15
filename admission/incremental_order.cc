// Handing back the parts' decisions as one pass's: admissions in admission order with their
// victims, and every waiting workload in scheduling order with its place in its queue.
#include <algorithm>
#include <cstdint>
#include <queue>
#include <vector>

#include "incremental_state.h"

namespace rota::admission {

using incremental::Before;

namespace {

// A waiting workload's pending decision, at the next place in its queue (`queued`: how many of
// each queue's are handed back so far).
PendingDecision PendingOf(const incremental::Waiting& w, std::vector<int32_t>& queued) {
  return {w.key, w.reason, w.message, w.slot, w.cq < 0 ? -1 : queued[w.cq]++};
}

}  // namespace

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
  // (Per part, what the walk below reads for every entry, apart from the large parts.)
  struct Cursor {
    const Waiting* next;
    const Waiting* end;
    uint32_t to_enter;  // its entries in `fresh` not yet taken
    Part::Done done;
  };
  std::vector<Cursor> cursors(parts.size());
  // What entered a part's list since the last pass: the new workloads a part took in, and in a
  // part decided whole each workload `order` does not hold (new, given back, or changed).
  std::vector<const Waiting*> fresh;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Part& p = parts[i];
    Cursor& c = cursors[i];
    c = {p.waiting.data(), p.waiting.data() + p.waiting.size(), 0, p.done};
    if (p.done == Part::Done::kNew) {
      for (const Waiting& w : p.entered) fresh.push_back(&w);
      c.to_enter = static_cast<uint32_t>(p.entered.size());
    } else if (p.done == Part::Done::kWhole) {
      for (const Waiting& w : p.waiting) {
        seen[w.slot] = passes;
        if (in_order[w.slot] == gen_of[w.slot]) continue;
        fresh.push_back(&w);
        ++c.to_enter;
      }
    }
  }
  std::sort(fresh.begin(), fresh.end(), [](const Waiting* a, const Waiting* b) { return Before(*a, *b); });
  // Each part's list is in scheduling order, so the cluster's order tells which list goes next.
  std::vector<int32_t> queued(queue_info.size(), 0);
  const size_t most = order.size() + fresh.size();
  order_spare.resize(most);
  out.pending.resize(most);
  Placed* placed = order_spare.data();
  PendingDecision* pending = out.pending.data();
  auto emit = [&](uint32_t part, const Waiting& w, uint32_t gen) {
    *pending++ = PendingOf(w, queued);
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
    // streams: the entry after next is fetched ahead. Its address is reckoned as a number, as
    // it may lie past the list's end, where a prefetch is harmless.)
    __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(c.next) + 2 * sizeof(Waiting)));
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
      out.pending.push_back(PendingOf(w, queued));
      order.push_back({static_cast<uint32_t>(r.part), w.slot, gen_of[w.slot]});
      in_order[w.slot] = gen_of[w.slot];
      ++r.i;
    } while (r.i < list.size() && (!bound || Before(list[r.i], *bound)));
    if (r.i < list.size()) heads.push(r);
  }
  order_valid = true;
}

}  // namespace rota::admission
