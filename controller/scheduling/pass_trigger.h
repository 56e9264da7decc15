#pragma once

// When the scheduling loop makes its next pass. Informer threads mark the loop dirty (urgent or
// not), parts of a pass ask to be woken at a time (a pending reason or a held queue status comes
// due), and the loop thread waits here for the next pass.
//
// A pass runs as soon as an urgent change comes, or any change after a pass that was not idle.
// After an idle pass (no workload waiting for quota, nothing decided), a change that is not
// urgent waits `idle_pass_interval`. Without any change, a pass runs `retry_interval` after the
// last one (failed writes are retried), or when a wake-up or held queue status is due.
//
// Thread-safe: MarkDirty and WakeAt from any thread; Wait from the loop thread alone.

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>

#include "rota/apiclient/clock.h"
#include "scheduling/tuning.h"

namespace rota::controller {

class PassTrigger {
 public:
  using TimePoint = apiclient::Clock::TimePoint;

  PassTrigger(apiclient::Clock& clock, const SchedulingTuning& tuning) : clock_(clock), tuning_(tuning) {}

  void MarkDirty(bool urgent = true);
  // Makes the loop run a pass by `due` even if nothing changes.
  void WakeAt(TimePoint due);

  struct Due {
    bool idle_wake = false;  // a non-urgent change after an idle pass: it has waited already
  };
  // Blocks until the next pass is due, or returns nullopt once `stop` is set. `last_pass` is when
  // the last pass ended, `last_pass_idle` whether it was idle, and `held_due` when the first held
  // queue status comes due, if any does.
  std::optional<Due> Wait(const std::atomic<bool>& stop, TimePoint last_pass, bool last_pass_idle,
                          std::optional<TimePoint> held_due);

 private:
  // When the next pass is due if no new change comes, with mu_ held.
  TimePoint DeadlineLocked(TimePoint last_pass, bool last_pass_idle, std::optional<TimePoint> held_due) const;

  apiclient::Clock& clock_;
  const SchedulingTuning& tuning_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool dirty_ = false;                // guarded by mu_
  bool urgent_ = false;               // guarded by mu_: a change since the last pass was urgent
  std::optional<TimePoint> wake_at_;  // guarded by mu_
};

}  // namespace rota::controller
