#pragma once

// Kubernetes Events (core/v1) for the objects a controller acts on, with client-go's
// de-duplication: the same event for the same object within ten minutes increments the existing
// Event's count instead of creating a new one, and each object gets at most `burst` distinct
// events, refilled one per `refill` — so a busy controller cannot flood the apiserver.
//
// Thread-safe. Record() writes before it returns; Post() queues the event for a background
// sender and returns at once, so that a controller's loop never waits on Events. As with
// client-go's broadcaster, posted events are best effort: the sender writes at most `qps` per
// second (after a burst), and when `max_queued` are waiting a new one is dropped and counted.
// The sender writes the events that are due together, several at once over one Pipeline of the
// client, in rounds a tenth of a second apart while events keep coming: one at a time, each one
// cost a wake-up and a round trip of its own.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rota/apiclient/client.h"
#include "rota/apiclient/lru.h"

namespace rota::apiclient {

struct ObjectReference {
  std::string api_version;
  std::string kind;
  std::string ns;
  std::string name;
  std::string uid;
};

struct EventLimits {
  int per_object_burst = 25;                                         // distinct events per object...
  std::chrono::seconds per_object_refill = std::chrono::minutes(5);  // ...refilled one per this
  double qps = 50;           // Post()ed events written per second, all objects together...
  int burst = 100;           // ...after a burst of this many
  size_t max_queued = 1000;  // Post()ed events waiting beyond this are dropped
  // Events and objects remembered for aggregation and the per-object limit, the least recently
  // used forgotten beyond this (client-go's correlator keeps 4096 too).
  size_t max_remembered = 4096;
};

class EventRecorder {
 public:
  EventRecorder(Client& client, std::string component, EventLimits limits = {});
  // Stops the sender at once (it does not wait for its rate limit); events still queued, or not
  // yet answered, are dropped.
  ~EventRecorder();

  // `type` is "Normal" or "Warning"; `reason` a CamelCase word; `message` a sentence.
  // Returns false when the event was dropped by the spam filter or could not be written.
  bool Record(const ObjectReference& object, const std::string& type, const std::string& reason,
              const std::string& message);

  // Queues the event for the background sender (started on first use). Returns false, and drops
  // the event, when `max_queued` are already waiting: Events are best effort, admissions are not.
  bool Post(const ObjectReference& object, const std::string& type, const std::string& reason,
            const std::string& message);
  // Events Post() dropped because the queue was full.
  uint64_t dropped() const;
  // Changes how many Post()ed events are written per second (EventLimits::qps) from now on; the
  // burst stays. A controller lowers it while the apiserver is behind on the writes that matter
  // more, and sets it back after.
  void SetQps(double qps) { bucket_.SetRate(qps); }
  double qps() const { return bucket_.rate(); }

 private:
  struct Queued {
    ObjectReference object;
    std::string type, reason, message;
  };
  // What recording one event takes: a new Event, a higher count on the Event of an earlier same
  // event, or nothing (the spam filter dropped it).
  struct Write {
    enum class Kind { kNone, kCreate, kCount } kind = Kind::kNone;
    std::string ns, name;  // of the Event
    Json body;             // the Event, or the patch of its count
  };
  Write Decide(const ObjectReference& object, const std::string& type, const std::string& reason,
               const std::string& message);
  void Send();  // the sender's thread
  struct Seen {
    std::string event_name;
    std::string event_namespace;
    int count = 0;
    Clock::TimePoint last;
  };
  struct Bucket {
    double tokens;
    Clock::TimePoint last;
  };
  // The tokens `b` holds at `now`: what it had, refilled since, at most the burst.
  double Refilled(const Bucket& b, Clock::TimePoint now) const;

  Client& client_;
  std::string component_;
  EventLimits limits_;
  TokenBucket bucket_;  // the sender's rate
  std::mutex mu_;
  // By a hash of what makes two events the same one (object, type, reason, message) and of the
  // object, rather than by those texts, which take far more memory to remember than a hash.
  // Two events sharing a 64-bit hash would share a count.
  LruMap<uint64_t, Seen> seen_;
  LruMap<uint64_t, Bucket> buckets_;  // per object uid (or key)
  uint64_t serial_ = 0;
  Clock::TimePoint last_prune_{};

  mutable std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  // Notified only when the recorder is destroyed: ends the sender's wait for its rate limit's
  // tokens (Post()s do not wake that wait).
  std::condition_variable stop_cv_;
  std::deque<Queued> queue_;
  std::unique_ptr<Client::Pipeline> pipeline_;  // the sender's; made with it
  std::thread sender_;
  bool stopping_ = false;
  uint64_t dropped_ = 0;
};

}  // namespace rota::apiclient
