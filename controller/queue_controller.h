#pragma once

// The queue controller behind `rota run`: informers on the Kueue objects and Namespaces feed the
// admission engine; its decisions are written back as Workload status (admission and Kueue's
// conditions, by server-side apply) and as ClusterQueue and LocalQueue status (counts and flavor
// usage). Writes happen only when something changed, so pending workloads cause no status churn.
//
// This is the part of the controller that works on Workloads directly (as Kueue's scheduler
// benchmark drives it). batch/v1 Job integration builds on it.
//
// Threads: Run() owns the scheduling loop; informer threads only mark it dirty.

#include <atomic>
#include <chrono>
#include <optional>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "rota/admission/engine.h"
#include "rota/api/kueue.h"
#include "rota/api/snapshot.h"
#include "rota/apiclient/client.h"
#include "rota/apiclient/events.h"
#include "rota/apiclient/informer.h"
#include "metrics.h"
#include "run_config.h"
#include "status_writer.h"

namespace rota::controller {

struct NamespaceInfo {
  std::string name;
  std::map<std::string, std::string> labels;
};

// How long changes gather before the scheduler's next pass: the configured batch period, or
// (1 / cpu_share - 1) times the CPU time the last pass took when that is longer (at most 2 s), so
// that under a steady stream of changes the loop uses at most about `cpu_share` of a core however
// deep the backlog (by default 1/21: 20 times the pass).
std::chrono::nanoseconds BatchWait(std::chrono::milliseconds batch_period, std::chrono::nanoseconds last_pass_cpu,
                                   double cpu_share = 1.0 / 21);

// A Workload as the queue controller's cache keeps it: what scheduling, status and the Job
// integration read, and nothing else. Pod templates keep only their scheduling fields
// (containers' names, resources and restart policies, overhead, nodeSelector, tolerations,
// affinity), and equal ones are one shared copy (`templates`: the Workloads of one Job template or
// sweep have the same); metadata keeps identity, times and owner references only, and unknown
// fields are dropped. A finished Workload keeps no templates, no admission and no condition but
// Finished. A cached Workload is never written back whole, so nothing is lost. Takes the parts it
// keeps out of `compact` (the informer's copy of the document, dropped after).
Result<api::Workload> DecodeCompactWorkload(api::Json& compact, api::JsonInterner& templates);

// How often a queue's status is written at most while its counts keep changing: every 3 s, or,
// with more than 150 ClusterQueues and LocalQueues in all, so that all of them busy at once are
// written at most 50 times a second on average (25 while the apiserver is behind on admissions:
// more than 75 queues; queues that became busy together come due together). What changes in between is held back, and the latest is sent when the interval is up.
std::chrono::steady_clock::duration QueueStatusInterval(size_t queues, bool apiserver_behind = false);

// Whether the apiserver is behind on admissions, from how long the scheduling loop waited for
// the status writer to take the last pass's admissions and evictions: behind once a wait takes
// `kBehindWait` or more, and for `kBehindHold` after the last such wait. While it is, summaries
// (queue status, Events) take half their budgets, so that admissions get the apiserver first.
class ApiserverBehind {
 public:
  static constexpr std::chrono::milliseconds kBehindWait{1000};
  static constexpr std::chrono::seconds kBehindHold{30};
  // After the loop's wait for the writer ended at `now`, having taken `waited`; returns whether
  // the apiserver is behind now.
  bool Observe(std::chrono::steady_clock::duration waited, std::chrono::steady_clock::time_point now);
  bool behind() const { return behind_; }

 private:
  std::optional<std::chrono::steady_clock::time_point> until_;
  bool behind_ = false;
};

class QueueController {
 public:
  using Logger = std::function<void(const std::string& level, const std::string& message)>;

  // `metrics` (optional) receives Kueue's metrics after every pass; `events` (optional) gets an
  // Event for every admission, preemption and change of pending reason.
  QueueController(apiclient::Client& client, RunConfig config, Logger log, Metrics* metrics = nullptr,
                  apiclient::EventRecorder* events = nullptr);
  ~QueueController();

