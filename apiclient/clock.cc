#include <algorithm>
#include <thread>
#include <vector>

#include "rota/apiclient/clock.h"

namespace rota::apiclient {
namespace {

class SystemClock : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
  std::chrono::system_clock::time_point WallNow() const override { return std::chrono::system_clock::now(); }
  void SleepFor(Duration d) override { std::this_thread::sleep_for(d); }
  void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, TimePoint deadline) override {
    cv.wait_until(lock, deadline);
  }
};

}  // namespace

Clock& RealClock() {
  static SystemClock clock;
  return clock;
}

FakeClock::FakeClock(TimePoint start) : now_(start) {}

Clock::TimePoint FakeClock::Now() const {
  std::lock_guard<std::mutex> l(mu_);
  return now_;
}

std::chrono::system_clock::time_point FakeClock::WallNow() const {
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(Now().time_since_epoch()));
}

void FakeClock::SleepFor(Duration d) {
  std::unique_lock<std::mutex> l(mu_);
  const TimePoint deadline = now_ + d;
  ++waiters_;
  advanced_.wait(l, [&] { return now_ >= deadline; });
  --waiters_;
}

void FakeClock::WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, TimePoint deadline) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (now_ >= deadline) return;
    ++waiters_;
    waiting_cvs_.push_back({&cv, lock.mutex()});
  }
  cv.wait(lock);  // woken by the caller's own notify, or by Advance
  std::lock_guard<std::mutex> l(mu_);
  --waiters_;
  waiting_cvs_.erase(std::find(waiting_cvs_.begin(), waiting_cvs_.end(), std::make_pair(&cv, lock.mutex())));
}

void FakeClock::Advance(Duration d) {
  std::vector<std::pair<std::condition_variable*, std::mutex*>> cvs;
  {
    std::lock_guard<std::mutex> l(mu_);
    now_ += d;
    cvs = waiting_cvs_;
  }
  advanced_.notify_all();
  // Taking the waiter's mutex first means it is inside cv.wait, so the notification is not lost.
  for (auto [cv, m] : cvs) {
    std::lock_guard<std::mutex> g(*m);
    cv->notify_all();
  }
}

int FakeClock::Waiters() const {
  std::lock_guard<std::mutex> l(mu_);
  return waiters_;
}

Backoff::Backoff(std::chrono::milliseconds base, std::chrono::milliseconds cap, double jitter, unsigned seed)
    : base_(base), cap_(cap), jitter_(jitter), state_(seed ? seed : 0x9e3779b9u) {}

std::chrono::milliseconds Backoff::Next() {
  long long ms = base_.count();
  for (int i = 0; i < step_ && ms < cap_.count(); ++i) ms *= 2;
  ms = std::min<long long>(ms, cap_.count());
  if (step_ < 62) ++step_;
  // xorshift: a cheap, seedable jitter source (not for security).
  state_ ^= state_ << 13;
  state_ ^= state_ >> 17;
  state_ ^= state_ << 5;
  const double factor = 1.0 + jitter_ * (static_cast<double>(state_ % 10000) / 10000.0);
  return std::chrono::milliseconds(static_cast<long long>(static_cast<double>(ms) * factor));
}

TokenBucket::TokenBucket(Clock& clock, double qps, int burst)
    : clock_(clock), qps_(qps), burst_(burst), tokens_(burst), last_refill_(clock.Now()) {}

void TokenBucket::RefillLocked(Clock::TimePoint now) {
  if (qps_ > 0)
    tokens_ = std::min<double>(burst_, tokens_ + std::chrono::duration<double>(now - last_refill_).count() * qps_);
  last_refill_ = now;
}

Clock::Duration TokenBucket::Reserve() {
  std::lock_guard<std::mutex> l(mu_);
  if (qps_ <= 0) return Clock::Duration::zero();
  const auto now = clock_.Now();
  RefillLocked(now);
  tokens_ -= 1;
  if (tokens_ >= 0) return Clock::Duration::zero();
  return std::chrono::duration_cast<Clock::Duration>(std::chrono::duration<double>(-tokens_ / qps_));
}

void TokenBucket::SetRate(double qps) {
  std::lock_guard<std::mutex> l(mu_);
  RefillLocked(clock_.Now());                  // what the old rate gave until now
  if (qps_ <= 0 && qps > 0) tokens_ = burst_;  // (unlimited until now: a full bucket)
  qps_ = qps;
}

double TokenBucket::rate() const {
  std::lock_guard<std::mutex> l(mu_);
  return qps_;
}

void TokenBucket::Wait() {
  const Clock::Duration d = Reserve();
  if (d > Clock::Duration::zero()) clock_.SleepFor(d);
}

}  // namespace rota::apiclient
