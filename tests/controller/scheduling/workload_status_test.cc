#include "scheduling/workload_status.h"

#include <gtest/gtest.h>

#include "cache/compact_workload.h"
#include "small_cluster.h"

namespace rota::controller {
namespace {

using api::Json;

const Json* Condition(const WorkloadWrite& w, const std::string& type) {
  for (const Json& c : w.body["status"]["conditions"])
    if (c["type"] == type) return &c;
  return nullptr;
}

// ml/a, with `conditions` in its status.
api::Workload WithConditions(Json conditions) {
  Json doc = Json::parse(R"({"metadata": {"name": "a", "namespace": "ml"}, "spec": {"queueName": "gpu",
      "podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": [{"name": "c"}]}}}]}})");
  doc["status"] = {{"conditions", std::move(conditions)}};
  return *api::DecodeObject<api::Workload>(doc);
}

admission::AdmitDecision Admit() {
  admission::AdmitDecision d;
  d.workload = "ml/a";
  d.cluster_queue = "team";
  admission::PodSetAdmission ps;
  ps.name = "main";
  ps.count = 2;
  ps.flavors = {{"nvidia.com/gpu", "a100"}, {"memory", "a100"}};
  ps.usage = {{"nvidia.com/gpu", 8000}, {"memory", 512ll * 1024 * 1024 * 1024 * 1000}};
  d.pod_sets.push_back(ps);
  return d;
}

// ml/a as the Workload cache holds it after `admitted` was written.
Result<api::Workload> Cached(const WorkloadWrite& admitted) {
  Json doc = Json::parse(R"({"metadata": {"name": "a", "namespace": "ml", "resourceVersion": "7"},
      "spec": {"queueName": "gpu", "podSets": [{"name": "main", "count": 2,
      "template": {"spec": {"containers": [{"name": "c"}]}}}]}})");
  doc["status"] = admitted.body["status"];
  api::JsonInterner templates;
  return DecodeCompactWorkload(doc, templates);
}

TEST(WorkloadStatusTest, AnAdmissionSetsItsFlavorsUsageAndKueuesConditions) {
  const WorkloadWrite w = AdmitWrite(WithConditions(Json::array()), Admit(), "2026-11-01T10:00:00Z");
  EXPECT_EQ(w.body["apiVersion"], "kueue.x-k8s.io/v1beta2");
  EXPECT_EQ(w.body["kind"], "Workload");
  const Json& a = w.body["status"]["admission"];
  EXPECT_EQ(a["clusterQueue"], "team");
  EXPECT_EQ(a["podSetAssignments"][0]["count"], 2);
  EXPECT_EQ(a["podSetAssignments"][0]["flavors"]["nvidia.com/gpu"], "a100");
  EXPECT_EQ(a["podSetAssignments"][0]["resourceUsage"]["nvidia.com/gpu"], "8");
  EXPECT_EQ(a["podSetAssignments"][0]["resourceUsage"]["memory"], "512Gi");
  ASSERT_NE(Condition(w, "QuotaReserved"), nullptr);
  EXPECT_EQ((*Condition(w, "QuotaReserved"))["message"], "Quota reserved in ClusterQueue team");
  EXPECT_EQ((*Condition(w, "Admitted"))["status"], "True");
  ASSERT_TRUE(w.assume.has_value() && w.assume->has_value());
  EXPECT_EQ((*w.assume)->cluster_queue, "team");
}

// Admitted again after a preemption: the earlier eviction is no longer active, and a condition
// whose status does not change keeps its transition time.
TEST(WorkloadStatusTest, AReadmissionEndsTheEvictionAndKeepsUnchangedTransitionTimes) {
  const api::Workload w = WithConditions(Json::parse(R"([
    {"type": "Evicted", "status": "True", "reason": "Preempted", "message": "Preempted to accommodate workload ml/x",
     "lastTransitionTime": "2026-11-01T09:00:00Z"},
    {"type": "Admitted", "status": "True", "reason": "Admitted", "message": "The workload is admitted",
     "lastTransitionTime": "2026-11-01T08:00:00Z"},
    {"type": "Finished", "status": "False", "reason": "", "message": "", "lastTransitionTime": "2026-11-01T08:00:00Z"}])"));
  const WorkloadWrite out = AdmitWrite(w, Admit(), "2026-11-01T10:00:00Z");
  const Json* evicted = Condition(out, "Evicted");
  ASSERT_NE(evicted, nullptr);
  EXPECT_EQ((*evicted)["status"], "False");
  EXPECT_EQ((*evicted)["message"], "Previously: Preempted to accommodate workload ml/x");
  EXPECT_EQ((*evicted)["lastTransitionTime"], "2026-11-01T10:00:00Z");
  EXPECT_EQ((*Condition(out, "Admitted"))["lastTransitionTime"], "2026-11-01T08:00:00Z");
  EXPECT_EQ(Condition(out, "Finished"), nullptr);  // not rota's to apply
}

