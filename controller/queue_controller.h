#pragma once

// The queue controller behind `rota run` (Kueue's scheduler): a loop of passes over the cluster
// cache. Each pass takes a snapshot, overlays the admissions it assumed, runs the admission
// engine, and hands its decisions to the status writer as Workload status (admission and Kueue's
// conditions, by server-side apply), pending reasons, ClusterQueue and LocalQueue status, Events
// and Prometheus metrics. Writes happen only when something changed, so pending workloads cause
// no status churn. The parts each own their state (scheduling/); this class tells the story.
//
// Threads: Run() owns the scheduling loop and every part; the cache's threads only mark the loop
// dirty; the status writer sends from its own threads.

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "budget/budget_controller.h"
#include "cache/cluster_cache.h"
#include "cache/compact_workload.h"
#include "checkpoint/requests.h"
#include "fairsharing/admission_usage.h"
#include "logger.h"
#include "metrics.h"
#include "rota/admission/engine.h"
#include "rota/api/snapshot.h"
#include "rota/apiclient/client.h"
#include "rota/apiclient/clock.h"
#include "rota/apiclient/events.h"
#include "run_config.h"
#include "scheduling/assumed_admissions.h"
#include "scheduling/heartbeat.h"
#include "scheduling/incremental_pass.h"
#include "scheduling/pacing.h"
#include "scheduling/pass_trigger.h"
#include "scheduling/pending_reasons.h"
#include "scheduling/preemption_hold.h"
#include "scheduling/queue_metrics.h"
#include "scheduling/queue_status.h"
#include "scheduling/queue_tally.h"
#include "scheduling/state_copies.h"
#include "scheduling/stopped_queues.h"
#include "scheduling/tuning.h"
#include "status_writer.h"

namespace rota::controller {

// Sees every pass (the visibility API's views and the status page's activity are made this way):
// called on the loop thread, after a pass has applied its decisions to the snapshot. It must be
// cheap unless it has a reader to serve.
class PassObserver {
 public:
  virtual ~PassObserver() = default;
  // `now`: the pass's wall time (Unix seconds).
  virtual void Observe(const api::SnapshotBuilder& snapshot, const admission::Decisions& d, int64_t now) = 0;
};

class QueueController {
 public:
  using Logger = controller::Logger;

  // Reads `cache` (whose changes mark the loop dirty: construct before the cache starts) and
  // writes through `client`. `metrics` (optional) receives Kueue's metrics after every pass;
  // `events` (optional) gets an Event for every admission, preemption and change of pending
  // reason. All waiting and time stamps go through `clock`.
  QueueController(ClusterCache& cache, apiclient::Client& client, RunConfig config, Logger log,
                  Metrics* metrics = nullptr, apiclient::EventRecorder* events = nullptr,
                  apiclient::Clock& clock = apiclient::RealClock(), SchedulingTuning tuning = {});
  ~QueueController();

  // Starts the cache (if not started), waits for it to sync, then schedules after every change
  // until `stop` is set.
  void Run(const std::atomic<bool>& stop);

  struct Stats {
    int64_t passes = 0;
    int64_t admitted = 0;
    int64_t preempted = 0;
    int64_t status_writes = 0;
    int64_t writer_wakes = 0;  // polls of the status writer cut short for a ready write
    int64_t write_errors = 0;
    // Pending reasons queued for writing: a workload's first, a new reason, or a new message for
    // the same reason.
    int64_t pending_first = 0;
    int64_t pending_new_reason = 0;
    int64_t pending_new_message = 0;
  };
  Stats stats() const;
  // For /healthz: how long the loop, once running, has shown no progress (no pass ended, no wait
  // on the apiserver or the caches came round) when that is more than tuning's liveness_stall;
  // nullopt while it is healthy or not running (a follower). Thread-safe.
  std::optional<apiclient::Clock::Duration> Stalled() const;
  // Brings the status writer's figures into the Metrics given at construction (before a scrape).
  void ExportWriterMetrics();
  // Set before Run; the observer outlives the controller's loop.
  void SetPassObserver(PassObserver* observer) { observer_ = observer; }
  // Set before Run: the budgets' gates each pass puts in its snapshot (docs/budgets.md).
  void SetBudgets(const BudgetController* budgets) { budgets_ = budgets; }
  // Set before Run, with admission fair sharing: the LocalQueues' usage each pass orders by.
  void SetAdmissionUsage(const AdmissionUsage* usage) { admission_usage_ = usage; }
  // Runs a pass soon, whether or not anything changed. Any thread.
  void Wake() { trigger_.MarkDirty(); }

