#include "scheduling/workload_status.h"

#include <map>

namespace rota::controller {
namespace {

using api::Json;
namespace wc = api::workload_condition;

// Workload condition types rota owns (and so always applies in full).
const std::vector<std::string>& OwnedConditionTypes() {
  static const std::vector<std::string> kOwned = {
      std::string(wc::kQuotaReserved), std::string(wc::kAdmitted), std::string(wc::kEvicted),
      std::string(wc::kPreempted),     std::string(wc::kRequeued), std::string(wc::kCheckpointRequested)};
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

namespace {

void AddCheckpoint(Updates& updates, const CheckpointCondition* checkpoint) {
  if (checkpoint) {
    updates[std::string(wc::kCheckpointRequested)] = {checkpoint->status, checkpoint->reason, checkpoint->message};
  }
}

// The status with the admission as it is (an apply that left it out would remove it).
Json KeepingAdmission(const api::Workload& w, Json conditions) {
  Json status = {{"conditions", std::move(conditions)}};
  if (w.status && w.status->admission) status["admission"] = api::EncodeValue(*w.status->admission);
  return status;
}

WorkloadWrite Preempt(const api::Workload& w, const admission::PreemptDecision& p, const std::string& now,
                      const CheckpointCondition* checkpoint) {
  const std::string message = PreemptionMessage(p);
  Updates updates = {{std::string(wc::kQuotaReserved), {"False", "Preempted", message}},
                     {std::string(wc::kAdmitted), kNoReservation},
                     {std::string(wc::kEvicted), {"True", "Preempted", message}},
                     {std::string(wc::kPreempted), {"True", admission::ToString(p.reason), message}},
                     {std::string(wc::kRequeued), {"True", "Preempted", "Requeued after preemption"}}};
  AddCheckpoint(updates, checkpoint);
  return Write(w, {{"conditions", OwnedConditions(w, updates, now)}}, std::optional<api::Admission>());
}

}  // namespace

WorkloadWrite PreemptWrite(const api::Workload& w, const admission::PreemptDecision& p, const std::string& now) {
  return Preempt(w, p, now, nullptr);
}

WorkloadWrite PreemptWrite(const api::Workload& w, const admission::PreemptDecision& p, const std::string& now,
                           const CheckpointCondition& checkpoint) {
  return Preempt(w, p, now, &checkpoint);
}

WorkloadWrite EvictWrite(const api::Workload& w, const admission::PreemptDecision& p, const std::string& now,
                         const CheckpointCondition* checkpoint) {
  const std::string message = PreemptionMessage(p);
  Updates updates = {{std::string(wc::kEvicted), {"True", "Preempted", message}},
                     {std::string(wc::kPreempted), {"True", admission::ToString(p.reason), message}}};
  AddCheckpoint(updates, checkpoint);
  return Write(w, KeepingAdmission(w, OwnedConditions(w, updates, now)), std::nullopt);
}

WorkloadWrite CheckpointWrite(const api::Workload& w, const CheckpointCondition& checkpoint, const std::string& now) {
  Updates updates;
  AddCheckpoint(updates, &checkpoint);
  return Write(w, KeepingAdmission(w, OwnedConditions(w, updates, now)), std::nullopt);
}

WorkloadWrite DrainWrite(const api::Workload& w, bool by_cluster_queue, const std::string& now, bool keep_quota) {
  const std::string reason = by_cluster_queue ? "ClusterQueueStopped" : "LocalQueueStopped";
  const std::string message = by_cluster_queue ? "The ClusterQueue is stopped" : "The LocalQueue is stopped";
  if (keep_quota) {
    const Updates evicted = {{std::string(wc::kEvicted), {"True", reason, message}}};
    return Write(w, KeepingAdmission(w, OwnedConditions(w, evicted, now)), std::nullopt);
  }
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
