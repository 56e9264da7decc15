#pragma once

// Status writes off the scheduling loop. The queue controller decides in a pass and hands each
// object's new status to the writer, which sends it from its own threads, so that the next pass
// (which frees quota as workloads finish) never waits for the apiserver.
//
// Per object the writer keeps the order of writes and sends only the newest: a status queued for
// an object that is already queued replaces it (the older one is never sent), and an object is
// never written by two threads at once, so an older status cannot land after a newer one.
// Across objects, lower priority values go first (admissions and evictions before queue
// summaries before pending reasons), oldest first within a priority. Some threads may be kept
// for summaries (queue status and pending reasons) alone: on a saturated apiserver, where each
// write takes a second, a steady stream of admissions would otherwise hold every thread, and no
// queue would show its pending work for minutes.
//
// Thread-safe. The outcomes of failed writes, and of writes that asked for theirs, are kept for
// the loop to take.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

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
  // Sends one write; `report` says whether its outcome is kept for TakeDone(), and so whether
  // the object's new resourceVersion is read (a sender need not read the reply otherwise).
  using Sender = std::function<Outcome(const Write&, bool report)>;

  // `send` performs one write (called on the writer's threads, never twice at once for one key);
  // `on_failure` (optional) is called after every write that failed. `threads` send writes of
  // any priority, `summary_threads` more only queue status and pending reasons.
  StatusWriter(Sender send, int threads, int summary_threads, std::function<void()> on_failure = {});
  // Stops the threads after their current write; queued writes are dropped (the next leader
  // recomputes them from the objects).
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
  // Whether a write of the object is queued or being sent.
  bool Busy(const std::string& key) const;
  // Blocks until nothing is queued or being sent (tests, orderly shutdown).
  void Drain();

  struct Counts {
    uint64_t sent = 0, failed = 0, superseded = 0;
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
  void Work(bool summaries_only);
  void Ready(const std::string& key, const Entry& e);  // mu_ held
  using ReadySet = std::set<std::tuple<int, uint64_t, std::string>>;  // (priority, order, key)
  // The first ready write a thread may take, or ready_.end(). mu_ held.
  ReadySet::const_iterator NextFor(bool summaries_only) const;

  Sender send_;
  std::function<void()> on_failure_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_, summary_cv_, idle_cv_;
  std::map<std::string, Entry> queued_;                          // key -> newest unsent write
  ReadySet ready_;  // queued writes of objects not in flight
  std::set<std::string> in_flight_;
  size_t queued_by_priority_[kPriorities] = {};
  std::vector<Done> done_;
  uint64_t next_seq_ = 1;
  Counts counts_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace rota::controller
