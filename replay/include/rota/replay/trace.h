#pragma once

// Reading a trace into jobs for `rota replay`: the Philly CSV (timestamp, duration, num_gpus,
// gpu_time, cluster), the PAI pod list (name, ..., num_gpu, gpu_milli, ..., qos, pod_phase,
// creation_time, deletion_time, scheduled_time), or Kueue Workload YAML annotated with
// rota.dev/submit-at and rota.dev/runtime. Every job becomes a Workload object that the
// controller's own snapshot code reads (api::BuildSnapshot), so queues, priorities and pod
// requests are resolved exactly as `rota run` resolves them.

#include <cstdint>
#include <istream>
#include <memory>
#include <string>
#include <vector>

#include "rota/admission/status.h"
#include "rota/api/kueue.h"

namespace rota::replay {

enum class TraceFormat { kPhilly, kPai, kWorkloads };
Result<TraceFormat> ParseTraceFormat(const std::string& name);

// Annotations of the `workloads` format (and of the Workloads the other formats become).
inline constexpr const char* kSubmitAtAnnotation = "rota.dev/submit-at";  // RFC 3339, or seconds
inline constexpr const char* kRuntimeAnnotation = "rota.dev/runtime";     // a duration: "90m", "3600s"

struct TraceJob {
  std::shared_ptr<const api::Workload> workload;  // named and queued (spec.queueName) in its team's namespace
  int64_t submit = 0;                             // seconds since the trace's start
  int64_t runtime = 0;                            // seconds of work
  size_t line = 0;                                // where it was read (row or document)
};

struct Trace {
  std::vector<TraceJob> jobs;  // in order of submission (then of the file)
  // Rows that could not be read ("line N: why"), and rows left out on purpose (counted).
  std::vector<std::string> problems;
  size_t skipped = 0;       // rows that are not jobs to replay (no GPU, never scheduled)
  std::string skipped_why;  // what the skipped rows were
  std::string epoch;        // RFC 3339 time of second 0, when the trace's times are absolute
};

struct ReadOptions {
  bool strict = false;  // stop at the first bad row (an error), rather than report and go on
  // Only the jobs submitted in [from, from + span) seconds of the trace (span 0: all), and at most
  // `limit` of them (0: all): a slice of a long trace.
  int64_t from = 0;
  int64_t span = 0;
  size_t limit = 0;
};

// `file` names the source in problems and errors. An error is returned for input that is not the
// format at all (a wrong header), or, with strict, for the first bad row.
Result<Trace> ReadPhilly(std::istream& in, const std::string& file, const ReadOptions& options);
Result<Trace> ReadPai(std::istream& in, const std::string& file, const ReadOptions& options);
Result<Trace> ReadWorkloads(const std::string& text, const std::string& file, const ReadOptions& options);
Result<Trace> ReadTrace(const std::string& path, TraceFormat format, const ReadOptions& options);

// The resources a PAI pod asks for: whole GPUs (nvidia.com/gpu), a MIG slice for a seventh of a
// GPU or less (nvidia.com/mig-1g.10gb), otherwise quarter-GPU time slices (nvidia.com/gpu.shared).
struct PaiRequest {
  std::string resource;
  int64_t count = 0;
};
PaiRequest PaiResources(int64_t num_gpu, int64_t gpu_milli);

}  // namespace rota::replay
