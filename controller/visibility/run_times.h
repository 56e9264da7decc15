#pragma once

// How long a workload is expected to run, for start-time forecasts: its
// maximumExecutionTimeSeconds, else its `rota.dev/expected-runtime` annotation, else the median
// run time of the finished workloads of the same ClusterQueue and priority class that rota has
// seen finish (RunTimeHistory). Each estimate says what it rests on, in words for a person.

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "cache/compact_workload.h"
#include "rota/api/checkpoint.h"
#include "rota/api/kueue.h"

namespace rota::visibility {

using api::kExpectedRuntimeAnnotation;

// The run times of finished workloads, by ClusterQueue and priority class. Thread-safe.
class RunTimeHistory {
 public:
  // Per ClusterQueue and priority class, the last `keep` run times count.
  explicit RunTimeHistory(size_t keep = 200) : keep_(keep) {}
  // Notes a finished run (the cache's FinishedRunListener): each Workload (by UID) once.
  void Observe(const controller::FinishedRun& run);
  // The median run time in seconds and how many finished runs it is the median of.
  std::optional<std::pair<int64_t, size_t>> Median(const std::string& cluster_queue,
                                                   const std::string& priority_class) const;

 private:
  const size_t keep_;
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, std::deque<int64_t>> runs_;
  std::set<std::string> seen_;  // UIDs observed, trimmed with the oldest runs
  std::deque<std::string> seen_order_;
};

struct RunTimeEstimate {
  enum class Source { kNone, kMaximumExecutionTime, kAnnotation, kMedian };
  int64_t seconds = -1;  // -1: not known
  Source source = Source::kNone;
  std::string basis;  // e.g. "its maximumExecutionTimeSeconds (1h)"
};

// `cluster_queue`: the queue it is in (or waits in). An annotation that is not a duration counts
// as absent.
RunTimeEstimate ExpectedRunTime(const api::Workload& w, const std::string& cluster_queue,
                                const RunTimeHistory& history);

}  // namespace rota::visibility
