#include "queue_controller.h"

#include <algorithm>

#include "checkpoint/checkpoint_metrics.h"
#include "rota/api/checkpoint.h"
#include "rota/apiclient/thread_name.h"
#include "scheduling/status_apply_sink.h"
#include "scheduling/workload_events.h"

namespace rota::controller {

// What a pass found and did, for the loop's state, its log line and Stats.
struct QueueController::PassSummary {
  uint64_t number = 0;
  PassTimes times;
  size_t deferred = 0;  // admissions left to the next pass by the change limit
  bool stopped_early = false;
  size_t waiting = 0;  // workloads waiting for quota
  size_t drained = 0, pending_writes = 0, queue_writes = 0;
  size_t withdrawn = 0;  // admissions taken back before they were sent, instead of evictions
  int64_t pending_first = 0, pending_new_reason = 0, pending_new_message = 0;
};

QueueController::QueueController(ClusterCache& cache, apiclient::Client& client, RunConfig config, Logger log,
                                 Metrics* metrics, apiclient::EventRecorder* events, apiclient::Clock& clock,
                                 SchedulingTuning tuning)
    : cache_(cache),
      config_(std::move(config)),
      log_(std::move(log)),
      metrics_(metrics),
      events_(events),
      clock_(clock),
      tuning_(tuning),
      trigger_(clock_, tuning_),
      checkpoints_(
          CheckpointTimeouts{std::chrono::duration_cast<std::chrono::seconds>(config_.checkpoint_default_timeout),
                             std::chrono::duration_cast<std::chrono::seconds>(config_.checkpoint_max_timeout)}),
      pending_(tuning_),
      tally_(tuning_),
      apiserver_(tuning_) {
  if (events_) events_qps_ = events_->qps();
  if (metrics_) {
    queue_metrics_.emplace(*metrics_);
    metrics_->Set("rota_apiserver_behind", {}, 0);
  }
  cache_.OnChange([this](bool may_decide) { trigger_.MarkDirty(may_decide); });
  cache_.OnWorkloadChange([this](const api::Workload& w) { checkpoints_.Observe(w); });
  writer_ = std::make_unique<StatusWriter>(
      [this, &client] { return NewApplySink(client, log_); }, tuning_.writes_in_flight,
      tuning_.summary_writes_in_flight, [this] { trigger_.MarkDirty(); },  // a failed write is retried by the next pass
      clock_);
}

QueueController::~QueueController() = default;

QueueController::Stats QueueController::stats() const {
  Stats s;
  {
    std::lock_guard<std::mutex> l(mu_);
    s = stats_;
  }
  const StatusWriter::Counts c = writer_->counts();
  s.status_writes = static_cast<int64_t>(c.sent);
  s.write_errors = static_cast<int64_t>(c.failed);
  s.writer_wakes = static_cast<int64_t>(c.wakes);
  return s;
}

void QueueController::ExportWriterMetrics() {
  if (!metrics_) return;
  const StatusWriter::Counts c = writer_->counts();
  metrics_->Set("rota_status_writes_total", {{"result", "success"}}, static_cast<double>(c.sent));
  metrics_->Set("rota_status_writes_total", {{"result", "error"}}, static_cast<double>(c.failed));
  for (const auto& [priority, name] :
       {std::pair{StatusWriter::kAdmission, "admission"}, std::pair{StatusWriter::kQueueStatus, "queue"},
        std::pair{StatusWriter::kPending, "pending"}}) {
    metrics_->Set("rota_status_writes_queued", {{"priority", name}}, static_cast<double>(writer_->Queued(priority)));
  }
}

void QueueController::Run(const std::atomic<bool>& stop) {
  cache_.Start();
  Beat();
  while (!stop && !cache_.HasSynced()) {
    clock_.SleepFor(std::chrono::milliseconds(20));
    Beat();
  }
  // (No admission before the budgets are known: an exhausted team's workloads would slip through.)
  while (!stop && ((budgets_ && !budgets_->Synced()) || (admission_usage_ && !admission_usage_->Synced()))) {
    clock_.SleepFor(std::chrono::milliseconds(20));
    Beat();
  }
  log_("info", "caches synced; scheduling");
  trigger_.MarkDirty();
  TimePoint last_pass = clock_.Now(), last_pass_start = last_pass;
  while (!stop) {
    const auto due = trigger_.Wait(stop, last_pass, last_pass_idle_, queue_status_.NextHeld(last_pass_start));
    if (!due) break;
    WaitForBatch(due->idle_wake);
    const TimePoint writer_wait_start = WaitForWriter(stop);
    // (Thread CPU: what a pass costs, whatever else shares the machine.)
    const auto cpu_before = apiclient::ThisThreadCpu();
    last_pass_start = clock_.Now();
    writer_waited_ = last_pass_start - writer_wait_start;
    Pass();
    last_pass_cpu_ = apiclient::ThisThreadCpu() - cpu_before;
    last_pass = clock_.Now();
    Beat();
  }
  heartbeat_.Stop();
}

std::optional<apiclient::Clock::Duration> QueueController::Stalled() const {
  return heartbeat_.Stalled(clock_.Now(), tuning_.liveness_stall);
}

void QueueController::WaitForBatch(bool idle_wake) {
  // (After an idle wait, the changes have had their interval to settle.)
  const auto wait = idle_wake
                        ? std::chrono::nanoseconds(0)
                        : BatchWait(config_.batch_period, last_pass_cpu_, config_.cpu_share, tuning_.max_batch_stretch);
  if (metrics_) {
    metrics_->Set("rota_scheduling_batch_seconds", {}, std::chrono::duration<double>(wait).count());
    metrics_->Set("rota_scheduling_pass_cpu_seconds", {}, std::chrono::duration<double>(last_pass_cpu_).count());
  }
  clock_.SleepFor(std::chrono::duration_cast<apiclient::Clock::Duration>(wait));
  batch_waited_ = wait;
}

QueueController::TimePoint QueueController::WaitForWriter(const std::atomic<bool>& stop) {
  // Only a pass queues admissions and queue status, so neither count grows meanwhile; the writer
  // wakes the waits as it takes writes. Pending reasons are not waited for.
  const TimePoint start = clock_.Now();
  while (!stop && !writer_->WaitQueuedAtMost(StatusWriter::kAdmission, tuning_.pass_low_water,
                                             clock_.Now() + tuning_.stop_check)) {
    Beat();  // (waiting on the apiserver: a restart would not help)
  }
  // A long wait here means that the apiserver, not the loop, sets the pace of admissions.
  const TimePoint taken = clock_.Now();
  ObserveApiserver(taken - start, taken);
  const TimePoint queue_wait_end = start + tuning_.max_queue_status_wait;
  while (!stop && clock_.Now() < queue_wait_end &&
         !writer_->WaitQueuedAtMost(StatusWriter::kQueueStatus, 0,
                                    std::min(queue_wait_end, clock_.Now() + tuning_.stop_check))) {
  }
  return start;
}

void QueueController::ObserveApiserver(std::chrono::steady_clock::duration waited, TimePoint now) {
  const bool was_behind = apiserver_.behind();
  const bool behind = apiserver_.Observe(waited, now);
  if (behind == was_behind) return;
  // While the apiserver is behind, summaries (queue status, Events) take half their budgets, so
  // that admissions get it first.
  if (events_ && events_qps_ > 0) events_->SetQps(behind ? events_qps_ / 2 : events_qps_);
  if (metrics_) metrics_->Set("rota_apiserver_behind", {}, behind ? 1 : 0);
  log_("info", behind ? "the apiserver is behind on admissions: queue status and Events at half their rates"
                      : "the apiserver has caught up with admissions: queue status and Events at their full rates");
}

void QueueController::TakeWriterOutcomes() {
  // An assumed write either succeeded (the cache is the truth once it reaches the version the
  // write returned) or failed (the cache stays the truth, and the next pass decides again); a
  // failed pending reason is written again.
  constexpr std::string_view kPrefix = "workloads/";
  for (auto& done : writer_->TakeDone()) {
    if (done.key.compare(0, kPrefix.size(), kPrefix) != 0) continue;
    const std::string key = done.key.substr(kPrefix.size());
    if (done.outcome.ok) {
      assumed_.WriteSucceeded(key, done.seq, done.outcome.resource_version);
    } else {
      pending_.Forget(key);
      assumed_.WriteFailed(key, done.seq);
      checkpoints_.WriteFailed(key);
    }
  }
}

void QueueController::OverlayWorkloads(api::ClusterState& state, uint64_t pass) {
  // An object the snapshot builder holds from the last pass is only vouched for, not copied
  // (SnapshotBuilder::StillHas); finished Workloads are not in the cache's view at all.
  assumed_.BeginPass(pass);
  size_t place = 0;  // in the view, which moves few of its entries between passes
  cache_.workloads().ForEachInView([&](const apiclient::Informer<api::Workload>::ViewEntry& e) {
    const size_t here = place++;
    if (assumed_.MayHold(e.key_hash) && assumed_.Contains(*e.key)) {
      state.workloads.push_back(assumed_.Overlay(*e.key, e.object));
    } else if (!snapshot_builder_.StillHas(e.object.get(), here)) {
      state.workloads.push_back(e.object);
    }
  });
  assumed_.EndPass();
}

std::vector<WorkloadWrite> QueueController::DecisionWrites(const admission::Decisions& d, const HeldPreemptions& held,
                                                           const CheckpointPass& checkpoints,
                                                           const std::vector<Drained>& drained,
                                                           const std::string& now) const {
  std::vector<WorkloadWrite> writes;
  for (const auto& a : d.admitted) writes.push_back(AdmitWrite(*ObjectOf(a.workload), a, now));
  for (const auto& p : d.preempted) {
    const api::Workload& w = *ObjectOf(p.workload);
    auto closing = checkpoints.closing.find(p.workload);
    const CheckpointCondition* c = closing == checkpoints.closing.end() ? nullptr : &closing->second;
    if (held.victims.count(p.workload))
      writes.push_back(EvictWrite(w, p, now, c));
    else
      writes.push_back(c ? PreemptWrite(w, p, now, *c) : PreemptWrite(w, p, now));
  }
  for (const WorkloadWrite& c : checkpoints.writes) writes.push_back(c);
  for (const Drained& e : drained) writes.push_back(e.write);
  return writes;
}

size_t QueueController::WithdrawUnsentAdmissions(admission::Decisions& d) {
  const size_t before = d.preempted.size();
  std::erase_if(d.preempted, [this](const admission::PreemptDecision& p) {
    const std::optional<uint64_t> seq = assumed_.AdmissionWrite(p.workload);
    if (!seq) return false;
    if (!writer_->Withdraw("workloads/" + p.workload, *seq)) return false;  // (StatusWriter::Key)
    assumed_.Forget(p.workload);
    if (admission::WorkloadSpec* w = snapshot_builder_.Mutable(p.workload)) w->admission.reset();
    return true;
  });
  return before - d.preempted.size();
}

HeldPreemptions QueueController::HoldPreemptions(admission::Decisions& d, const PassTimes& times,
                                                 CheckpointPass& checkpoints) {
  auto has_pods = [this](const std::string& key) {
    const api::Workload* w = ObjectOf(key);
    return w && !OwnerJob(*w).empty();
  };
  // A victim with pods to stop, or one to ask for a checkpoint, keeps its preemptor waiting.
  HeldPreemptions held = preemption_hold_.Hold(d, snapshot_builder_, [&](const std::string& key) {
    const api::Workload* w = ObjectOf(key);
    return has_pods(key) || (w && api::Checkpointable(w->metadata.annotations));
  });
  checkpoints =
      checkpoints_.Decide(d, held, preemption_hold_, snapshot_builder_, times.wall_seconds, times.wall, has_pods);
  if (checkpoints.next_deadline) {
    trigger_.WakeAt(times.start +
                    std::chrono::seconds(std::max<int64_t>(0, *checkpoints.next_deadline - times.wall_seconds)));
  }
  return held;
}

void QueueController::TellCheckpoints(const CheckpointPass& checkpoints, const admission::Decisions& d, int64_t now) {
  if (metrics_) RecordCheckpointMetrics(*metrics_, checkpoints, d, snapshot_builder_, now);
  for (const auto& o : checkpoints.outcomes) {
    log_("info", "checkpoint of " + o.workload + ": " + o.result + " (" + o.message + ")");
    const api::Workload* w = ObjectOf(o.workload);
    if (!events_ || !w) continue;
    const bool timed_out = o.result == "timed_out";
    (void)events_->Post(
        {std::string(api::kApiVersion), "Workload", w->metadata.namespace_, w->metadata.name, w->metadata.uid},
        timed_out ? "Warning" : "Normal", CheckpointEventReason(o.result), o.message);
  }
}

void QueueController::EnqueueDecisions(std::vector<WorkloadWrite>& writes) {
  // Admissions and evictions go first in the writer, then queue status, then pending reasons
  // (which change no quota), so that a deep queue of new workloads never delays an admission.
  for (WorkloadWrite& w : writes) {
    const std::string key = w.key();
    pending_.Forget(key);  // admitted or evicted: a later pending reason is new again
    const uint64_t seq = writer_->Enqueue(StatusWriter::kAdmission, {"workloads", w.ns, w.name, std::move(w.body)},
                                          w.assume.has_value());
    if (w.assume) assumed_.Assume(key, std::move(*w.assume), seq);
  }
}

void QueueController::ApplyToSnapshot(const admission::Decisions& d, const HeldPreemptions& held,
                                      const std::vector<Drained>& drained, int64_t now) {
  // (The entries changed are made again at the next pass.)
  for (const auto& p : d.preempted) {
    admission::WorkloadSpec* w = snapshot_builder_.Mutable(p.workload);
    if (held.victims.count(p.workload))
      w->evicted = true;  // (still holding its quota)
    else
      w->admission.reset();
  }
  for (const Drained& e : drained) {
    admission::WorkloadSpec* w = snapshot_builder_.Mutable(e.key);
    if (!w) continue;
    if (e.keeps_quota)
      w->evicted = true;  // (still holding its quota)
    else
      w->admission.reset();
  }
  for (const auto& a : d.admitted) {
    admission::WorkloadSpec* w = snapshot_builder_.Mutable(a.workload);
    w->admission = admission::AdmissionSpec{a.cluster_queue, a.pod_sets};
    w->admission_time = now;  // (what the next build reads from its QuotaReserved condition)
  }
}

void QueueController::Pass() {
  PassSummary s;
  s.number = stats().passes + 1;
  s.times = {clock_.Now(), std::chrono::system_clock::to_time_t(clock_.WallNow()), ""};
  s.times.wall = api::FormatTime(s.times.wall_seconds);
  last_pass_idle_ = false;  // (until this pass has shown it: a pass that stops early is not idle)
  api::ClusterState state = copies_.Take(cache_);
  struct GiveBack {  // (the queues' copies go back for the next pass however this one ends)
    StateCopies& copies;
    api::ClusterState& state;
    ~GiveBack() { copies.GiveBack(state); }
  } give_back{copies_, state};
  state.fair_sharing = config_.fair_sharing;
  state.default_min_runtime = std::chrono::duration_cast<std::chrono::seconds>(config_.preemption_min_runtime).count();
  state.keep_going = true;  // one Workload rota cannot read must not stop every admission
  state.now = s.times.wall_seconds;
  if (budgets_) state.budget_gates = *budgets_->Gates();
  if (admission_usage_) {
    state.admission_fair_sharing = admission_usage_->config();
    state.local_queue_usage = *admission_usage_->Usage();
  }
  TakeWriterOutcomes();
  OverlayWorkloads(state, s.number);
  if (Status st = snapshot_builder_.Build(state); !st.ok()) {
    log_("error", "cannot build the scheduling snapshot: " + st.message());
    return;
  }
  assumed_.HoldEvicted(snapshot_builder_);
  preemption_hold_.HoldReleased(snapshot_builder_, s.times.start);
  checkpoints_.MarkOpen(snapshot_builder_);
  admission::Decisions d = engine_.Decide(snapshot_builder_, admission::ScheduleLimits{tuning_.max_changes_per_pass});
  // (The last admission's victims may take the pass past the limit.)
  s.deferred = admission::KeepFirstAdmissions(d, tuning_.max_changes_per_pass);
  s.withdrawn = WithdrawUnsentAdmissions(d);
  CheckpointPass checkpoints;
  const HeldPreemptions held = HoldPreemptions(d, s.times, checkpoints);
  s.deferred += held.deferred;
  s.stopped_early = s.deferred > 0 || d.not_considered > 0;
  if (s.stopped_early) trigger_.MarkDirty();
  const double decide_seconds = std::chrono::duration<double>(clock_.Now() - s.times.start).count();

  std::vector<Drained> drained = DrainStoppedQueues(state, snapshot_builder_, d, s.times.wall,
                                                    [](const api::Workload& w) { return !OwnerJob(w).empty(); });
  drains_in_flight_.Filter(
      drained, [this](const std::string& key) { return ObjectOf(key); }, s.times.start);
  std::vector<WorkloadWrite> writes = DecisionWrites(d, held, checkpoints, drained, s.times.wall);
  const size_t queued_pending = writer_->Queued(StatusWriter::kPending);
  PendingReasons::Result pending =
      pending_.Decide(d, snapshot_builder_, assumed_, s.times.start, state.now, s.times.wall,
                      tuning_.max_queued_pending - std::min(tuning_.max_queued_pending, queued_pending));
  if (pending.wake) trigger_.WakeAt(*pending.wake);
  pending_.ForgetGone([&](const std::string& key) { return ObjectOf(key) != nullptr; });
  EnqueueDecisions(writes);
  TellCheckpoints(checkpoints, d, state.now);  // (before the snapshot forgets the victims' admissions)

  ApplyToSnapshot(d, held, drained, state.now);
  if (observer_) observer_->Observe(snapshot_builder_, d, state.now);
  const QueueTally::Result tally = tally_.Count(snapshot_builder_, d);
  const auto interval =
      QueueStatusInterval(state.cluster_queues.size() + state.local_queues.size(), apiserver_.behind(), tuning_);
  std::vector<StatusWriter::Write> queue_writes =
      queue_status_.Writes(state, tally, {s.number, s.times.start, s.times.wall, interval});
  // Metrics first, so that whoever sees the status this pass writes finds them agreeing.
  if (queue_metrics_) {
    queue_metrics_->Record(state, snapshot_builder_, d, drained, tally.cluster_queues, decide_seconds,
                           static_cast<double>(s.times.wall_seconds));
  }
  for (StatusWriter::Write& qw : queue_writes) writer_->Enqueue(StatusWriter::kQueueStatus, std::move(qw));
  for (const WorkloadWrite& pw : pending.writes) {
    writer_->Enqueue(StatusWriter::kPending, {"workloads", pw.ns, pw.name, pw.body});
  }
  if (events_) PostWorkloadEvents(*events_, d, pending.writes, [this](const std::string& k) { return ObjectOf(k); });
  Log(d);
  s.waiting = tally.waiting;
  s.drained = drained.size();
  s.pending_writes = pending.writes.size();
  s.queue_writes = queue_writes.size();
  s.pending_first = pending.first;
  s.pending_new_reason = pending.new_reason;
  s.pending_new_message = pending.new_message;
  Finish(std::move(d), s);
}

void QueueController::Log(const admission::Decisions& d) const {
  for (const auto& a : d.admitted) log_("info", "admitted " + a.workload + " in ClusterQueue " + a.cluster_queue);
  for (const auto& p : d.preempted) {
    log_("info", "preempted " + p.workload + " for " + p.preemptor + " (" + admission::ToString(p.reason) + ")");
  }
}

std::string QueueController::EngineSummary() const {
  const IncrementalPass::Stats& e = engine_.last();
  if (e.whole) return "the whole cluster decided (fair sharing, budget pools or admission fair sharing in use)";
  return std::to_string(e.fed) + " workloads fed to the engine and " + std::to_string(e.removed) + " removed; " +
         (e.engine.whole
              ? std::string("the whole cluster decided")
              : std::to_string(e.engine.decided) + " of " + std::to_string(e.engine.parts) +
                    " cohort trees decided again, " + std::to_string(e.engine.new_only) + " only for new workloads");
}

void QueueController::Finish(admission::Decisions&& d, const PassSummary& s) {
  // Idle: no workload waits for quota (those pending for another reason, such as a flavor that
  // does not exist or more than the quota can ever give, wait for a change of spec, which is
  // urgent) and the pass decided nothing.
  last_pass_idle_ = s.waiting == 0 && d.admitted.empty() && d.preempted.empty() && !s.stopped_early && s.drained == 0;
  // What the pass did and what it waited for, for whoever wants to know why work waits (debug).
  auto ms = [](auto t) { return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(t).count()); };
  log_("debug", "pass " + std::to_string(s.number) + ": " + std::to_string(d.admitted.size()) + " admitted, " +
                    std::to_string(d.preempted.size()) + " preempted, " + std::to_string(s.withdrawn) +
                    " admissions withdrawn unsent, " + std::to_string(s.deferred) + " admissions and " +
                    std::to_string(d.not_considered) + " workloads left to the next pass, " +
                    std::to_string(d.pending.size()) + " pending (" + std::to_string(s.waiting) +
                    " waiting for quota), " + std::to_string(assumed_.size()) + " writes not seen back yet, " +
                    std::to_string(s.pending_writes) + " pending reasons, " + std::to_string(s.queue_writes) +
                    " queue statuses; after " + ms(batch_waited_) + " ms of batch and " + ms(writer_waited_) +
                    " ms waiting for the writer; took " + ms(clock_.Now() - s.times.start) + " ms; " + EngineSummary());
  std::lock_guard<std::mutex> l(mu_);
  ++stats_.passes;
  stats_.admitted += static_cast<int64_t>(d.admitted.size());
  stats_.preempted += static_cast<int64_t>(d.preempted.size());
  stats_.pending_first += s.pending_first;
  stats_.pending_new_reason += s.pending_new_reason;
  stats_.pending_new_message += s.pending_new_message;
  engine_.Recycle(std::move(d));
}

}  // namespace rota::controller