 private:
  using TimePoint = apiclient::Clock::TimePoint;
  // A pass's times: the loop's clock when it began, and the wall clock.
  struct PassTimes {
    TimePoint start;
    int64_t wall_seconds = 0;
    std::string wall;  // RFC 3339
  };
  void Pass();
  void Beat() { heartbeat_.Beat(clock_.Now()); }
  // Waits the batch period (stretched after a costly pass) for changes to settle into one pass.
  void WaitForBatch(bool idle_wake);
  // Backpressure: waits until the writer has taken most of the last pass's admissions (and, for
  // a while, its queue status); notes whether the apiserver is behind. Returns when it began.
  TimePoint WaitForWriter(const std::atomic<bool>& stop);
  void ObserveApiserver(std::chrono::steady_clock::duration waited, TimePoint now);
  // The Workloads the pass schedules: the cache's unfinished ones, with our assumed writes.
  void OverlayWorkloads(api::ClusterState& state, uint64_t pass);
  void TakeWriterOutcomes();
  std::vector<WorkloadWrite> DecisionWrites(const admission::Decisions& d, const HeldPreemptions& held,
                                            const CheckpointPass& checkpoints, const std::vector<Drained>& drained,
                                            const std::string& now) const;
  // A victim whose admission was decided but not yet sent is not evicted: the admission is taken
  // back from the writer, and it is pending again as if never admitted. Returns how many.
  size_t WithdrawUnsentAdmissions(admission::Decisions& d);
  // The preemptions of the pass, held for pods to stop and for checkpoints (checkpoint/).
  HeldPreemptions HoldPreemptions(admission::Decisions& d, const PassTimes& times, CheckpointPass& checkpoints);
  void TellCheckpoints(const CheckpointPass& checkpoints, const admission::Decisions& d, int64_t now);
  void EnqueueDecisions(std::vector<WorkloadWrite>& writes);
  // Applies the decisions to the kept snapshot's entries, so that the tally counts them.
  void ApplyToSnapshot(const admission::Decisions& d, const HeldPreemptions& held, const std::vector<Drained>& drained,
                       int64_t now);
  void Log(const admission::Decisions& d) const;
  std::string EngineSummary() const;  // what the engine did in the pass, for its debug line
  struct PassSummary;
  void Finish(admission::Decisions&& d, const PassSummary& s);
  const api::Workload* ObjectOf(const std::string& key) const { return snapshot_builder_.Object(key); }

  ClusterCache& cache_;
  RunConfig config_;
  Logger log_;
  Metrics* metrics_;
  apiclient::EventRecorder* events_;
  apiclient::Clock& clock_;
  const SchedulingTuning tuning_;
  Heartbeat heartbeat_;  // the loop's last sign of progress, for /healthz

  // The parts. Loop thread only, but for the trigger (any thread).
  PassTrigger trigger_;
  StateCopies copies_;
  AssumedAdmissions assumed_;
  PreemptionHold preemption_hold_{tuning_.preemptor_first};
  DrainsInFlight drains_in_flight_;
  CheckpointRequests checkpoints_;
  PendingReasons pending_;
  QueueTally tally_;
  QueueStatus queue_status_;
  std::optional<QueueMetrics> queue_metrics_;  // with `metrics_`
  ApiserverBehind apiserver_;
  api::SnapshotBuilder snapshot_builder_;  // the snapshot kept between passes
  IncrementalPass engine_;                 // the engine, and what it keeps between passes

  PassObserver* observer_ = nullptr;
  const BudgetController* budgets_ = nullptr;
  const AdmissionUsage* admission_usage_ = nullptr;
  double events_qps_ = 0;  // the recorder's own rate, given back when the apiserver catches up
  // Loop thread: the CPU time of the last pass, whether it was idle (no workload waiting for
  // quota, nothing decided), and the waits before this pass.
  std::chrono::nanoseconds last_pass_cpu_{0};
  bool last_pass_idle_ = false;
  std::chrono::nanoseconds batch_waited_{0}, writer_waited_{0};

  mutable std::mutex mu_;
  Stats stats_;  // guarded by mu_

  // Sends the status the passes decide, off the loop. Declared last, so destroyed (its threads
  // joined) first: its threads use the trigger (a failed write marks the loop dirty).
  std::unique_ptr<StatusWriter> writer_;
};

}  // namespace rota::controller
