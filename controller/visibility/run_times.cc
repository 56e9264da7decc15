#include "visibility/run_times.h"

#include <algorithm>
#include <vector>

#include "rota/api/checkpoint.h"
#include "rota/api/snapshot.h"

namespace rota::visibility {
namespace {

const api::Condition* TrueCondition(const api::Workload& w, std::string_view type) {
  if (!w.status) return nullptr;
  for (const api::Condition& c : w.status->conditions)
    if (c.type == type && c.status == api::ConditionStatus::kTrue) return &c;
  return nullptr;
}

std::string PriorityClassOf(const api::Workload& w) {
  return w.spec.priority_class_ref ? w.spec.priority_class_ref->name : "";
}

std::string Describe(int64_t seconds) {
  if (seconds % 3600 == 0) return std::to_string(seconds / 3600) + "h";
  if (seconds % 60 == 0) return std::to_string(seconds / 60) + "m";
  return std::to_string(seconds) + "s";
}

}  // namespace

void RunTimeHistory::Observe(const api::Workload& w) {
  const api::Condition* finished = TrueCondition(w, "Finished");
  const api::Condition* reserved = TrueCondition(w, api::workload_condition::kQuotaReserved);
  if (!finished || !reserved || !w.status->admission) return;
  auto end = api::ParseTime(finished->last_transition_time);
  auto start = api::ParseTime(reserved->last_transition_time);
  if (!end.ok() || !start.ok() || *end < *start) return;
  std::lock_guard<std::mutex> l(mu_);
  if (!seen_.insert(w.metadata.uid).second) return;
  seen_order_.push_back(w.metadata.uid);
  std::deque<int64_t>& runs = runs_[{w.status->admission->cluster_queue, PriorityClassOf(w)}];
  runs.push_back(*end - *start);
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