  // Starts the informers (idempotent), waits for them to sync, then schedules after every change
  // until `stop` is set.
  void Run(const std::atomic<bool>& stop);
  void Start();
  bool HasSynced() const;

  // Called on an informer thread for every added, changed or deleted Workload. Set before Run.
  void OnWorkloadChange(std::function<void(const api::Workload&)> listener) {
    workload_listener_ = std::move(listener);
  }
  // The caches, for the Job integration (read-only).
  const apiclient::Informer<api::Workload>& workloads() const { return *workloads_; }
  const apiclient::Informer<api::LocalQueue>& local_queues() const { return *local_queues_; }
  const apiclient::Informer<api::WorkloadPriorityClass>& priority_classes() const { return *priority_classes_; }
  const apiclient::Informer<api::ResourceFlavor>& flavors() const { return *flavors_; }
  const apiclient::Informer<api::Cohort>& cohorts() const { return *cohorts_; }

  struct Stats {
    int64_t passes = 0;
    int64_t admitted = 0;
    int64_t preempted = 0;
    int64_t status_writes = 0;
    int64_t writer_wakes = 0;  // polls of the status writer cut short for a ready write
    int64_t write_errors = 0;
    // Pending reasons queued for writing: a workload's first, a new reason, or a new message for
    // the same reason (rewritten at most every 30 s).
    int64_t pending_first = 0;
    int64_t pending_new_reason = 0;
    int64_t pending_new_message = 0;
  };
  Stats stats() const;
  // Brings the status writer's figures into the Metrics given at construction (before a scrape).
  void ExportWriterMetrics();

 private:
  // Marks the loop dirty. A change that is not `urgent` cannot give a pass anything to decide
  // while no workload waits for quota (a workload finishing or going away, a queue's own status):
  // after a pass that found none waiting and decided nothing, such changes wait up to
  // kIdlePassInterval for their pass, which then only brings queue status and gauges up to date.
  void MarkDirty(bool urgent = true);
  void Pass();
  // A queue's workloads once a pass's decisions are applied: what its status and gauges show.
  // Views point into the kept snapshot, unchanged for the rest of the pass.
  struct QueueCounts {
    int32_t pending = 0, admitted = 0;
    // Of `pending`, by the pass's reason (ClusterQueues only): waiting for quota, or not
    // admissible as things are (Kueue's "active" and "inadmissible" pending workloads).
    int32_t waiting = 0, inadmissible = 0;
    std::map<std::pair<std::string_view, std::string_view>, int64_t> usage;  // (flavor, resource) -> milli
  };
  using CountsByName = std::unordered_map<std::string_view, QueueCounts>;
  // The counts of `name`, or empty ones when it has none (never adds an entry: its key would
  // view `name`, which may not live as long as the map).
  static const QueueCounts& CountsOf(const CountsByName& counts, std::string_view name);
  // Metrics of one pass, from the kept snapshot with the pass's decisions applied and the
  // ClusterQueues' counts made from it.
  void Record(const api::ClusterState& state, const admission::Decisions& d, const CountsByName& cq_counts,
              double pass_seconds);
  std::vector<apiclient::Reflector*> Reflectors() const;
  std::function<void(const api::Workload&)> workload_listener_;

  apiclient::Client& client_;
  RunConfig config_;
  Logger log_;
  Metrics* metrics_;
  apiclient::EventRecorder* events_;

  api::JsonInterner templates_;  // the cached Workloads' pod templates, one copy of each
  std::unique_ptr<apiclient::Informer<api::ResourceFlavor>> flavors_;
  std::unique_ptr<apiclient::Informer<api::Cohort>> cohorts_;
  std::unique_ptr<apiclient::Informer<api::ClusterQueue>> cluster_queues_;
  std::unique_ptr<apiclient::Informer<api::LocalQueue>> local_queues_;
  std::unique_ptr<apiclient::Informer<api::WorkloadPriorityClass>> priority_classes_;
  std::unique_ptr<apiclient::Informer<api::Workload>> workloads_;
  std::unique_ptr<apiclient::Informer<NamespaceInfo>> namespaces_;

