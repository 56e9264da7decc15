#pragma once

// A controller's work queue, as client-go's: an item queued while it is waiting runs once; an
// item queued while it is being processed runs once more after Done(); failures are retried with
// per-item exponential backoff bounded by an overall token bucket; delayed adds; a clean shutdown.
//
// Thread-safe. Typical worker loop:
//   while (auto key = q.Get()) { if (Reconcile(*key)) q.Forget(*key); else q.AddRateLimited(*key);
//                                q.Done(*key); }

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "rota/apiclient/clock.h"

namespace rota::apiclient {

struct RateLimit {
  std::chrono::milliseconds item_base{5};           // first retry of an item
  std::chrono::milliseconds item_max{1000 * 1000};  // cap of its exponential backoff
  double qps = 10;                                  // overall retry rate...
  int burst = 100;                                  // ...and burst
};

class WorkQueue {
 public:
  explicit WorkQueue(Clock& clock = RealClock(), RateLimit limit = {});

  void Add(const std::string& key);
  void AddAfter(const std::string& key, Clock::Duration delay);
  // Adds after the item's backoff (max of its exponential delay and the overall bucket's).
  void AddRateLimited(const std::string& key);
  // The item succeeded: forget its failures.
  void Forget(const std::string& key);
  int NumRequeues(const std::string& key) const;

  // Blocks until an item is ready, or returns nullopt once the queue is shut down.
  std::optional<std::string> Get();
  // Marks an item processed; if it was added meanwhile, it is queued again.
  void Done(const std::string& key);

  // Get returns nullopt from now on; items not yet taken are dropped.
  void ShutDown();
  // Like ShutDown, but first waits for the items being processed to be Done.
  void ShutDownWithDrain();
  bool shutting_down() const;

  size_t Len() const;  // items ready to be taken

 private:
  void AddLocked(const std::string& key);
  void PromoteDueLocked();

  Clock& clock_;
  RateLimit limit_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  std::unordered_set<std::string> dirty_;                 // queued, not yet taken
  std::unordered_set<std::string> processing_;            // taken, not yet Done
  std::multimap<Clock::TimePoint, std::string> waiting_;  // delayed adds by ready time
  std::unordered_map<std::string, int> failures_;
  TokenBucket bucket_;  // the overall retry rate
  bool shutting_down_ = false;
  bool draining_ = false;
};

}  // namespace rota::apiclient
