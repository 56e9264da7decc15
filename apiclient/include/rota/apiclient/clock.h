#pragma once

// Time for everything in the client that waits: rate limiting, backoff, work-queue delays, leader
// election. Injected so that tests run on a fake clock without sleeping.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <utility>
#include <vector>

namespace rota::apiclient {

class Clock {
 public:
  using Duration = std::chrono::steady_clock::duration;
  using TimePoint = std::chrono::steady_clock::time_point;
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
  // Wall-clock time, for timestamps written to the apiserver (Lease renewTime, Event times).
  virtual std::chrono::system_clock::time_point WallNow() const = 0;
  virtual void SleepFor(Duration d) = 0;
  // Waits on `cv` (with `lock` held) until `deadline` or a notification, like
  // condition_variable::wait_until on this clock's time.
  virtual void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, TimePoint deadline) = 0;
};

// The process's real clocks. Thread-safe; a single instance serves everyone.
Clock& RealClock();

// A clock that moves only when told to. SleepFor and WaitUntil block until Advance() passes
// their deadline (or, for WaitUntil, a notification). Thread-safe.
class FakeClock : public Clock {
 public:
  explicit FakeClock(TimePoint start = TimePoint(std::chrono::hours(1)));
  TimePoint Now() const override;
  std::chrono::system_clock::time_point WallNow() const override;
  void SleepFor(Duration d) override;
  void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, TimePoint deadline) override;
  void Advance(Duration d);
  // Number of threads currently sleeping or waiting on this clock.
  int Waiters() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable advanced_;
  TimePoint now_;
  int waiters_ = 0;
  // Condition variables (and their mutexes) of current WaitUntil callers, notified on Advance.
  std::vector<std::pair<std::condition_variable*, std::mutex*>> waiting_cvs_;
};

// A token bucket (client-go's flowcontrol): `qps` tokens a second, up to `burst` saved. Reserve()
// takes a token now, or the next one to come, and says how long until it is due; Wait() sleeps
// that long. qps <= 0 means no limit. Thread-safe.
class TokenBucket {
 public:
  TokenBucket(Clock& clock, double qps, int burst);
  Clock::Duration Reserve();
  void Wait();
  // From now on `qps` tokens a second (the tokens saved or reserved so far stand). qps <= 0 means
  // no limit.
  void SetRate(double qps);
  double rate() const;

 private:
  void RefillLocked(Clock::TimePoint now);  // mu_ held

  Clock& clock_;
  double qps_;  // guarded by mu_
  const int burst_;
  mutable std::mutex mu_;
  double tokens_;  // may go below zero: tokens reserved ahead
  Clock::TimePoint last_refill_;
};

// Exponential backoff with jitter (client-go's wait.Backoff): Next() returns base, 2x base, ...
// up to cap, each multiplied by a random factor in [1, 1 + jitter]; Reset() starts over.
class Backoff {
 public:
  Backoff(std::chrono::milliseconds base, std::chrono::milliseconds cap, double jitter = 0.5, unsigned seed = 0);
  std::chrono::milliseconds Next();
  void Reset() { step_ = 0; }

 private:
  std::chrono::milliseconds base_, cap_;
  double jitter_;
  int step_ = 0;
  unsigned state_;
};

}  // namespace rota::apiclient
