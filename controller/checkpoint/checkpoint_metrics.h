#pragma once

// The checkpoint handshake's Prometheus metrics (defined in metrics.cc) and Event reasons:
// - rota_checkpoint_requests_total{cluster_queue,result}: requests that ended, by result
//   (acknowledged, timed_out, cancelled);
// - rota_checkpoint_wait_seconds: from a request to its answer or deadline;
// - rota_preemption_lost_resource_seconds_total{cluster_queue,resource}: the work preemptions
//   threw away, every victim's (checkpointing or not): its admitted amount of the resource times
//   the seconds since it last saved its work (its admission or last checkpoint).

#include <cstdint>
#include <string>

#include "checkpoint/requests.h"
#include "metrics.h"
#include "rota/admission/engine.h"
#include "rota/api/snapshot.h"

namespace rota::controller {

// Counts a pass's outcomes, and the work lost by its preemptions (`d.preempted`, whose victims
// still hold their admissions in `builder`), at `now` (Unix seconds).
void RecordCheckpointMetrics(Metrics& metrics, const CheckpointPass& pass, const admission::Decisions& d,
                             const api::SnapshotBuilder& builder, int64_t now);

// The Event reason for an outcome: CheckpointRequested, Checkpointed, CheckpointTimeout or
// CheckpointCancelled.
std::string CheckpointEventReason(const std::string& result);

}  // namespace rota::controller
