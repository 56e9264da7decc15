#pragma once

// The scheduling loop's sign of life, for /healthz: the loop beats whenever it shows progress
// (a pass ended, a wait on the apiserver or the caches came round); a reader on another thread
// asks how long it has been quiet. Before the first beat and after Stop(), it is never stalled
// (a follower does not run the loop).

#include <atomic>
#include <limits>
#include <optional>

#include "rota/apiclient/clock.h"

namespace rota::controller {

class Heartbeat {
 public:
  using TimePoint = apiclient::Clock::TimePoint;
  using Duration = apiclient::Clock::Duration;

  void Beat(TimePoint now) { last_ = now.time_since_epoch().count(); }
  void Stop() { last_ = kStopped; }
  // How long since the last beat, when that is more than `limit`.
  std::optional<Duration> Stalled(TimePoint now, Duration limit) const {
    const auto last = last_.load();
    if (last == kStopped) return std::nullopt;
    const Duration quiet = now.time_since_epoch() - Duration(last);
    if (quiet <= limit) return std::nullopt;
    return quiet;
  }

 private:
  static constexpr Duration::rep kStopped = std::numeric_limits<Duration::rep>::min();
  std::atomic<Duration::rep> last_{kStopped};
};

}  // namespace rota::controller
