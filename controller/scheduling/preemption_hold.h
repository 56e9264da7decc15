#pragma once

// Kueue's order for a preemption whose victim has pods to stop. The engine admits a preemptor as
// if its victims had released their quota at once; a victim that is a Job's Workload has pods
// that run until the Job is suspended and they are gone. So such a victim is evicted (Evicted
// and Preempted set) but keeps its quota until the Job integration has stopped its pods and
// releases it, and its preemptor stays pending meanwhile ("Pending the preemption of N
// workload(s)"). At no moment do running pods hold more than the admitted quota. A victim with
// no pods of rota's to stop (a plain Workload) releases its quota at once, and its preemptor is
// admitted in the same pass.
//
// Once released, a victim waits (for tuning's preemptor_first at most) while its preemptor is
// pending, so that the quota it gave back goes to the preemptor rather than back to it.

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "rota/admission/engine.h"
#include "rota/api/snapshot.h"

namespace rota::controller {

inline constexpr std::string_view kPendingPreemptionReason = "Pending";

// The snapshot's entries by workload key, as PreemptionHold reads and marks them: the
// controller's SnapshotBuilder, or `rota replay`'s own snapshot.
class SpecsByKey {
 public:
  virtual ~SpecsByKey() = default;
  virtual const admission::WorkloadSpec* Find(const std::string& key) const = 0;
  // The entry to mark for this pass (null when there is none, or it cannot be changed).
  virtual admission::WorkloadSpec* Mutable(const std::string& key) = 0;
  // Where `spec` (one Find returned) is in the snapshot's workloads.
  virtual size_t IndexOf(const admission::WorkloadSpec* spec) const = 0;
};

struct HeldPreemptions {
  std::unordered_set<std::string> victims;  // evicted, keeping their quota for now
  size_t waiting = 0;                       // preemptors taken out of the admissions (0 or 1)
  size_t deferred = 0;                      // admissions after it, left to the next pass
  std::string preemptor;                    // the one waiting, if any
  // Every victim the waiting preemptor chose in this pass, with its preemption reason: those
  // evicted now and those chosen again while their eviction (or checkpoint) is under way.
  std::unordered_map<std::string, admission::PreemptionReason> chosen;
};

class PreemptionHold {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  explicit PreemptionHold(std::chrono::seconds preemptor_first) : preemptor_first_(preemptor_first) {}

  // Before a pass: marks waiting for quota every victim that has released its quota while its
  // preemptor is still pending (for at most preemptor_first since the release was seen).
  void HoldReleased(api::SnapshotBuilder& builder, TimePoint now);
  void HoldReleased(SpecsByKey& specs, TimePoint now);

  // After the engine: the first admission (in admission order) of a preemptor with a victim for
  // which `has_pods` is true is taken out of `d.admitted` and listed in `d.pending` (reason
  // "Pending", Kueue's message); its victims that are already being evicted (`evicted` in the
  // snapshot: also those asked to checkpoint) are taken out of
  // `d.preempted` (chosen again, they are evicted once). The engine decided the admissions after
  // it as if those victims had released their quota (a victim may free more than its preemptor
  // takes): they are taken out too, with their own victims, and left to the next pass.
  HeldPreemptions Hold(admission::Decisions& d, const api::SnapshotBuilder& builder,
                       const std::function<bool(const std::string& key)>& has_pods);
  HeldPreemptions Hold(admission::Decisions& d, const SpecsByKey& specs,
                       const std::function<bool(const std::string& key)>& has_pods);

  // Records that `victim`, evicted outside a pass's decisions (after its checkpoint), gives its
  // quota to `preemptor` first.
  void Promise(const std::string& victim, const std::string& preemptor) {
    preemptor_of_[victim] = {preemptor, std::nullopt};
  }

  size_t size() const { return preemptor_of_.size(); }

 private:
  struct Wait {
    std::string preemptor;
    std::optional<TimePoint> released;  // when the victim was first seen without its quota
  };
  // Whether `victim` still waits for its preemptor; marks it in the snapshot while it does.
  bool KeepHolding(const std::string& victim, Wait& wait, SpecsByKey& specs, TimePoint now);

  std::chrono::seconds preemptor_first_;
  std::unordered_map<std::string, Wait> preemptor_of_;  // victim -> its preemptor
};

}  // namespace rota::controller
