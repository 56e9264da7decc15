#pragma once

// rota's checkpoint annotations (docs/checkpoint.md) and the Go-style durations they carry.
//
// - rota.dev/checkpoint: "true" on a Job or Workload: it takes part in the handshake; when it is
//   chosen as a victim, rota asks it to checkpoint and waits for the answer (or the deadline)
//   before evicting it.
// - rota.dev/checkpoint-timeout: "10m": how long rota waits for the answer.
// - rota.dev/checkpointed-at: RFC 3339: when it last saved a checkpoint (on the Job, any of its
//   pods, or the Workload; rota copies the latest to the Workload).
// - rota.dev/checkpoint-requested-at: RFC 3339, on the pods: rota asks them to checkpoint.
// - rota.dev/preempt-min-runtime, rota.dev/reclaim-min-runtime on a ClusterQueue: its workloads
//   admitted less than that long ago are not preempted within the queue / reclaimed by another.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "rota/admission/status.h"

namespace rota::api {

inline constexpr std::string_view kCheckpointAnnotation = "rota.dev/checkpoint";
inline constexpr std::string_view kCheckpointTimeoutAnnotation = "rota.dev/checkpoint-timeout";
inline constexpr std::string_view kCheckpointedAtAnnotation = "rota.dev/checkpointed-at";
inline constexpr std::string_view kCheckpointRequestedAtAnnotation = "rota.dev/checkpoint-requested-at";
inline constexpr std::string_view kPreemptMinRuntimeAnnotation = "rota.dev/preempt-min-runtime";
inline constexpr std::string_view kReclaimMinRuntimeAnnotation = "rota.dev/reclaim-min-runtime";
// How long a workload is expected to run (a Go duration), for start-time forecasts.
inline constexpr std::string_view kExpectedRuntimeAnnotation = "rota.dev/expected-runtime";

// A Go duration ("90s", "10m", "1h30m", "1.5h", "250ms"): a sequence of decimal numbers, each with
// a unit of ms, s, m or h; at most 100 years. In milliseconds; an error says what was wrong.
Result<int64_t> ParseGoDuration(std::string_view text);

// Whether `annotations` say rota.dev/checkpoint: "true".
bool Checkpointable(const std::map<std::string, std::string>& annotations);

// The value of annotation `key`, or "".
std::string AnnotationOr(const std::map<std::string, std::string>& annotations, std::string_view key);

}  // namespace rota::api
