#include "visibility/board.h"

namespace rota::visibility {

std::string ForecastAssumption(const PendingView& view) {
  size_t by[4] = {};
  for (const RunTimeEstimate& r : view.run_times) ++by[static_cast<int>(r.source)];
  std::string s = "assumes no new workloads arrive and each runs for its expected run time: " + std::to_string(by[1]) +
                  " by maximumExecutionTimeSeconds, " + std::to_string(by[2]) + " by " +
                  std::string(kExpectedRuntimeAnnotation) + ", " + std::to_string(by[3]) +
                  " by the median of finished runs";
  if (by[0] > 0) s += "; " + std::to_string(by[0]) + " with no known run time hold their quota for good";
  return s;
}

VisibilityBoard::VisibilityBoard(apiclient::Clock& clock, std::function<void()> wake_loop, Options options)
    : clock_(clock), wake_loop_(std::move(wake_loop)), options_(options), forecaster_([this] { Forecast(); }) {}

VisibilityBoard::~VisibilityBoard() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  stopping_ = true;
  work_.notify_all();
  forecaster_.join();
}

bool VisibilityBoard::Wanted() const {
  std::lock_guard<std::mutex> l(mu_);
  const auto now = clock_.Now();
  return now < wanted_until_ && (!view_ || now - view_at_ >= options_.fresh);
}

void VisibilityBoard::Post(std::shared_ptr<const PendingView> view) {
  {
    std::lock_guard<std::mutex> l(mu_);
    view_ = std::move(view);
    view_at_ = clock_.Now();
  }
  posted_.notify_all();
  work_.notify_all();
}

VisibilityBoard::Reading VisibilityBoard::Read(std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> l(mu_);
  const auto now = clock_.Now();
  const auto deadline = now + wait;
  wanted_until_ = now + options_.wanted_for;
  if (!view_ || now - view_at_ >= options_.fresh) {
    const uint64_t had = view_ ? view_->version : 0;
    l.unlock();
    wake_loop_();
    l.lock();
    while ((!view_ || view_->version == had) && clock_.Now() < deadline) clock_.WaitUntil(posted_, l, deadline);
  }
  // The view's own forecast, if it comes in time (a big one may not: then the one before).
  auto current = [this] { return !view_ || (forecast_ && forecast_->view_version == view_->version); };
  while (!current() && clock_.Now() < deadline) clock_.WaitUntil(posted_, l, deadline);
  return {view_, forecast_};
}

void VisibilityBoard::Forecast() {
  std::unique_lock<std::mutex> l(mu_);
  uint64_t done = 0;
  apiclient::Clock::TimePoint next{};  // not before: forecasting takes at most a share of a core
  while (!stop_) {
    if (!view_ || view_->version == done) {
      work_.wait(l);
      continue;
    }
    if (clock_.Now() < next) {
      clock_.WaitUntil(work_, l, next);
      continue;
    }
    std::shared_ptr<const PendingView> view = view_;
    l.unlock();
    const auto began = clock_.Now();
    std::vector<int64_t> run_time;
    run_time.reserve(view->run_times.size());
    for (const RunTimeEstimate& r : view->run_times) run_time.push_back(r.seconds);
    admission::ForecastLimits limits = options_.limits;
    limits.keep_going = [this] { return !stopping_.load(); };  // (a shutdown does not wait for it)
    const admission::Forecast f = admission::ForecastStarts(view->snapshot, run_time, limits);
    auto made = std::make_shared<StartForecast>();
    made->view_version = view->version;
    made->made_at = view->now;
    made->passes = f.passes;
    made->hit_limit = f.hit_horizon || f.hit_max_passes;
    made->assumption = ForecastAssumption(*view);
    for (const PendingEntry& e : view->entries) {
      if (e.snapshot_index >= f.start.size() || f.start[e.snapshot_index] == admission::kNoEstimate) continue;
      const std::string key = e.ns + "/" + e.name;
      made->start[key] = f.start[e.snapshot_index];
    }
    const auto took = clock_.Now() - began;
    made->seconds = std::chrono::duration<double>(took).count();
    l.lock();
    next = clock_.Now() + took * options_.idle_per_busy;
    forecast_ = std::move(made);
    done = view->version;
    posted_.notify_all();
  }
}

}  // namespace rota::visibility
