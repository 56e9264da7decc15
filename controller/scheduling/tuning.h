#pragma once

// Every tuning constant of the scheduling loop, in one place. The values are the defaults the
// loop runs with; tests may give other values to exercise a part quickly. What each bounds, and
// why, is said here once; the parts refer to the field by name.

#include <chrono>
#include <cstddef>

namespace rota::controller {

struct SchedulingTuning {
  using ms = std::chrono::milliseconds;
  using s = std::chrono::seconds;

  // --- The cache's watches (main.cc) ---
  // Watches read their events in batches within half the batch period, at most this long,
  // rather than waking for each: every admission, eviction and finish is a Workload event, and
  // the loop gathers changes for its batch period anyway.
  ms max_watch_settle{50};

  // --- The loop (pass_trigger.h) ---
  // A pass at least this often, even with no event: it retries failed writes.
  s retry_interval{5};
  // With no workload waiting for quota, a change that cannot decide anything (a workload
  // finishing) waits this long for its pass, which then only brings counts up to date: a pass
  // over thousands of running workloads is not worth making for each finish.
  s idle_pass_interval{1};
  // A held queue status that comes due brings with it those due within this slack, so that
  // queues held at slightly different times share one pass.
  ms queue_status_slack{500};
  // /healthz fails when the loop has shown no progress (a pass, or a wait on the apiserver or the
  // caches) for this long: passes come at least every retry_interval, so only a stuck loop trips it.
  s liveness_stall{60};
  // How often a blocked wait looks at the stop flag (a signal handler sets it and cannot notify).
  ms stop_check{200};

  // --- Batching and backpressure (pacing.h) ---
  // However costly the last pass, the next one waits at most this long for its batch.
  ms max_batch_stretch{2000};
  // A pass waits until at most this many of the last one's admissions and evictions are still
  // queued in the writer: deciding far ahead of what the apiserver has accepted only piles up
  // decisions on assumptions (and, in a busy cohort, lends quota only to take it back).
  size_t pass_low_water = 100;
  // A pass waits at most this long for queue status to be sent: the summary threads send it
  // whatever the admissions do, and on a saturated apiserver thousands of queue writes would
  // otherwise hold every pass for a minute.
  s max_queue_status_wait{1};
  // The apiserver is behind on admissions once the loop waited this long or longer for the writer
  // to take a pass's admissions, and stays behind until `behind_hold` passes without such a wait.
  // While it is, queue status and Events take half their budgets.
  ms behind_wait{1000};
  s behind_hold{30};

  // --- Decisions per pass (queue_controller.cc) ---
  // A pass hands the writer at most this many admissions and evictions, the first in admission
  // order; the rest are decided again by the next pass. On a busy apiserver a pass of thousands
  // takes minutes to write, and quota freed meanwhile would wait for all of it. The engine stops
  // at the limit too, so that it does not decide what it will not hand over.
  size_t max_changes_per_pass = 500;
  // A victim that has given its quota back (preemption_hold.h) is not admitted again for this
  // long while its preemptor waits, so that the quota goes to the preemptor first, not back to
  // the victim (which may be older, and borrowing).
  s preemptor_first{10};

  // --- Status writes (status_apply_sink.h, StatusWriter) ---
  // Writes in flight at once (the client's QPS limit holds): of any kind, and more of queue
  // status and pending reasons alone, since on a saturated apiserver a write can take a second.
  int writes_in_flight = 8;
  int summary_writes_in_flight = 4;

  // --- Pending reasons (pending_reasons.h) ---
  // Pending reasons are for people and must not crowd out admissions at the apiserver. The head
  // of a ClusterQueue waiting for quota, and a new workload, get their first reason once they
  // have waited this long (most are admitted sooner).
  s first_pending_delay{2};
  // A reason that stays the same with a new message ("3 more needed" -> "2 more") is rewritten
  // at most this often; a change of reason is written at once.
  s pending_message_interval{30};
  // A reason queued or written is not queued again within this long (it is on its way back).
  s pending_settle{5};
  // At most this many pending reasons wait in the writer; past that, try again after
  // `pending_retry`.
  size_t max_queued_pending = 500;
  s pending_retry{1};

  // --- Queue status (queue_status.h) ---
  // A busy queue's status is written at most every `min_queue_status_interval`, or, with many
  // queues, so that all of them busy at once make at most `queue_writes_per_second` writes a
  // second (half that while the apiserver is behind). Prometheus gauges are current at every
  // scrape; the status is a summary for people and dashboards.
  s min_queue_status_interval{3};
  size_t queue_writes_per_second = 50;

  // --- Queue tallies (queue_tally.h) ---
  // Beyond this many (flavor, resource) keys, the tally's key table starts again.
  size_t max_usage_keys = 4096;
};

}  // namespace rota::controller
