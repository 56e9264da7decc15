#pragma once

// Status writes off the scheduling loop. The queue controller decides in a pass and hands each
// object's new status to the writer, which sends it from its own threads, so that the next pass
// (which frees quota as workloads finish) never waits for the apiserver.
//
// Per object the writer keeps the order of writes and sends only the newest: a status queued for
// an object that is already queued replaces it (the older one is never sent), and an object never
// has two writes in flight, so an older status cannot land after a newer one. Across objects,
// lower priority values go first (admissions and evictions before queue summaries before pending
// reasons), oldest first within a priority.
//
// A thread keeps several writes in flight through its Sink (for the apiserver, one connection
// that a single poll serves: a thread per write would cost each one a wake-up and its own reads).
// A polling thread is woken for writes that became ready once until it next takes ready writes
// (it takes them all), and after a poll that returned outcomes it pauses briefly so that the
// next poll collects several replies.
// One thread sends writes of any priority; another, if given room, only summaries (queue status
// and pending reasons): on a saturated apiserver, where each write takes a second, a steady
// stream of admissions would otherwise fill every place in flight, and no queue would show its
// pending work for minutes.
//
// Thread-safe. The outcomes of failed writes, and of writes that asked for theirs, are kept for
// the loop to take.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "rota/apiclient/clock.h"

namespace rota::controller {

class StatusWriter {
 public:
  enum Priority : int { kAdmission = 0, kQueueStatus = 1, kPending = 2 };
  static constexpr int kPriorities = 3;

  struct Write {
    std::string kind;  // "workloads", "clusterqueues", "localqueues": part of the key
    std::string ns, name;
    nlohmann::json body;
  };
  struct Outcome {
    bool ok = false;
    std::string resource_version;  // of the object after a successful write
    std::string error;
  };
  // What a write asked to be told: its sequence number (returned by Enqueue) and its outcome.
  struct Done {
    std::string key;
    uint64_t seq = 0;
    Outcome outcome;
  };
  // Sends writes, several at a time, for one of the writer's threads (each thread makes its own
  // and alone calls Start and Poll; Wake may come from any thread).
  class Sink {
   public:
    virtual ~Sink() = default;
    // Starts sending `w`, which stays where it is until Poll has returned its outcome (with `id`).
    // `report` says whether the outcome is kept for TakeDone(), and so whether the object's new
    // resourceVersion is read (a sink need not read the reply otherwise).
    virtual void Start(uint64_t id, const Write& w, bool report) = 0;
    // Waits up to `timeout` (or until Wake) for started writes to finish; returns their outcomes.
    virtual std::vector<std::pair<uint64_t, Outcome>> Poll(std::chrono::milliseconds timeout) = 0;
    // Makes a Poll in progress (or the next one) return at once.
    virtual void Wake() = 0;
  };
  using SinkFactory = std::function<std::unique_ptr<Sink>()>;

  // `make_sink` is called once on each of the writer's threads. One thread keeps up to
  // `in_flight` writes of any priority going, another (if `summary_in_flight` > 0) up to that
  // many queue status and pending reasons; `on_failure` (optional) is called after every write
  // that failed.
  // Its waits go through `clock`.
  StatusWriter(SinkFactory make_sink, int in_flight, int summary_in_flight, std::function<void()> on_failure = {},
               apiclient::Clock& clock = apiclient::RealClock());
  // Stops the threads; writes in flight are abandoned (the apiserver may or may not have applied
  // them) and queued ones dropped: the next leader recomputes them from the objects.
  ~StatusWriter();
  StatusWriter(const StatusWriter&) = delete;
  StatusWriter& operator=(const StatusWriter&) = delete;

  static std::string Key(const Write& w) { return w.kind + "/" + w.ns + "/" + w.name; }

  // Queues `w` (replacing any queued, unsent write of the same object) and returns its sequence
  // number. With `report`, its outcome is kept for TakeDone().
  uint64_t Enqueue(Priority priority, Write w, bool report = false);
  // Outcomes of failed and of reporting writes since the last call, in completion order.
  std::vector<Done> TakeDone();
  // Writes queued (not yet started) at `priority`.
  size_t Queued(Priority priority) const;
  // Blocks until at most `n` writes are queued (not yet started) at `priority`, or until `until`;
  // returns whether that many or fewer are queued. The loop waits so for room before a pass.
  bool WaitQueuedAtMost(Priority priority, size_t n, apiclient::Clock::TimePoint until) const;
  // Takes back write number `seq` of object `key` if it is still queued, not started: true when
  // it was (it will never be sent), false when it was sent, is being sent, or was replaced.
  bool Withdraw(const std::string& key, uint64_t seq);
  // Whether a write of the object is queued or being sent.
  bool Busy(const std::string& key) const;
  // Blocks until nothing is queued or being sent (tests, orderly shutdown).
  void Drain();

  struct Counts {
    uint64_t sent = 0, failed = 0, superseded = 0;
    uint64_t wakes = 0;  // polls cut short for a write that became ready
  };
  Counts counts() const;

 private:
  struct Entry {
    Priority priority = kPending;
    uint64_t order = 0;  // place in the queue within its priority
    uint64_t seq = 0;    // identifies the write (Enqueue's return value)
    bool report = false;
    Write write;
  };
  // A thread's loop: up to workers_[worker].room writes going at once through its own sink.
  void Work(int worker);
  // After a write finished: its outcome kept or counted, and the object's next write made ready.
  void Finish(const std::string& key, const Entry& e, Outcome outcome);
  void Ready(const std::string& key, const Entry& e);                 // mu_ held
  using ReadySet = std::set<std::tuple<int, uint64_t, std::string>>;  // (priority, order, key)
  // The first ready write a thread may take, or ready_.end(). mu_ held.
  ReadySet::const_iterator NextFor(bool summaries_only) const;

  apiclient::Clock& clock_;
  SinkFactory make_sink_;
  std::function<void()> on_failure_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_, summary_cv_, idle_cv_;
  mutable std::condition_variable taken_cv_;  // writes were taken from the queue (WaitQueuedAtMost)
  std::map<std::string, Entry> queued_;       // key -> newest unsent write
  ReadySet ready_;                            // queued writes of objects not in flight
  std::set<std::string> in_flight_;
  size_t queued_by_priority_[kPriorities] = {};
  std::vector<Done> done_;
  uint64_t next_seq_ = 1;
  Counts counts_;
  bool stopping_ = false;
  // Per thread: its sink (to wake it while it polls), the writes it has in flight, its room.
  struct Worker {
    Sink* sink = nullptr;
    size_t flying = 0;
    size_t room = 0;
    bool summaries_only = false;
    bool woken = false;  // its sink was woken and it has not looked for ready writes since
  };
  Worker workers_[2];
  std::vector<std::thread> threads_;
};

}  // namespace rota::controller
