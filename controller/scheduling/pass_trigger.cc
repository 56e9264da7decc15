#include "scheduling/pass_trigger.h"

#include <algorithm>

namespace rota::controller {

void PassTrigger::MarkDirty(bool urgent) {
  std::lock_guard<std::mutex> l(mu_);
  dirty_ = true;
  urgent_ = urgent_ || urgent;
  cv_.notify_all();
}

void PassTrigger::WakeAt(TimePoint due) {
  std::lock_guard<std::mutex> l(mu_);
  if (!wake_at_ || due < *wake_at_) wake_at_ = due;
}

PassTrigger::TimePoint PassTrigger::DeadlineLocked(TimePoint last_pass, bool last_pass_idle,
                                                   std::optional<TimePoint> held_due) const {
  TimePoint deadline = last_pass + tuning_.retry_interval;
  if (wake_at_ && *wake_at_ < deadline) deadline = *wake_at_;
  if (held_due && *held_due + tuning_.queue_status_slack < deadline) deadline = *held_due + tuning_.queue_status_slack;
  // A change that cannot decide anything, after an idle pass, waits for the idle interval.
  if (dirty_ && !urgent_ && last_pass_idle && last_pass + tuning_.idle_pass_interval < deadline) {
    deadline = last_pass + tuning_.idle_pass_interval;
  }
  return deadline;
}

std::optional<PassTrigger::Due> PassTrigger::Wait(const std::atomic<bool>& stop, TimePoint last_pass,
                                                  bool last_pass_idle, std::optional<TimePoint> held_due) {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    if (stop) return std::nullopt;
    if (dirty_ && (urgent_ || !last_pass_idle)) break;
    const TimePoint until = DeadlineLocked(last_pass, last_pass_idle, held_due);
    const TimePoint now = clock_.Now();
    if (now >= until) break;
    clock_.WaitUntil(cv_, l, std::min<TimePoint>(until, now + tuning_.stop_check));
  }
  const Due due{!urgent_ && last_pass_idle};
  dirty_ = false;
  urgent_ = false;
  wake_at_.reset();
  return due;
}

}  // namespace rota::controller