TEST(WorkloadStatusTest, APreemptionEvictsAndRequeuesWithKueuesReasons) {
  admission::PreemptDecision p;
  p.workload = "ml/a";
  p.preemptor = "ml/urgent";
  p.cluster_queue = "team";
  p.reason = admission::PreemptionReason::kInCohortReclamation;
  const WorkloadWrite w = PreemptWrite(WithConditions(Json::array()), p, "2026-11-01T10:00:00Z");
  const std::string message = "Preempted to accommodate workload ml/urgent due to reclamation within the cohort";
  EXPECT_EQ((*Condition(w, "Evicted"))["message"], message);
  EXPECT_EQ((*Condition(w, "Preempted"))["reason"], "InCohortReclamation");
  EXPECT_EQ((*Condition(w, "QuotaReserved"))["status"], "False");
  EXPECT_EQ((*Condition(w, "Admitted"))["reason"], "NoReservation");
  EXPECT_EQ((*Condition(w, "Requeued"))["status"], "True");
  EXPECT_FALSE(w.body["status"].contains("admission"));  // left out: server-side apply clears it
  ASSERT_TRUE(w.assume.has_value());
  EXPECT_FALSE(w.assume->has_value());
}

// A Job's Workload keeps its quota while its pods stop: the eviction re-applies its admission as
// the cache holds it, unchanged, and leaves QuotaReserved and Admitted alone.
TEST(WorkloadStatusTest, AnEvictionThatKeepsTheQuotaReappliesTheAdmissionUnchanged) {
  const WorkloadWrite admitted = AdmitWrite(WithConditions(Json::array()), Admit(), "2026-11-01T10:00:00Z");
  const Result<api::Workload> cached = Cached(admitted);
  ASSERT_TRUE(cached.ok()) << cached.status().message();
  admission::PreemptDecision p;
  p.workload = "ml/a";
  p.preemptor = "ml/urgent";
  p.reason = admission::PreemptionReason::kInClusterQueue;
  const WorkloadWrite w = EvictWrite(*cached, p, "2026-11-01T10:05:00Z");
  EXPECT_EQ(w.body["status"]["admission"], admitted.body["status"]["admission"]);
  EXPECT_EQ((*Condition(w, "Evicted"))["status"], "True");
  EXPECT_EQ((*Condition(w, "Evicted"))["reason"], "Preempted");
  EXPECT_EQ((*Condition(w, "Preempted"))["reason"], "InClusterQueue");
  EXPECT_EQ((*Condition(w, "QuotaReserved"))["status"], "True");
  EXPECT_EQ((*Condition(w, "QuotaReserved"))["lastTransitionTime"], "2026-11-01T10:00:00Z");
  EXPECT_EQ((*Condition(w, "Admitted"))["status"], "True");
  EXPECT_EQ(Condition(w, "Requeued"), nullptr);
  EXPECT_FALSE(w.assume.has_value()) << "the admission does not change";
}

TEST(WorkloadStatusTest, AStoppedQueueDrainsWithItsReason) {
  const WorkloadWrite cq = DrainWrite(WithConditions(Json::array()), true, "2026-11-01T10:00:00Z");
  EXPECT_EQ((*Condition(cq, "Evicted"))["reason"], "ClusterQueueStopped");
  const WorkloadWrite lq = DrainWrite(WithConditions(Json::array()), false, "2026-11-01T10:00:00Z");
  EXPECT_EQ((*Condition(lq, "Evicted"))["message"], "The LocalQueue is stopped");
}

// A drained Job keeps its quota until its pods are gone, as a preempted one does.
TEST(WorkloadStatusTest, ADrainedWorkloadWithPodsKeepsItsQuota) {
  const WorkloadWrite admitted = AdmitWrite(WithConditions(Json::array()), Admit(), "2026-11-01T10:00:00Z");
  const Result<api::Workload> cached = Cached(admitted);
  ASSERT_TRUE(cached.ok()) << cached.status().message();
  const WorkloadWrite w = DrainWrite(*cached, true, "2026-11-01T10:05:00Z", /*keep_quota=*/true);
  EXPECT_EQ(w.body["status"]["admission"], admitted.body["status"]["admission"]);
  EXPECT_EQ((*Condition(w, "Evicted"))["reason"], "ClusterQueueStopped");
  EXPECT_EQ((*Condition(w, "QuotaReserved"))["status"], "True");
  EXPECT_EQ((*Condition(w, "Admitted"))["status"], "True");
  const WorkloadWrite now = DrainWrite(*cached, true, "2026-11-01T10:05:00Z");
  EXPECT_NE(now.body["status"].value("admission", Json()), admitted.body["status"]["admission"]);
  EXPECT_EQ((*Condition(now, "QuotaReserved"))["status"], "False");
}

TEST(WorkloadStatusTest, APendingReasonIsQuotaReservedFalse) {
  const WorkloadWrite w =
      PendingWrite(WithConditions(Json::array()), "WaitingForQuota", "2 more needed", "2026-11-01T10:00:00Z");
  const Json* qr = Condition(w, "QuotaReserved");
  ASSERT_NE(qr, nullptr);
  EXPECT_EQ((*qr)["status"], "False");
  EXPECT_EQ((*qr)["reason"], "WaitingForQuota");
  EXPECT_EQ((*qr)["message"], "2 more needed");
  EXPECT_FALSE(w.assume.has_value());
}

}  // namespace
}  // namespace rota::controller
