#include "rota/kubectl/preempted.h"

#include <algorithm>
#include <map>

#include "rota/admission/lost_work.h"
#include "rota/api/checkpoint.h"
#include "rota/api/snapshot.h"
#include "rota/kubectl/workload_facts.h"

namespace rota::kubectl {
namespace {

using Json = nlohmann::json;
namespace wc = api::workload_condition;

// A preemption told twice (condition and Event) is one when the times are this close.
constexpr int64_t kSameWithin = 120;

int64_t TimeOf(const std::string& rfc3339) {
  auto t = api::ParseTime(rfc3339);
  return t.ok() ? *t : 0;
}

// The times an Event tells of: its first and, when it happened again, its last.
std::vector<int64_t> EventTimes(const Json& e) {
  auto field = [&](const char* name) {
    return e.contains(name) && e[name].is_string() ? e[name].get<std::string>() : "";
  };
  const int64_t first = TimeOf(field("firstTimestamp")), last = TimeOf(field("lastTimestamp"));
  std::vector<int64_t> out;
  if (first) out.push_back(first);
  if (last && last != first) out.push_back(last);
  if (out.empty()) out.push_back(TimeOf(field("eventTime")));
  return out;
}

std::string EventKey(const Json& e) {
  const Json& o = e.value("involvedObject", Json::object());
  return o.value("namespace", "") + "/" + o.value("name", "");
}

// The preemption reason rota's message words ("... due to reclamation within the cohort").
std::string ReasonOfMessage(const std::string& message) {
  static const std::pair<const char*, const char*> kWords[] = {
      {"due to prioritization in the ClusterQueue", "InClusterQueue"},
      {"due to reclamation within the cohort while borrowing", "InCohortReclaimWhileBorrowing"},
      {"due to reclamation within the cohort", "InCohortReclamation"},
      {"due to fair sharing within the cohort", "InCohortFairSharing"}};
  for (const auto& [words, reason] : kWords)
    if (message.find(words) != std::string::npos) return reason;
  return "";
}

// Preemptions the Workloads' conditions show (evicted, not admitted again).
std::vector<Preemption> FromConditions(const std::vector<api::Workload>& workloads) {
  std::vector<Preemption> out;
  for (const api::Workload& w : workloads) {
    const api::Condition* preempted = ConditionOf(w, wc::kPreempted);
    const api::Condition* evicted = ConditionOf(w, wc::kEvicted);
    const bool by_preempted = preempted && preempted->status == api::ConditionStatus::kTrue;
    const bool by_evicted = evicted && evicted->status == api::ConditionStatus::kTrue && evicted->reason == "Preempted";
    if (!by_preempted && !by_evicted) continue;
    const api::Condition* c = by_preempted ? preempted : evicted;
    Preemption p{w.metadata.namespace_, w.metadata.name};
    p.reason = by_preempted ? c->reason : ReasonOfMessage(c->message);
    p.message = c->message;
    p.at = TimeOf(c->last_transition_time);
    out.push_back(std::move(p));
  }
  return out;
}

// Adds the preemptions the Events tell of that `out` does not have yet.
void AddFromEvents(const std::vector<Json>& events, std::vector<Preemption>& out) {
  for (const Json& e : events) {
    if (e.value("reason", "") != "Preempted") continue;
    const std::string key = EventKey(e);
    const size_t slash = key.find('/');
    for (int64_t at : EventTimes(e)) {
      const bool known = std::any_of(out.begin(), out.end(), [&](const Preemption& p) {
        return p.ns + "/" + p.workload == key && std::abs(p.at - at) <= kSameWithin;
      });
      if (known || at == 0) continue;
      Preemption p{key.substr(0, slash), key.substr(slash + 1)};
      p.message = e.value("message", "");
      p.reason = ReasonOfMessage(p.message);
      p.at = at;
      out.push_back(std::move(p));
    }
  }
}

// The latest admission of `key` at or before `at` the Events tell of (Admitted, QuotaReserved).
int64_t AdmittedFromEvents(const std::vector<Json>& events, const std::string& key, int64_t at) {
  int64_t best = 0;
  for (const Json& e : events) {
    const std::string reason = e.value("reason", "");
    if ((reason != "Admitted" && reason != "QuotaReserved") || EventKey(e) != key) continue;
    for (int64_t t : EventTimes(e))
      if (t <= at) best = std::max(best, t);
  }
  return best;
}

// What `w`, the victim, says of `p`: its Job, GPUs, last checkpoint, ClusterQueue, and its
// admission while it still holds quota from before the eviction.
void Describe(const api::Workload& w, const std::vector<api::LocalQueue>& local_queues, Preemption& p) {
  p.job = JobOf(w);
  if (auto requests = RequestsOf(w); requests.ok()) p.gpus = GpuEquivalents(*requests);
  const int64_t saved = TimeOf(api::AnnotationOr(w.metadata.annotations, api::kCheckpointedAtAnnotation));
  p.checkpointed_at = saved <= p.at ? saved : 0;
  const api::Condition* reserved = ConditionOf(w, wc::kQuotaReserved);
  if (HoldsQuota(w) && reserved && reserved->status == api::ConditionStatus::kTrue &&
      TimeOf(reserved->last_transition_time) <= p.at) {
    p.admitted_at = TimeOf(reserved->last_transition_time);
  }
  if (w.status && w.status->admission) p.cluster_queue = w.status->admission->cluster_queue;
  for (const auto& lq : local_queues)
    if (p.cluster_queue.empty() && lq.metadata.namespace_ == p.ns && lq.metadata.name == w.spec.queue_name)
      p.cluster_queue = lq.spec.cluster_queue;
}

}  // namespace

std::string PreemptorOf(const std::string& message) {
  constexpr std::string_view kWorkload = "workload ";
  const size_t from = message.find(kWorkload);
  if (from == std::string::npos) return "";
  const size_t start = from + kWorkload.size();
  const size_t end = message.find(' ', start);
  return message.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

std::optional<double> GpuHoursLost(double gpus, int64_t admitted_at, int64_t checkpointed_at, int64_t at) {
  if (admitted_at <= 0) return std::nullopt;
  admission::WorkloadSpec victim;
  victim.admission.emplace();
  victim.admission_time = admitted_at;
  victim.last_checkpoint = checkpointed_at <= at ? checkpointed_at : 0;
  return gpus * static_cast<double>(admission::SecondsSinceSave(victim, at)) / 3600.0;
}

std::vector<Preemption> CollectPreemptions(const std::vector<api::Workload>& workloads, const std::vector<Json>& events,
                                           const std::vector<api::LocalQueue>& local_queues, int64_t since) {
  std::vector<Preemption> list = FromConditions(workloads);
  AddFromEvents(events, list);
  std::erase_if(list, [&](const Preemption& p) { return p.at < since; });
  std::map<std::string, const api::Workload*> by_key;
  for (const api::Workload& w : workloads) by_key[KeyOf(w)] = &w;
  for (Preemption& p : list) {
    p.preemptor = PreemptorOf(p.message);
    auto it = by_key.find(p.ns + "/" + p.workload);
    const api::Workload* w = it == by_key.end() ? nullptr : it->second;
    if (w) Describe(*w, local_queues, p);
    if (!p.admitted_at) p.admitted_at = AdmittedFromEvents(events, p.ns + "/" + p.workload, p.at);
    if (w) p.gpu_hours_lost = GpuHoursLost(p.gpus, p.admitted_at, p.checkpointed_at, p.at);
  }
  std::sort(list.begin(), list.end(), [](const Preemption& a, const Preemption& b) {
    return a.at != b.at ? a.at > b.at : a.ns + "/" + a.workload < b.ns + "/" + b.workload;
  });
  return list;
}

}  // namespace rota::kubectl
