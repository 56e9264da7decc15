#pragma once

// Where the scheduling loop posts the pending view (pending_view.h) for readers on other
// threads, and where start-time forecasts are made from it. Views cost the loop a copy of its
// snapshot, so it makes one only while somebody reads: a read marks the board wanted (for a
// minute) and wakes the loop, and the loop posts a view when one is wanted and the last is older
// than `fresh`. The forecaster thread forecasts the newest posted view, off the loop, resting
// between forecasts (Options::idle_per_busy); readers get the newest forecast, which may be of an
// earlier view.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "rota/admission/forecast.h"
#include "rota/apiclient/clock.h"
#include "visibility/pending_view.h"

namespace rota::visibility {
// The sentence of StartForecast::assumption for the run times of `view`'s workloads.
std::string ForecastAssumption(const PendingView& view);
}  // namespace rota::visibility

namespace rota::visibility {

struct StartForecast {
  uint64_t view_version = 0;
  int64_t made_at = 0;                             // the view's time
  std::unordered_map<std::string, int64_t> start;  // by "namespace/name": Unix seconds
  // What every start rests on, for a person: no arrivals, and where the run times came from.
  std::string assumption;
  double seconds = 0;  // what it took
  size_t passes = 0;
  bool hit_limit = false;  // it stopped at its horizon or pass limit before every start
};

class VisibilityBoard {
 public:
  struct Options {
    std::chrono::milliseconds fresh{5000};
    std::chrono::seconds wanted_for{60};
    admission::ForecastLimits limits;
    // After a forecast that took T, the next begins no sooner than T x this later: forecasts take
    // at most 1/(1 + this) of a core however often people read (a big queue's takes seconds).
    int idle_per_busy = 4;
  };
  // `wake_loop` makes the scheduling loop run a pass (it must not block).
  VisibilityBoard(apiclient::Clock& clock, std::function<void()> wake_loop, Options options);
  ~VisibilityBoard();

  // Loop thread.
  bool Wanted() const;
  void Post(std::shared_ptr<const PendingView> view);
  uint64_t NextVersion() { return ++versions_; }

  struct Reading {
    std::shared_ptr<const PendingView> view;        // null: no pass has posted one yet
    std::shared_ptr<const StartForecast> forecast;  // null: none made yet
  };
  // The newest view and forecast, waiting up to `wait` for a view when the one there is stale
  // (or missing). Any thread.
  Reading Read(std::chrono::milliseconds wait);

 private:
  void Forecast();

  apiclient::Clock& clock_;
  std::function<void()> wake_loop_;
  const Options options_;
  std::atomic<uint64_t> versions_{0};
  mutable std::mutex mu_;
  std::condition_variable posted_, work_;
  std::shared_ptr<const PendingView> view_;
  std::shared_ptr<const StartForecast> forecast_;
  apiclient::Clock::TimePoint view_at_{}, wanted_until_{};
  bool stop_ = false;
  std::atomic<bool> stopping_{false};  // read by a forecast in progress, without the lock
  std::thread forecaster_;
};

}  // namespace rota::visibility