  // A pass's copies of an informer's objects, kept for the next pass, which reuses the copy of
  // each object the cache still holds unchanged (the same shared object) instead of copying it
  // again: copying every ClusterQueue's spec and status each pass, and destroying the copies,
  // was a twentieth of a pass in Kueue's baseline benchmark.
  template <typename T>
  struct KeptCopies {
    std::vector<std::shared_ptr<const T>> from;  // the objects copied, in the informer's order
    std::vector<T> copies;                       // copies[i] of *from[i]; empty while a pass has them
    // This pass's copies of the informer's objects.
    std::vector<T> Take(const apiclient::Informer<T>& informer) {
      std::vector<std::shared_ptr<const T>> now = informer.List();
      std::vector<T> out;
      out.reserve(now.size());
      // (The informer's order moves only when its objects come or go: an unchanged object is at
      // its old place, or copied again.)
      for (size_t i = 0; i < now.size(); ++i) {
        if (i < copies.size() && from[i] == now[i]) out.push_back(std::move(copies[i]));
        else out.push_back(*now[i]);
      }
      from = std::move(now);
      copies.clear();
      return out;
    }
    // The pass is done with the copies Take gave it (unchanged).
    void GiveBack(std::vector<T>&& used) {
      if (used.size() == from.size()) copies = std::move(used);
    }
  };
  KeptCopies<api::ClusterQueue> cq_copies_;
  KeptCopies<api::LocalQueue> lq_copies_;

  // Decisions written but not yet seen back through the Workload informer: the admission we
  // set (or nullopt when we cleared it), so that the next pass does not count them twice.
  // `written_version` is the resourceVersion our write returned: once the cache is at or past
  // it, the cache is the truth even if someone else has changed the admission since.
  struct Assumed {
    std::optional<api::Admission> admission;
    uint64_t write = 0;           // the StatusWriter's sequence number of our write
    std::string written_version;  // set once that write has succeeded
    uint64_t seen = 0;            // the last pass whose cache still had the workload
  };
  std::unordered_map<std::string, Assumed> assumed_;  // looked up for every workload in a pass

