#include "rota/apiclient/workqueue.h"

#include <algorithm>
#include <cmath>

namespace rota::apiclient {

WorkQueue::WorkQueue(Clock& clock, RateLimit limit)
    : clock_(clock), limit_(limit), bucket_(clock, limit.qps, limit.burst) {}

void WorkQueue::AddLocked(const std::string& key) {
  if (shutting_down_ || dirty_.count(key)) return;
  dirty_.insert(key);
  if (processing_.count(key)) return;  // re-queued by Done()
  queue_.push_back(key);
  cv_.notify_one();
}

void WorkQueue::Add(const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  AddLocked(key);
}

void WorkQueue::AddAfter(const std::string& key, Clock::Duration delay) {
  std::lock_guard<std::mutex> l(mu_);
  if (shutting_down_) return;
  if (delay <= Clock::Duration::zero()) {
    AddLocked(key);
    return;
  }
  waiting_.emplace(clock_.Now() + delay, key);
  cv_.notify_all();  // a getter may need to wake earlier
}

void WorkQueue::AddRateLimited(const std::string& key) {
  Clock::Duration delay;
  {
    std::lock_guard<std::mutex> l(mu_);
    const int n = failures_[key]++;
    const double item_ms = std::min<double>(static_cast<double>(limit_.item_max.count()),
                                            static_cast<double>(limit_.item_base.count()) * std::pow(2.0, n));
    // Overall bucket: take a token now, or reserve the next one.
    const double bucket_ms = std::chrono::duration<double, std::milli>(bucket_.Reserve()).count();
    delay = std::chrono::duration_cast<Clock::Duration>(
        std::chrono::duration<double, std::milli>(std::max(item_ms, bucket_ms)));
  }
  AddAfter(key, delay);
}

void WorkQueue::Forget(const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  failures_.erase(key);
}

int WorkQueue::NumRequeues(const std::string& key) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

void WorkQueue::PromoteDueLocked() {
  const auto now = clock_.Now();
  while (!waiting_.empty() && waiting_.begin()->first <= now) {
    std::string key = waiting_.begin()->second;
    waiting_.erase(waiting_.begin());
    AddLocked(key);
  }
}

std::optional<std::string> WorkQueue::Get() {
  std::unique_lock<std::mutex> l(mu_);
  while (true) {
    if (shutting_down_) return std::nullopt;
    PromoteDueLocked();
    if (!queue_.empty()) break;
    if (waiting_.empty()) {
      cv_.wait(l);
    } else {
      clock_.WaitUntil(cv_, l, waiting_.begin()->first);
    }
  }
  std::string key = std::move(queue_.front());
  queue_.pop_front();
  dirty_.erase(key);
  processing_.insert(key);
  return key;
}

void WorkQueue::Done(const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  processing_.erase(key);
  if (dirty_.count(key) && !shutting_down_) {
    queue_.push_back(key);
    cv_.notify_one();
  }
  if (draining_ && processing_.empty()) cv_.notify_all();
}

void WorkQueue::ShutDown() {
  std::lock_guard<std::mutex> l(mu_);
  shutting_down_ = true;
  cv_.notify_all();
}

void WorkQueue::ShutDownWithDrain() {
  std::unique_lock<std::mutex> l(mu_);
  shutting_down_ = true;
  draining_ = true;
  cv_.notify_all();
  cv_.wait(l, [&] { return processing_.empty(); });
}

bool WorkQueue::shutting_down() const {
  std::lock_guard<std::mutex> l(mu_);
  return shutting_down_;
}

size_t WorkQueue::Len() const {
  std::lock_guard<std::mutex> l(mu_);
  return queue_.size();
}

}  // namespace rota::apiclient
