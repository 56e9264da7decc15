#include "scheduling/preemption_hold.h"

#include <algorithm>
#include <map>

namespace rota::controller {
namespace {

// The controller's snapshot builder as SpecsByKey; Mutable needs the builder given as mutable.
class BuilderSpecs final : public SpecsByKey {
 public:
  explicit BuilderSpecs(const api::SnapshotBuilder& b, api::SnapshotBuilder* mutable_builder = nullptr)
      : b_(b), m_(mutable_builder) {}
  const admission::WorkloadSpec* Find(const std::string& key) const override { return b_.Find(key); }
  admission::WorkloadSpec* Mutable(const std::string& key) override { return m_ ? m_->Mutable(key) : nullptr; }
  size_t IndexOf(const admission::WorkloadSpec* spec) const override {
    return static_cast<size_t>(spec - b_.snapshot().workloads.data());
  }

 private:
  const api::SnapshotBuilder& b_;
  api::SnapshotBuilder* m_;
};

}  // namespace

void PreemptionHold::HoldReleased(api::SnapshotBuilder& builder, TimePoint now) {
  BuilderSpecs specs(builder, &builder);
  HoldReleased(specs, now);
}

HeldPreemptions PreemptionHold::Hold(admission::Decisions& d, const api::SnapshotBuilder& builder,
                                     const std::function<bool(const std::string& key)>& has_pods) {
  return Hold(d, BuilderSpecs(builder), has_pods);
}

void PreemptionHold::HoldReleased(SpecsByKey& specs, TimePoint now) {
  for (auto it = preemptor_of_.begin(); it != preemptor_of_.end();) {
    if (KeepHolding(it->first, it->second, specs, now))
      ++it;
    else
      it = preemptor_of_.erase(it);
  }
}

bool PreemptionHold::KeepHolding(const std::string& victim, Wait& wait, SpecsByKey& specs, TimePoint now) {
  const admission::WorkloadSpec* preemptor = specs.Find(wait.preemptor);
  const admission::WorkloadSpec* v = specs.Find(victim);
  if (!preemptor || preemptor->admission || !v) return false;  // admitted, or gone
  if (v->admission) return true;                               // still releasing
  if (!wait.released) wait.released = now;
  if (now - *wait.released >= preemptor_first_) return false;
  admission::WorkloadSpec* w = v->inadmissible_reason.empty() ? specs.Mutable(victim) : nullptr;
  if (w) {
    w->inadmissible_reason = "WaitingForQuota";
    w->inadmissible_message = "the quota it gave back goes first to " + wait.preemptor + ", which preempted it";
  }
  return true;
}

HeldPreemptions PreemptionHold::Hold(admission::Decisions& d, const SpecsByKey& specs,
                                     const std::function<bool(const std::string& key)>& has_pods) {
  HeldPreemptions held;
  std::map<std::string, size_t> victims_of;  // preemptor -> victims with pods to stop
  for (const auto& p : d.preempted)
    if (has_pods(p.workload)) ++victims_of[p.preemptor];
  auto first = std::find_if(d.admitted.begin(), d.admitted.end(),
                            [&](const admission::AdmitDecision& a) { return victims_of.count(a.workload) > 0; });
  if (first == d.admitted.end()) return held;
  // The engine went on as if the victims had released their quota: what it admitted after the
  // first waiting preemptor may use what they still hold. Those admissions (and their victims)
  // are left to the next pass.
  const std::string preemptor = first->workload;
  std::unordered_set<std::string> kept;
  for (auto it = d.admitted.begin(); it != first; ++it) kept.insert(it->workload);
  std::erase_if(d.preempted, [&](const admission::PreemptDecision& p) {
    if (p.preemptor == preemptor) {
      if (!has_pods(p.workload)) return false;
      held.chosen[p.workload] = p.reason;
      preemptor_of_[p.workload] = {p.preemptor, std::nullopt};
      const admission::WorkloadSpec* spec = specs.Find(p.workload);
      if (spec && spec->evicted) return true;  // chosen again while its eviction is under way
      held.victims.insert(p.workload);
      return false;
    }
    return kept.count(p.preemptor) == 0;
  });
  const admission::WorkloadSpec* spec = specs.Find(preemptor);
  if (spec) {
    const std::string& key = d.texts.emplace_back(preemptor);
    const std::string& message =
        d.texts.emplace_back("Pending the preemption of " + std::to_string(victims_of[preemptor]) + " workload(s)");
    d.pending.push_back({key, kPendingPreemptionReason, message, specs.IndexOf(spec), -1});
  }
  held.waiting = 1;
  held.preemptor = preemptor;
  held.deferred = static_cast<size_t>(d.admitted.end() - first) - 1;
  d.admitted.erase(first, d.admitted.end());
  return held;
}

}  // namespace rota::controller