  // What a queue's status (same keys) was last found up to date with: the versions of the objects
  // it is made from, and the queue's counts. A pass that finds the same skips building and
  // comparing the status (JSON), which for a thousand queues was most of a pass. (Not kept for
  // objects without a resourceVersion: a change to them could not be told.)
  struct QueueMemo {
    std::string versions;
    int32_t pending = 0, admitted = 0;
    std::vector<std::tuple<std::string, std::string, int64_t>> usage;  // (flavor, resource, milli)
  };
  static bool SameAsMemo(const QueueMemo& memo, const std::string& versions, const QueueCounts& counts);
  static bool SameCounts(const QueueMemo& memo, const QueueCounts& counts);
  static bool Idle(const QueueCounts& counts) { return counts.pending == 0 && counts.admitted == 0; }
  static QueueMemo MemoOf(std::string versions, const QueueCounts& counts);
  // Queue status writes, per "clusterqueues/NAME" or "localqueues/NS/NAME": when each was last
  // written and whether it was idle then, and which changed ones are held back until their
  // queue's interval is up. A held status is not built until then: the first pass after it is
  // due builds the queue's status as it is by then (Run wakes a pass for it). Loop thread only.
  struct QueueWritten {
    std::chrono::steady_clock::time_point at;
    bool idle = false;  // nothing pending or admitted
  };
  struct HeldQueueStatus {
    std::chrono::steady_clock::time_point due;
    uint64_t pass = 0;  // the last pass that found the queue changed
  };
  // Whether the status of a queue whose counts or objects changed may be built and written now:
  // its interval is up, or it has just become idle (nothing pending or admitted) or busy again,
  // since that a queue has drained is what people and tools wait for (Kueue's benchmark runner
  // ends its run once every ClusterQueue shows it, so one still showing idle while workloads
  // wait in it would end the run early). If not, it is held. (A change within the interval is
  // often our own write coming back; the pass that finds the held status due also finds it up
  // to date, and writes nothing.)
  bool QueueStatusDue(const std::string& key, const QueueCounts& counts, std::chrono::steady_clock::time_point now,
                      std::chrono::steady_clock::duration interval, uint64_t pass);
  void QueueStatusWritten(const std::string& key, const QueueCounts& counts, std::chrono::steady_clock::time_point now);
  // When the first held status is due, if any is (after `after`: one due before the last pass
  // began is one that pass did not get to, and waits for the next).
  std::optional<std::chrono::steady_clock::time_point> NextHeldQueueStatus(std::chrono::steady_clock::time_point after) const;
  std::map<std::string, QueueWritten> queue_written_;
  std::map<std::string, HeldQueueStatus> held_queue_status_;
  // Makes the loop run a pass by `due` even if nothing changes (a pending reason is then due).
  void WakeAt(std::chrono::steady_clock::time_point due);
  std::unordered_map<std::string, QueueMemo> queue_memo_;
  // What each ClusterQueue's Prometheus gauges were last made from (Record): the spec's
  // generation (or resourceVersion) and the counts.
  struct GaugeMemo {
    std::string version;
    int32_t waiting = 0, inadmissible = 0;
    QueueMemo counts;  // (its versions unused)
    // Where the registry keeps the series that follow the counts (Record's order); valid until
    // Record replaces the queue's series. Empty: the series are made again on the next change.
    std::vector<Metrics::GaugeSlot> slots;
  };
  std::unordered_map<std::string, GaugeMemo> gauge_memo_;
  // Pending workloads: the pending condition last queued for writing, and when (by "ns/name").
  struct PendingWritten {
    std::chrono::steady_clock::time_point at;
    std::string reason, message;
  };
  std::map<std::string, PendingWritten> pending_written_;
  // Per ClusterQueue: the workload at the head of its queue waiting for quota, and since when.
  struct Head {
    std::string key;
    std::chrono::steady_clock::time_point since;
  };
  std::unordered_map<std::string, Head> heads_;
  api::SnapshotBuilder snapshot_builder_;  // used by Pass only: the snapshot kept between passes
  admission::Workspace workspace_;         // used by Pass only: the engine's memory between passes
  // What an admitted workload adds to its queues' counts, made from the snapshot's entry i and
  // kept (entry_usage_[i]) while the entry's stamp stays the same. Flavor and resource are a
  // number of usage_key_numbers_ (usage_keys_ gives it back), so that counting compares numbers.
  struct EntryUsage {
    uint64_t stamp = 0;                  // SnapshotBuilder::StampOf the entry it was made from
    bool in_own_cluster_queue = false;   // its admission names the ClusterQueue its LocalQueue points to
    std::vector<std::pair<uint32_t, int64_t>> usage;  // (usage key, milli)
  };
  EntryUsage UsageOf(size_t i);
  std::vector<EntryUsage> entry_usage_;
  std::map<std::pair<std::string, std::string>, uint32_t> usage_key_numbers_;  // (flavor, resource) -> number
  std::vector<const std::pair<std::string, std::string>*> usage_keys_;          // by number: its key there
  static constexpr size_t kMaxUsageKeys = 4096;  // beyond this many, the table starts again
  std::chrono::nanoseconds last_pass_cpu_{0};  // CPU time of the last pass (Run's thread only)
  ApiserverBehind apiserver_;  // Run's thread only (Pass runs on it)
  double events_qps_ = 0;      // the recorder's own rate, given back when the apiserver catches up
  // Before this pass (Run's thread only): the batch it waited for, and then its wait for the writer.
  std::chrono::nanoseconds batch_waited_{0}, writer_waited_{0};

  mutable std::mutex mu_;
  std::optional<std::chrono::steady_clock::time_point> wake_at_;  // guarded by mu_
  std::condition_variable cv_;
  bool dirty_ = false;
  bool urgent_ = false;  // guarded by mu_: a change since the last pass was urgent (MarkDirty)
  bool last_pass_idle_ = false;  // the last pass found none waiting for quota, decided nothing (Run's thread)
  Stats stats_;

  // Sends the status the passes decide, off the loop. Declared last, so destroyed (its threads
  // joined) first: its threads use the above, mu_ and cv_ included (a failed write marks the
  // loop dirty).
  std::unique_ptr<StatusWriter> writer_;
};

}  // namespace rota::controller
