#include "scheduling/incremental_pass.h"

#include <utility>

namespace rota::controller {

IncrementalPass::IncrementalPass() { Forget(); }

bool IncrementalPass::TiesTheCluster(const admission::Snapshot& s) {
  return s.fair_sharing || !s.budget_pools.empty() || !s.admission_fair_sharing.queues.empty();
}

void IncrementalPass::Forget() {
  engine_ = std::make_unique<admission::IncrementalScheduler>();
  fed_ = false;
  flavors_.clear();
  cohorts_.clear();
  queues_.clear();
  stamp_at_.clear();
  slot_of_.clear();
  place_of_.clear();
}

admission::Decisions IncrementalPass::Decide(const api::SnapshotBuilder& builder,
                                             const admission::ScheduleLimits& limits) {
  const admission::Snapshot& s = builder.snapshot();
  stats_ = Stats{};
  if (TiesTheCluster(s)) {
    if (fed_) Forget();
    stats_.whole = true;
    return admission::Schedule(s, workspace_, limits);
  }
  FeedQueues(s);
  FeedWorkloads(builder);
  engine_->SetNow(s.now);
  fed_ = true;
  admission::Decisions d = engine_->Pass(limits);
  stats_.engine = engine_->last_pass();
  for (admission::AdmitDecision& a : d.admitted) a.index = place_of_[a.index];
  for (admission::PendingDecision& p : d.pending) p.index = place_of_[p.index];
  return d;
}

void IncrementalPass::Recycle(admission::Decisions&& decisions) {
  if (stats_.whole)
    workspace_.Recycle(std::move(decisions));
  else
    engine_->Recycle(std::move(decisions));
}

void IncrementalPass::FeedQueues(const admission::Snapshot& s) {
  if (fed_ && s.flavors == flavors_ && s.cohorts == cohorts_ && s.cluster_queues == queues_) return;
  flavors_ = s.flavors;
  cohorts_ = s.cohorts;
  queues_ = s.cluster_queues;
  engine_->SetQueues(flavors_, cohorts_, queues_);
}

void IncrementalPass::FeedWorkloads(const api::SnapshotBuilder& builder) {
  const std::vector<admission::WorkloadSpec>& entries = builder.snapshot().workloads;
  std::vector<uint64_t> gone;  // stamps fed from a place that now holds another entry, or none
  for (size_t i = 0; i < entries.size(); ++i) {
    const uint64_t stamp = builder.StampOf(i);
    if (i < stamp_at_.size()) {
      if (stamp_at_[i] == stamp) continue;
      gone.push_back(stamp_at_[i]);
      stamp_at_[i] = stamp;
    } else {
      stamp_at_.push_back(stamp);
    }
    auto [it, fresh] = slot_of_.try_emplace(stamp, 0);
    if (fresh) {
      it->second = engine_->Upsert(entries[i]);
      ++stats_.fed;
    }
    if (it->second >= place_of_.size()) place_of_.resize(it->second + 1);
    place_of_[it->second] = static_cast<uint32_t>(i);
  }
  for (size_t i = entries.size(); i < stamp_at_.size(); ++i) gone.push_back(stamp_at_[i]);
  stamp_at_.resize(entries.size());
  RemoveGone(builder, gone);
}

void IncrementalPass::RemoveGone(const api::SnapshotBuilder& builder, const std::vector<uint64_t>& gone) {
  const size_t entries = builder.snapshot().workloads.size();
  for (uint64_t stamp : gone) {
    auto it = slot_of_.find(stamp);
    if (it == slot_of_.end()) continue;
    const uint32_t slot = it->second;
    const uint32_t place = place_of_[slot];
    if (place < entries && builder.StampOf(place) == stamp) continue;  // moved, not changed
    slot_of_.erase(it);
    // Made again (its key fed again, into the same slot), or gone.
    const admission::WorkloadSpec* w = engine_->Slot(slot);
    if (w && !builder.Find(w->key)) {
      engine_->Remove(w->key);
      ++stats_.removed;
    }
  }
}

}  // namespace rota::controller
