#include "visibility/run_times.h"

#include <algorithm>
#include <vector>

#include "rota/api/checkpoint.h"
#include "rota/api/snapshot.h"

namespace rota::visibility {
namespace {

std::string PriorityClassOf(const api::Workload& w) {
  return w.spec.priority_class_ref ? w.spec.priority_class_ref->name : "";
}

std::string Describe(int64_t seconds) {
  if (seconds % 3600 == 0) return std::to_string(seconds / 3600) + "h";
  if (seconds % 60 == 0) return std::to_string(seconds / 60) + "m";
  return std::to_string(seconds) + "s";
}

}  // namespace

void RunTimeHistory::Observe(const controller::FinishedRun& run) {
  std::lock_guard<std::mutex> l(mu_);
  if (!seen_.insert(run.uid).second) return;
  seen_order_.push_back(run.uid);
  std::deque<int64_t>& runs = runs_[{run.cluster_queue, run.priority_class}];
  runs.push_back(run.seconds);
  if (runs.size() > keep_) runs.pop_front();
  // UIDs are kept for as many runs as all the queues keep, at most; the oldest go first.
  while (seen_order_.size() > keep_ * std::max<size_t>(1, runs_.size())) {
    seen_.erase(seen_order_.front());
    seen_order_.pop_front();
  }
}

std::optional<std::pair<int64_t, size_t>> RunTimeHistory::Median(const std::string& cluster_queue,
                                                                 const std::string& priority_class) const {
  std::vector<int64_t> runs;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = runs_.find({cluster_queue, priority_class});
    if (it == runs_.end() || it->second.empty()) return std::nullopt;
    runs.assign(it->second.begin(), it->second.end());
  }
  std::nth_element(runs.begin(), runs.begin() + static_cast<ptrdiff_t>(runs.size() / 2), runs.end());
  return std::make_pair(runs[runs.size() / 2], runs.size());
}

RunTimeEstimate ExpectedRunTime(const api::Workload& w, const std::string& cluster_queue,
                                const RunTimeHistory& history) {
  if (w.spec.maximum_execution_time_seconds && *w.spec.maximum_execution_time_seconds > 0) {
    const int64_t s = *w.spec.maximum_execution_time_seconds;
    return {s, RunTimeEstimate::Source::kMaximumExecutionTime, "its maximumExecutionTimeSeconds (" + Describe(s) + ")"};
  }
  const std::string annotated = api::AnnotationOr(w.metadata.annotations, kExpectedRuntimeAnnotation);
  if (!annotated.empty()) {
    auto ms = api::ParseGoDuration(annotated);
    if (ms.ok() && *ms > 0)
      return {(*ms + 999) / 1000, RunTimeEstimate::Source::kAnnotation,
              "its " + std::string(kExpectedRuntimeAnnotation) + " annotation (" + annotated + ")"};
  }
  const std::string priority_class = PriorityClassOf(w);
  if (auto median = history.Median(cluster_queue, priority_class)) {
    return {median->first, RunTimeEstimate::Source::kMedian,
            "the median run time (" + Describe(median->first) + ") of " + std::to_string(median->second) +
                " finished workloads of ClusterQueue " + cluster_queue +
                (priority_class.empty() ? "" : " and priority class " + priority_class)};
  }
  return {-1, RunTimeEstimate::Source::kNone, "no run time known"};
}

}  // namespace rota::visibility
