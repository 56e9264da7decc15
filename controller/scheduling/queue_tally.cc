#include "scheduling/queue_tally.h"

#include <algorithm>

namespace rota::controller {
namespace {

// Adds `amount` to `key`'s entry of a short (key, amount) list, or appends one.
void AddUsage(std::vector<std::pair<uint32_t, int64_t>>& usage, uint32_t key, int64_t amount) {
  auto it = std::find_if(usage.begin(), usage.end(), [&](const auto& u) { return u.first == key; });
  if (it == usage.end())
    usage.emplace_back(key, amount);
  else
    it->second += amount;
}

void AddAll(std::vector<std::pair<uint32_t, int64_t>>& usage, const std::vector<std::pair<uint32_t, int64_t>>& more) {
  for (const auto& [key, amount] : more) AddUsage(usage, key, amount);
}

// The pass's reason for each pending workload, by its index: 1 waiting for quota, 2 any other
// (0: not among the pending decisions, such as a victim of this pass).
std::vector<uint8_t> PendingKinds(size_t workloads, const admission::Decisions& d, size_t& waiting) {
  std::vector<uint8_t> kind(workloads, 0);
  for (const auto& p : d.pending) {
    kind[p.index] = p.reason == "WaitingForQuota" ? 1 : 2;
    waiting += kind[p.index] == 1;
  }
  return kind;
}

}  // namespace

CountsMemo CountsMemo::Of(const QueueCounts& c) {
  CountsMemo m{c.pending, c.admitted, {}};
  for (const auto& [fr, amount] : c.usage) m.usage.emplace_back(std::string(fr.first), std::string(fr.second), amount);
  return m;
}

bool CountsMemo::Same(const QueueCounts& c) const {
  if (pending != c.pending || admitted != c.admitted || usage.size() != c.usage.size()) return false;
  size_t i = 0;
  for (const auto& [fr, amount] : c.usage) {
    const auto& [flavor, resource, milli] = usage[i++];
    if (flavor != fr.first || resource != fr.second || milli != amount) return false;
  }
  return true;
}

const QueueCounts& CountsOf(const CountsByName& counts, std::string_view name) {
  static const QueueCounts kNone;
  const auto it = counts.find(name);
  return it == counts.end() ? kNone : it->second;
}

QueueTally::EntryUsage QueueTally::UsageOf(const api::SnapshotBuilder& builder, size_t i) {
  const admission::WorkloadSpec& w = builder.snapshot().workloads[i];
  EntryUsage e;
  e.stamp = builder.StampOf(i);
  if (!w.admission) return e;
  const uint32_t cq = builder.ClusterQueueNumberOf(i);
  e.in_own_cluster_queue = cq != api::SnapshotBuilder::kNoQueue && builder.QueueName(cq) == w.admission->cluster_queue;
  for (const auto& ps : w.admission->pod_sets) {
    for (const auto& [resource, flavor] : ps.flavors) {
      const auto u = ps.usage.find(resource);
      const int64_t amount = u == ps.usage.end() ? 0 : u->second;
      const auto [it, added] =
          usage_key_numbers_.try_emplace({flavor, resource}, static_cast<uint32_t>(usage_keys_.size()));
      if (added) usage_keys_.push_back(&it->first);
      AddUsage(e.usage, it->second, amount);
    }
  }
  return e;
}

void QueueTally::AddAdmitted(QueueCounts& c, const Tally& t) const {
  c.admitted += t.admitted;
  for (const auto& [key, amount] : t.usage) {
    const auto& [flavor, resource] = *usage_keys_[key];
    c.usage[{flavor, resource}] += amount;
  }
}

void QueueTally::Merge(QueueCounts& c, const Tally& t) const {
  c.pending = t.pending;
  c.waiting = t.waiting;
  c.inadmissible = t.inadmissible;
  AddAdmitted(c, t);
}

QueueTally::Result QueueTally::Count(const api::SnapshotBuilder& builder, const admission::Decisions& d) {
  const admission::Snapshot& snapshot = builder.snapshot();
  Result out;
  const std::vector<uint8_t> pending_kind = PendingKinds(snapshot.workloads.size(), d, out.waiting);
  std::vector<Tally> by_cq(builder.QueueNumbers()), by_lq(builder.QueueNumbers());
  if (usage_key_numbers_.size() > max_usage_keys_) {  // (flavors come and go; start the table again)
    usage_keys_.clear();
    usage_key_numbers_.clear();
    entry_usage_.clear();
  }
  entry_usage_.resize(snapshot.workloads.size());
  for (size_t i = 0; i < snapshot.workloads.size(); ++i) {
    const admission::WorkloadSpec& w = snapshot.workloads[i];
    const uint32_t cq = builder.ClusterQueueNumberOf(i), lq = builder.LocalQueueNumberOf(i);
    if (w.admission) {
      EntryUsage& e = entry_usage_[i];
      if (e.stamp != builder.StampOf(i)) e = UsageOf(builder, i);
      if (e.in_own_cluster_queue) {
        ++by_cq[cq].admitted;
        AddAll(by_cq[cq].usage, e.usage);
      } else {
        Tally t;
        t.admitted = 1;
        AddAll(t.usage, e.usage);
        AddAdmitted(out.cluster_queues[w.admission->cluster_queue], t);
      }
      if (lq != api::SnapshotBuilder::kNoQueue) {
        ++by_lq[lq].admitted;
        AddAll(by_lq[lq].usage, e.usage);
      }
    } else if (cq != api::SnapshotBuilder::kNoQueue) {
      Tally& c = by_cq[cq];
      ++c.pending;
      c.waiting += pending_kind[i] == 1;
      c.inadmissible += pending_kind[i] == 2;
      ++by_lq[lq].pending;
    }
  }
  for (uint32_t n = 0; n < by_cq.size(); ++n) {
    if (by_cq[n].pending > 0 || by_cq[n].admitted > 0) Merge(out.cluster_queues[builder.QueueName(n)], by_cq[n]);
    if (by_lq[n].pending > 0 || by_lq[n].admitted > 0) Merge(out.local_queues[builder.QueueName(n)], by_lq[n]);
  }
  return out;
}

}  // namespace rota::controller
