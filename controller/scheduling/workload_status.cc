#include "scheduling/workload_status.h"

#include <map>

namespace rota::controller {
namespace {

using api::Json;
namespace wc = api::workload_condition;

// Workload condition types rota owns (and so always applies in full).
const std::vector<std::string>& OwnedConditionTypes() {
  static const std::vector<std::string> kOwned = {std::string(wc::kQuotaReserved), std::string(wc::kAdmitted),
                                                  std::string(wc::kEvicted), std::string(wc::kPreempted),
                                                  std::string(wc::kRequeued)};
  return kOwned;
}

struct ConditionUpdate {
  std::string status;  // True / False
  std::string reason;
  std::string message;
};
using Updates = std::map<std::string, ConditionUpdate>;

// The full list of rota-owned conditions of `w` with `updates` applied; a condition keeps its
// lastTransitionTime unless its status changes.
Json OwnedConditions(const api::Workload& w, const Updates& updates, const std::string& now) {
  Json out = Json::array();
  for (const std::string& type : OwnedConditionTypes()) {
    const api::Condition* c = WorkloadCondition(w, type);
    auto u = updates.find(type);
    if (u != updates.end()) {
      std::string ltt = now;
      if (c && std::string(api::EnumName(c->status)) == u->second.status) ltt = c->last_transition_time;
      out.push_back({{"type", type},
                     {"status", u->second.status},
                     {"reason", u->second.reason},
                     {"message", u->second.message},
                     {"lastTransitionTime", ltt}});
    } else if (c) {
      out.push_back(api::EncodeValue(*c));
    }
  }
  return out;
}

WorkloadWrite Write(const api::Workload& w, Json status, std::optional<std::optional<api::Admission>> assume) {
  Json body = {{"apiVersion", api::kApiVersion},
               {"kind", "Workload"},
               {"metadata", {{"name", w.metadata.name}, {"namespace", w.metadata.namespace_}}},
               {"status", std::move(status)}};
  return {w.metadata.namespace_, w.metadata.name, std::move(body), std::move(assume)};
}

Json AdmissionJson(const admission::AdmitDecision& d) {
  Json assignments = Json::array();
  for (const auto& ps : d.pod_sets) {
    Json usage = Json::object();
    for (const auto& [r, milli] : ps.usage) usage[r] = FormatAmount(r, milli);
    assignments.push_back({{"name", ps.name}, {"flavors", ps.flavors}, {"resourceUsage", usage}, {"count", ps.count}});
  }
  return {{"clusterQueue", d.cluster_queue}, {"podSetAssignments", assignments}};
}

const ConditionUpdate kNoReservation{"False", "NoReservation", "The workload has no reservation"};

}  // namespace

const api::Condition* WorkloadCondition(const api::Workload& w, std::string_view type) {
  return w.status ? api::FindCondition(w.status->conditions, type) : nullptr;
}

std::string FormatAmount(const std::string& resource, int64_t milli) {
  const bool bytes = resource == "memory" || resource == "ephemeral-storage" || resource.rfind("hugepages-", 0) == 0;
  return Quantity::FromMilli(milli, bytes ? Quantity::Format::kBinarySI : Quantity::Format::kDecimalSI).ToString();
}

std::string PreemptionMessage(const admission::PreemptDecision& p) {
  const char* why = "prioritization in the ClusterQueue";
  switch (p.reason) {
    case admission::PreemptionReason::kInClusterQueue:
      break;
    case admission::PreemptionReason::kInCohortReclamation:
      why = "reclamation within the cohort";
      break;
    case admission::PreemptionReason::kInCohortReclaimWhileBorrowing:
      why = "reclamation within the cohort while borrowing";
      break;
    case admission::PreemptionReason::kInCohortFairSharing:
      why = "fair sharing within the cohort";
      break;
  }
  return "Preempted to accommodate workload " + p.preemptor + " due to " + why;
}

WorkloadWrite AdmitWrite(const api::Workload& w, const admission::AdmitDecision& d, const std::string& now) {
  Updates updates = {
      {std::string(wc::kQuotaReserved), {"True", "QuotaReserved", "Quota reserved in ClusterQueue " + d.cluster_queue}},
      {std::string(wc::kAdmitted), {"True", "Admitted", "The workload is admitted"}}};
  // As Kueue does on a new reservation: an earlier eviction or preemption is no longer active
  // (whoever acts on "Evicted" must not evict this admission again).
  for (std::string_view type : {wc::kEvicted, wc::kPreempted}) {
    const api::Condition* c = WorkloadCondition(w, type);
    if (c && c->status == api::ConditionStatus::kTrue) {
      updates[std::string(type)] = {"False", "QuotaReserved", "Previously: " + c->message};
    }
  }
  // The admission assumed is the written one read as the watch will read it.
  Json admission_json = AdmissionJson(d);
  api::Admission assumed;
  (void)api::DecodeValue(admission_json, "admission", assumed);
  Json status = {{"admission", std::move(admission_json)}, {"conditions", OwnedConditions(w, updates, now)}};
  return Write(w, std::move(status), std::optional<api::Admission>(std::move(assumed)));
}

WorkloadWrite PreemptWrite(const api::Workload& w, const admission::PreemptDecision& p, const std::string& now) {
  const std::string message = PreemptionMessage(p);
  const Updates updates = {{std::string(wc::kQuotaReserved), {"False", "Preempted", message}},
                           {std::string(wc::kAdmitted), kNoReservation},
                           {std::string(wc::kEvicted), {"True", "Preempted", message}},
                           {std::string(wc::kPreempted), {"True", admission::ToString(p.reason), message}},
                           {std::string(wc::kRequeued), {"True", "Preempted", "Requeued after preemption"}}};
  return Write(w, {{"conditions", OwnedConditions(w, updates, now)}}, std::optional<api::Admission>());
}

WorkloadWrite EvictWrite(const api::Workload& w, const admission::PreemptDecision& p, const std::string& now) {
  const std::string message = PreemptionMessage(p);
  const Updates updates = {{std::string(wc::kEvicted), {"True", "Preempted", message}},
                           {std::string(wc::kPreempted), {"True", admission::ToString(p.reason), message}}};
  Json status = {{"conditions", OwnedConditions(w, updates, now)}};
  // (Applied in full: an apply that left out the admission would remove it.)
  if (w.status && w.status->admission) status["admission"] = api::EncodeValue(*w.status->admission);
  return Write(w, std::move(status), std::nullopt);
}

WorkloadWrite DrainWrite(const api::Workload& w, bool by_cluster_queue, const std::string& now) {
  const std::string reason = by_cluster_queue ? "ClusterQueueStopped" : "LocalQueueStopped";
  const std::string message = by_cluster_queue ? "The ClusterQueue is stopped" : "The LocalQueue is stopped";
  const Updates updates = {{std::string(wc::kQuotaReserved), {"False", reason, message}},
                           {std::string(wc::kAdmitted), kNoReservation},
                           {std::string(wc::kEvicted), {"True", reason, message}}};
  return Write(w, {{"conditions", OwnedConditions(w, updates, now)}}, std::optional<api::Admission>());
}

WorkloadWrite PendingWrite(const api::Workload& w, const std::string& reason, const std::string& message,
                           const std::string& now) {
  const Updates updates = {{std::string(wc::kQuotaReserved), {"False", reason, message}}};
  return Write(w, {{"conditions", OwnedConditions(w, updates, now)}}, std::nullopt);
}

}  // namespace rota::controller
