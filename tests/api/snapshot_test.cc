#include "rota/api/snapshot.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>

namespace rota::api {
namespace {

TEST(PodRequestsTest, AddsContainersTakesTheLargestInitAndAddsOverhead) {
  Json pod = Json::parse(R"({"spec": {
    "containers": [
      {"name": "a", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"nvidia.com/gpu": 2}}},
      {"name": "b", "resources": {"requests": {"cpu": "1500m"}}}],
    "initContainers": [
      {"name": "download", "resources": {"requests": {"cpu": "4", "memory": "512Mi"}}},
      {"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}],
    "overhead": {"cpu": "250m"}}})");
  Result<admission::ResourceAmounts> r = PodRequests(pod, "template");
  ASSERT_TRUE(r.ok()) << r.status().message();
  // cpu: max(0.5 + 1.5 + 0.1 sidecar, 4 init) + 0.25 overhead
  EXPECT_EQ(r->at("cpu"), 4250);
  // memory: max(1Gi + 64Mi, 512Mi)
  EXPECT_EQ(r->at("memory"), (1024ll + 64) * 1024 * 1024 * 1000);
  // A limit stands in for a missing request.
  EXPECT_EQ(r->at("nvidia.com/gpu"), 2000);
}

TEST(PodRequestsTest, ErrorsNameTheField) {
  Json pod = Json::parse(
      R"({"spec": {"containers": [{"name": "a"}, {"name": "b", "resources": {"limits": {"cpu": "2 cores"}}}]}})");
  Result<admission::ResourceAmounts> r = PodRequests(pod, "spec.podSets[0].template");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "spec.podSets[0].template.spec.containers[1].resources.limits[\"cpu\"]: \"2 cores\" is not a "
            "valid quantity: unknown suffix \" cores\" (use one of n u m k M G T P E, Ki Mi Gi Ti Pi "
            "Ei, or an exponent such as e3)");
}

TEST(ParseTimeTest, ReadsTheApiserversTimes) {
  EXPECT_EQ(*ParseTime("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(*ParseTime("2026-11-01T10:00:00Z"), 1793527200);
  EXPECT_EQ(*ParseTime("2026-11-01T10:00:00.123456Z"), 1793527200);
  EXPECT_EQ(*ParseTime("2026-11-01T12:00:00+02:00"), 1793527200);
  EXPECT_EQ(*ParseTime(""), 0);
  EXPECT_FALSE(ParseTime("yesterday").ok());
  EXPECT_FALSE(ParseTime("2026-11-01T10:00:00Zjunk").ok());
}

TEST(BuildSnapshotTest, ResolvesQueuesPrioritiesAndSelectors) {
  ClusterState state;
  state.cluster_queues.push_back(*DecodeObject<ClusterQueue>(Json::parse(
      R"({"metadata": {"name": "team"}, "spec": {"namespaceSelector": {"matchLabels": {"team": "ml"}}}})")));
  state.local_queues.push_back(*DecodeObject<LocalQueue>(
      Json::parse(R"({"metadata": {"name": "gpu", "namespace": "ml"}, "spec": {"clusterQueue": "team"}})")));
  state.local_queues.push_back(*DecodeObject<LocalQueue>(
      Json::parse(R"({"metadata": {"name": "gpu", "namespace": "other"}, "spec": {"clusterQueue": "team"}})")));
  state.priority_classes.push_back(*DecodeObject<WorkloadPriorityClass>(Json::parse(
      R"({"metadata": {"name": "critical", "annotations": {"rota.dev/preemptible": "false"}}, "value": 1000})")));
  state.namespace_labels["ml"] = {{"team", "ml"}};
  auto workload = [](const std::string& ns, const std::string& extra) {
    return std::make_shared<const Workload>(*DecodeObject<Workload>(
        Json::parse(R"({"metadata": {"name": "w", "namespace": ")" + ns + R"("}, "spec": {"queueName": "gpu",
            "podSets": [{"count": 2, "template": {"spec": {"containers": [{"name": "c",
            "resources": {"requests": {"nvidia.com/gpu": 1}}}]}}}])" +
                    extra + "}}")));
  };
  state.workloads.push_back(workload("ml", R"(, "priorityClassRef": {"group": "kueue.x-k8s.io",
      "kind": "WorkloadPriorityClass", "name": "critical"})"));
  state.workloads.push_back(workload("other", ""));
  Result<admission::Snapshot> s = BuildSnapshot(state);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->workloads.size(), 2u);
  const auto& ml = s->workloads[0];
  EXPECT_EQ(ml.cluster_queue, "team");
  EXPECT_EQ(ml.priority, 1000);
  EXPECT_FALSE(ml.preemptible);
  EXPECT_EQ(ml.pod_sets[0].per_pod.at("nvidia.com/gpu"), 1000);
  EXPECT_EQ(ml.inadmissible_reason, "");
  EXPECT_EQ(s->workloads[1].inadmissible_message, "Workload namespace doesn't match ClusterQueue selector");
}

TEST(BuildSnapshotTest, KeepGoingLeavesAnUnreadableWorkloadPendingWithTheError) {
  ClusterState state;
  state.cluster_queues.push_back(
      *DecodeObject<ClusterQueue>(Json::parse(R"({"metadata": {"name": "team"}, "spec": {"namespaceSelector": {}}})")));
  state.local_queues.push_back(*DecodeObject<LocalQueue>(
      Json::parse(R"({"metadata": {"name": "gpu", "namespace": "ml"}, "spec": {"clusterQueue": "team"}})")));
  auto workload = [](const std::string& name, const std::string& gpus) {
    return std::make_shared<const Workload>(*DecodeObject<Workload>(
        Json::parse(R"({"metadata": {"name": ")" + name + R"(", "namespace": "ml", "uid": "uid-)" + name +
                    R"(", "generation": 1}, "spec": {"queueName": "gpu",
            "podSets": [{"count": 1, "template": {"spec": {"containers": [{"name": "c",
            "resources": {"requests": {"nvidia.com/gpu": ")" +
                    gpus + R"("}}}]}}}]}})")));
  };
  state.workloads = {workload("bad", "lots"), workload("good", "1")};
  Result<admission::Snapshot> strict = BuildSnapshot(state);
  ASSERT_FALSE(strict.ok());
  EXPECT_NE(strict.status().message().find("Workload \"ml/bad\""), std::string::npos) << strict.status().message();

  state.keep_going = true;
  Result<admission::Snapshot> s = BuildSnapshot(state);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->workloads.size(), 2u);
  EXPECT_EQ(s->workloads[0].key, "ml/bad");
  EXPECT_EQ(s->workloads[0].inadmissible_reason, "Inadmissible");
  EXPECT_NE(s->workloads[0].inadmissible_message.find("\"lots\" is not a valid quantity"), std::string::npos)
      << s->workloads[0].inadmissible_message;
  EXPECT_EQ(s->workloads[1].inadmissible_reason, "");
  EXPECT_EQ(s->workloads[1].pod_sets.at(0).per_pod.at("nvidia.com/gpu"), 1000);

  // The kept snapshot does the same, and a failure is not remembered as an empty pod set: a
  // new object of the workload at the same generation (a status change) is read again.
  SnapshotBuilder builder;
  for (int build = 0; build < 3; ++build) {
    if (build == 2) {
      Workload changed = *state.workloads[0];
      changed.metadata.resource_version = "2";
      state.workloads[0] = std::make_shared<const Workload>(changed);
    }
    ASSERT_TRUE(builder.Build(state).ok());
    const admission::WorkloadSpec* bad = builder.Find("ml/bad");
    ASSERT_NE(bad, nullptr);
    EXPECT_EQ(bad->inadmissible_reason, "Inadmissible") << "build " << build;
    EXPECT_NE(bad->inadmissible_message.find("\"lots\" is not a valid quantity"), std::string::npos)
        << "build " << build;
  }
}

// One ClusterQueue "team" with LocalQueue ml/gpu; workloads ml/<name> asking for `gpus` GPUs.
ClusterState TeamState() {
  ClusterState state;
  state.cluster_queues.push_back(*DecodeObject<ClusterQueue>(
      Json::parse(R"({"metadata": {"name": "team", "resourceVersion": "1"}, "spec": {"namespaceSelector": {}}})")));
  state.local_queues.push_back(*DecodeObject<LocalQueue>(Json::parse(
      R"({"metadata": {"name": "gpu", "namespace": "ml", "resourceVersion": "1"}, "spec": {"clusterQueue": "team"}})")));
  return state;
}

std::shared_ptr<const Workload> GpuWorkload(const std::string& name, int generation, int gpus,
                                            const std::string& status = "{}") {
  return std::make_shared<const Workload>(*DecodeObject<Workload>(Json::parse(
      R"({"metadata": {"name": ")" + name + R"(", "namespace": "ml", "uid": "uid-)" + name +
      R"(", "resourceVersion": "1", "generation": )" + std::to_string(generation) + R"(}, "spec": {"queueName": "gpu",
          "podSets": [{"count": 1, "template": {"spec": {"containers": [{"name": "c",
          "resources": {"requests": {"nvidia.com/gpu": )" +
      std::to_string(gpus) + "}}}]}}}]}, \"status\": " + status + "}")));
}

int64_t GpusOf(const SnapshotBuilder& b, const std::string& key) {
  const admission::WorkloadSpec* w = b.Find(key);
  return w && !w->pod_sets.empty() ? w->pod_sets.at(0).per_pod.at("nvidia.com/gpu") / 1000 : -1;
}

// One ClusterQueue rota cannot use does not stop the others: with keep_going it is inactive with
// the reason; without it (rota simulate) it is an error.
TEST(BuildSnapshotTest, KeepGoingMakesAnUnusableClusterQueueInactiveAlone) {
  ClusterState state;
  state.cluster_queues.push_back(*DecodeObject<ClusterQueue>(Json::parse(R"({"metadata": {"name": "bad"},
      "spec": {"preemption": {"reclaimWithinCohort": "LowerOrNewerEqualPriority"}}})")));
  state.cluster_queues.push_back(
      *DecodeObject<ClusterQueue>(Json::parse(R"({"metadata": {"name": "good"}, "spec": {}})")));
  Result<admission::Snapshot> strict = BuildSnapshot(state);
  ASSERT_FALSE(strict.ok());
  EXPECT_NE(strict.status().message().find("spec.preemption.reclaimWithinCohort"), std::string::npos);

  state.keep_going = true;
  Result<admission::Snapshot> s = BuildSnapshot(state);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->cluster_queues.size(), 2u);
  EXPECT_EQ(s->cluster_queues[0].name, "bad");
  EXPECT_NE(s->cluster_queues[0].invalid.find("rota cannot use its spec: ClusterQueue \"bad\": "
                                              "spec.preemption.reclaimWithinCohort"),
            std::string::npos)
      << s->cluster_queues[0].invalid;
  EXPECT_EQ(s->cluster_queues[1].invalid, "");
}

TEST(SnapshotBuilderTest, ReadsAPodTemplateAgainOnlyWhenTheGenerationChanges) {
  ClusterState state = TeamState();
  SnapshotBuilder b;
  state.workloads = {GpuWorkload("a", 1, 2), GpuWorkload("b", 1, 3)};
  ASSERT_TRUE(b.Build(state).ok());
  EXPECT_EQ(GpusOf(b, "ml/a"), 2);
  EXPECT_EQ(GpusOf(b, "ml/b"), 3);
  // A new object at the same generation is the same spec (the apiserver bumps the generation on
  // every spec change): its pod sets are kept, so a template edited behind its back is not seen,
  // while the rest of the object (here its status) is read.
  state.workloads[0] = GpuWorkload("a", 1, 5, R"({"conditions": [{"type": "QuotaReserved", "status": "False",
      "reason": "Pending", "message": "", "lastTransitionTime": "2026-11-22T10:00:00Z"}]})");
  state.workloads[0] = GpuWorkload("a", 1, 5, R"({"admission": {"clusterQueue": "team", "podSetAssignments": [
      {"name": "main", "flavors": {"nvidia.com/gpu": "a100"}, "resourceUsage": {"nvidia.com/gpu": "2"}, "count": 1}]}})");
  ASSERT_TRUE(b.Build(state).ok());
  EXPECT_EQ(GpusOf(b, "ml/a"), 2);
  ASSERT_TRUE(b.Find("ml/a")->admission.has_value());
  EXPECT_EQ(b.Find("ml/a")->admission->cluster_queue, "team");
  // A new generation is read again.
  state.workloads[0] = GpuWorkload("a", 2, 5);
  ASSERT_TRUE(b.Build(state).ok());
  EXPECT_EQ(GpusOf(b, "ml/a"), 5);
  EXPECT_FALSE(b.Find("ml/a")->admission.has_value());
  // A workload no longer in the state is forgotten; one that is Finished is left out.
  state.workloads = {GpuWorkload("b", 1, 3, R"({"conditions": [{"type": "Finished", "status": "True",
      "reason": "Succeeded", "message": "", "lastTransitionTime": "2026-11-22T10:00:00Z"}]})")};
  ASSERT_TRUE(b.Build(state).ok());
  EXPECT_TRUE(b.snapshot().workloads.empty());
  EXPECT_EQ(b.Object("ml/a"), nullptr);
  EXPECT_EQ(b.Object("ml/b"), nullptr);
}

TEST(SnapshotBuilderTest, ResolvesWorkloadsAgainWhenTheirQueuesChange) {
  ClusterState state = TeamState();
  state.workloads = {GpuWorkload("a", 1, 1)};
  SnapshotBuilder b;
  ASSERT_TRUE(b.Build(state).ok());
  EXPECT_EQ(b.Find("ml/a")->cluster_queue, "team");
  EXPECT_EQ(b.LocalQueueOf(0), "ml/gpu");
  // The same Workload object, but its LocalQueue now points elsewhere (a new resourceVersion).
  state.local_queues[0].spec.cluster_queue = "other";
  state.local_queues[0].metadata.resource_version = "2";
  ASSERT_TRUE(b.Build(state).ok());
  EXPECT_EQ(b.Find("ml/a")->cluster_queue, "other");
  // The ClusterQueue's namespaceSelector stops selecting the namespace.
  state.local_queues[0].spec.cluster_queue = "team";
  state.local_queues[0].metadata.resource_version = "3";
  ASSERT_TRUE(b.Build(state).ok());
  EXPECT_EQ(b.Find("ml/a")->inadmissible_reason, "");
  state.cluster_queues[0] = *DecodeObject<ClusterQueue>(Json::parse(
      R"({"metadata": {"name": "team", "resourceVersion": "2"}, "spec": {"namespaceSelector": {"matchLabels": {"team": "ml"}}}})"));
  ASSERT_TRUE(b.Build(state).ok());
  EXPECT_EQ(b.Find("ml/a")->inadmissible_message, "Workload namespace doesn't match ClusterQueue selector");
  // The namespace gets the label.
  state.namespace_labels["ml"] = {{"team", "ml"}};
  ASSERT_TRUE(b.Build(state).ok());
  EXPECT_EQ(b.Find("ml/a")->inadmissible_reason, "");
}

// The budgets' gates resolve workloads again when they change (the pools' remainders alone do
// not), and a running workload's remaining maximum execution time is taken from its pool.
TEST(SnapshotBuilderTest, FollowsTheBudgetsGates) {
  ClusterState state = TeamState();
  state.now = 10000;
  state.workloads = {GpuWorkload("a", 1, 1)};
  SnapshotBuilder b;
  ASSERT_TRUE(b.Build(state).ok());
  EXPECT_EQ(b.Find("ml/a")->inadmissible_reason, "");

  BudgetGate hold;
  hold.budget = "team-monthly";
  hold.exhausted = true;
  hold.message = "ClusterQueue team used all 100 GPU-hours";
  state.budget_gates["team"] = {hold};
  ASSERT_TRUE(b.Build(state).ok());
  EXPECT_EQ(b.Find("ml/a")->inadmissible_reason, "BudgetExhausted");
  EXPECT_EQ(b.Find("ml/a")->inadmissible_message, "ClusterQueue team used all 100 GPU-hours");

  BudgetGate best_effort = hold;
  best_effort.when_exhausted = WhenExhausted::kBestEffort;
  state.budget_gates["team"] = {best_effort};
  ASSERT_TRUE(b.Build(state).ok());
  EXPECT_EQ(b.Find("ml/a")->inadmissible_reason, "");
  EXPECT_EQ(b.Find("ml/a")->priority, std::numeric_limits<int32_t>::min());
  EXPECT_FALSE(b.Find("ml/a")->may_preempt);

  // requireFit: "r" runs 1 GPU with 1000 s of its 3600 s left; "a" would run 2 GPUs for 3600 s.
  BudgetGate fit;
  fit.budget = "team-monthly";
  fit.fit_pools["nvidia.com/gpu"] = {5'000'000, {{"nvidia.com/gpu", 1000}}};
  fit.fit_message = "too little left";
  state.budget_gates["team"] = {fit};
  Workload a = *GpuWorkload("a", 2, 2);
  a.spec.maximum_execution_time_seconds = 3600;
  Workload r = *GpuWorkload("r", 1, 1, R"({"conditions": [{"type": "QuotaReserved", "status": "True",
      "reason": "QuotaReserved", "message": "m", "lastTransitionTime": "1970-01-01T01:40:00Z"}], "admission": {"clusterQueue": "team",
      "podSetAssignments": [{"name": "main", "resourceUsage": {"nvidia.com/gpu": "1"}}]}})");
  r.spec.maximum_execution_time_seconds = 3600;
  state.now = 6000 + 2600;  // (admitted at 6000)
  state.workloads = {std::make_shared<const Workload>(a), std::make_shared<const Workload>(r)};
  ASSERT_TRUE(b.Build(state).ok());
  ASSERT_EQ(b.snapshot().budget_pools.size(), 1u);
  EXPECT_EQ(b.snapshot().budget_pools[0].remaining, 5'000'000 - 1000 * 1000);
  EXPECT_EQ(b.snapshot().budget_pools[0].message, "too little left");
  ASSERT_EQ(b.Find("ml/a")->budget_charges.size(), 1u);
  EXPECT_EQ(b.Find("ml/a")->budget_charges[0].amount, 2000 * 3600);
}

// Admission fair sharing: workloads of a ClusterQueue with admissionScope UsageBasedAdmissionFairSharing
// name their LocalQueue's place, whose usage is its decayed usage (weighted) plus the entry
// penalty of each admission since its last sample.
TEST(BuildSnapshotTest, AdmissionFairSharingGivesEachLocalQueueItsUsage) {
  ClusterState state = TeamState();
  state.cluster_queues[0].spec.admission_scope = AdmissionScope{AdmissionMode::kUsageBasedAdmissionFairSharing};
  LocalQueue other = state.local_queues[0];
  other.metadata.name = "other";
  other.spec.fair_sharing = FairSharing{Quantity::FromUnits(2)};
  state.local_queues.push_back(other);
  state.admission_fair_sharing = AdmissionFairSharingConfig{600, 300, {{"nvidia.com/gpu", 2}}};
  state.local_queue_usage["ml/gpu"] = {{{"nvidia.com/gpu", 3}}, 100};
  // "run" was admitted at 200, after gpu's last sample (100): its 1 GPU adds the entry penalty.
  state.workloads = {GpuWorkload("a", 1, 1), GpuWorkload("run", 1, 1, R"({"conditions": [{"type": "QuotaReserved",
      "status": "True", "reason": "QuotaReserved", "message": "m", "lastTransitionTime": "1970-01-01T00:03:20Z"}],
      "admission": {"clusterQueue": "team", "podSetAssignments": [{"name": "main", "resourceUsage": {"nvidia.com/gpu": "1"}}]}})")};
  auto snapshot = BuildSnapshot(state);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().message();
  const admission::AdmissionFairSharing& afs = snapshot->admission_fair_sharing;
  const double penalty = 1 - std::pow(0.5, 0.5);
  EXPECT_DOUBLE_EQ(afs.entry_penalty, penalty);
  ASSERT_EQ(afs.queues.size(), 2u);  // ml/gpu, ml/other
  EXPECT_DOUBLE_EQ(afs.queues[0].usage, 3 * 2 + penalty * 1 * 2);
  EXPECT_DOUBLE_EQ(afs.queues[0].weight, 1);
  EXPECT_DOUBLE_EQ(afs.queues[1].usage, 0);
  EXPECT_DOUBLE_EQ(afs.queues[1].weight, 2);
  EXPECT_EQ(snapshot->workloads[0].fair_queue, 0);

  // Without the admissionScope, nothing is fair-shared.
  state.cluster_queues[0].spec.admission_scope.reset();
  snapshot = BuildSnapshot(state);
  EXPECT_TRUE(snapshot->admission_fair_sharing.queues.empty());
  EXPECT_EQ(snapshot->workloads[0].fair_queue, -1);
}

TEST(SnapshotBuilderTest, QueueStatusWritesDoNotResolveWorkloadsAgain) {
  ClusterState state = TeamState();
  state.cluster_queues[0].metadata.generation = 1;
  state.local_queues[0].metadata.generation = 1;
  state.workloads = {GpuWorkload("a", 1, 1)};
  SnapshotBuilder b;
  ASSERT_TRUE(b.Build(state).ok());
  EXPECT_EQ(b.Find("ml/a")->cluster_queue, "team");
  // A new resourceVersion at the same generation is a status write (the apiserver bumps the
  // generation of an object with a status subresource only when its spec changes): the spec
  // seen here is taken as unchanged, so the workload keeps its entry.
  state.local_queues[0].spec.cluster_queue = "other";
  state.local_queues[0].metadata.resource_version = "2";
  state.cluster_queues[0].metadata.resource_version = "2";
  ASSERT_TRUE(b.Build(state).ok());
  EXPECT_EQ(b.Find("ml/a")->cluster_queue, "team");
  // A new generation is a spec change.
  state.local_queues[0].metadata.generation = 2;
  ASSERT_TRUE(b.Build(state).ok());
  EXPECT_EQ(b.Find("ml/a")->cluster_queue, "other");
}

// Look-alikes get one shape number, which stays with them from build to build.
TEST(SnapshotBuilderTest, QueueNumbersNameEachWorkloadsQueuesAndForgetNamesNoLongerUsed) {
  auto in_queue = [](const std::string& name, const std::string& queue) {
    return std::make_shared<const Workload>(*DecodeObject<Workload>(
        Json::parse(R"({"metadata": {"name": ")" + name + R"(", "namespace": "ml", "uid": "uid-)" + name +
                    R"(", "resourceVersion": "1", "generation": 1}, "spec": {"queueName": ")" + queue + R"(",
            "podSets": [{"count": 1, "template": {"spec": {"containers": [{"name": "c"}]}}}]}})")));
  };
  ClusterState state = TeamState();
  state.workloads = {GpuWorkload("a", 1, 1), in_queue("b", "nowhere")};
  SnapshotBuilder b;
  ASSERT_TRUE(b.Build(state).ok());
  for (size_t i = 0; i < b.snapshot().workloads.size(); ++i) {
    const std::string& key = b.snapshot().workloads[i].key;
    if (key == "ml/a") {
      EXPECT_EQ(b.QueueName(b.LocalQueueNumberOf(i)), "ml/gpu");
      ASSERT_NE(b.ClusterQueueNumberOf(i), SnapshotBuilder::kNoQueue);
      EXPECT_EQ(b.QueueName(b.ClusterQueueNumberOf(i)), "team");
    } else {
      EXPECT_EQ(b.QueueName(b.LocalQueueNumberOf(i)), "ml/nowhere");
      EXPECT_EQ(b.ClusterQueueNumberOf(i), SnapshotBuilder::kNoQueue);  // no such LocalQueue
    }
  }
  // Thousands of workloads in queues of their own come and go: their names are let go, and the
  // workload that stays keeps the right names under its new numbers.
  for (int i = 0; i < 3000; ++i) state.workloads.push_back(in_queue("w" + std::to_string(i), "q" + std::to_string(i)));
  ASSERT_TRUE(b.Build(state).ok());
  EXPECT_GE(b.QueueNumbers(), 3000u);
  state.workloads.resize(1);
  ASSERT_TRUE(b.Build(state).ok());
  EXPECT_LE(b.QueueNumbers(), 2u);
  ASSERT_EQ(b.snapshot().workloads.size(), 1u);
  EXPECT_EQ(b.QueueName(b.LocalQueueNumberOf(0)), "ml/gpu");
  EXPECT_EQ(b.QueueName(b.ClusterQueueNumberOf(0)), "team");
  EXPECT_EQ(b.LocalQueueOf(0), "ml/gpu");
}

// An entry's stamp stays while the entry does, and changes when it is made again or handed out to
// change, so what a caller derived from it is known stale.
TEST(SnapshotBuilderTest, StampsChangeWithTheEntryOnly) {
  ClusterState state = TeamState();
  state.workloads = {GpuWorkload("a", 1, 1), GpuWorkload("b", 1, 2), GpuWorkload("c", 1, 4)};
  SnapshotBuilder b;
  ASSERT_TRUE(b.Build(state).ok());
  auto stamps = [&] {
    std::map<std::string, uint64_t> out;
    for (size_t i = 0; i < b.snapshot().workloads.size(); ++i) out[b.snapshot().workloads[i].key] = b.StampOf(i);
    return out;
  };
  const auto first = stamps();
  ASSERT_EQ(first.size(), 3u);
  EXPECT_NE(first.at("ml/a"), 0u);
  EXPECT_NE(first.at("ml/a"), first.at("ml/b"));
  EXPECT_NE(first.at("ml/b"), first.at("ml/c"));
  ASSERT_TRUE(b.Build(state).ok());
  EXPECT_EQ(stamps(), first);  // nothing changed
  // A new object for b, a change through Mutable for c, and a removed a (whose place another
  // entry takes): only b and c get new stamps, never one given before.
  state.workloads = {GpuWorkload("b", 2, 3), state.workloads[2]};
  b.Mutable("ml/c")->priority = 0;
  const uint64_t c_changed = stamps().at("ml/c");
  EXPECT_NE(c_changed, first.at("ml/c"));
  ASSERT_TRUE(b.Build(state).ok());
  const auto after = stamps();
  ASSERT_EQ(after.size(), 2u);
  for (const auto& [key, stamp] : after) {
    for (const auto& [k, old] : first) EXPECT_NE(stamp, old) << key << " has " << k << "'s old stamp";
  }
  EXPECT_NE(after.at("ml/c"), c_changed);  // made again from its object after the change
  ASSERT_TRUE(b.Build(state).ok());
  EXPECT_EQ(stamps(), after);
}

TEST(SnapshotBuilderTest, NumbersLookAlikesOnce) {
  ClusterState state = TeamState();
  state.workloads = {GpuWorkload("a", 1, 2), GpuWorkload("b", 1, 2), GpuWorkload("c", 1, 3)};
  SnapshotBuilder b;
  ASSERT_TRUE(b.Build(state).ok());
  const uint32_t two = b.Find("ml/a")->shape;
  EXPECT_NE(two, 0u);
  EXPECT_EQ(b.Find("ml/b")->shape, two);
  EXPECT_NE(b.Find("ml/c")->shape, 0u);
  EXPECT_NE(b.Find("ml/c")->shape, two);
  // c is changed to ask for two GPUs: it becomes a look-alike of a and b.
  state.workloads[2] = GpuWorkload("c", 2, 2);
  ASSERT_TRUE(b.Build(state).ok());
  EXPECT_EQ(b.Find("ml/c")->shape, two);
  EXPECT_EQ(b.Find("ml/a")->shape, two);
}

TEST(SnapshotBuilderTest, AnEntryTheCallerChangedIsMadeAgain) {
  ClusterState state = TeamState();
  state.workloads = {GpuWorkload("a", 1, 1)};
  SnapshotBuilder b;
  ASSERT_TRUE(b.Build(state).ok());
  b.Mutable("ml/a")->inadmissible_reason = "WaitingForQuota";
  EXPECT_EQ(b.Find("ml/a")->inadmissible_reason, "WaitingForQuota");
  ASSERT_TRUE(b.Build(state).ok());
  EXPECT_EQ(b.Find("ml/a")->inadmissible_reason, "");
  EXPECT_EQ(b.Mutable("ml/none"), nullptr);
}

TEST(SnapshotBuilderTest, BackoffEndsWithTimeWithoutANewObject) {
  ClusterState state = TeamState();
  state.workloads = {GpuWorkload("a", 1, 1, R"({"requeueState": {"count": 1, "requeueAt": "2026-11-22T10:00:10Z"}})")};
  state.now = *ParseTime("2026-11-22T10:00:00Z");
  SnapshotBuilder b;
  ASSERT_TRUE(b.Build(state).ok());
  EXPECT_EQ(b.Find("ml/a")->inadmissible_reason, "Backoff");
  state.now += 11;
  ASSERT_TRUE(b.Build(state).ok());
  EXPECT_EQ(b.Find("ml/a")->inadmissible_reason, "");
}

// Whatever the sequence of changes, the kept snapshot has the entries BuildSnapshot makes.
TEST(SnapshotBuilderTest, AgreesWithBuildSnapshotThroughChanges) {
  ClusterState state = TeamState();
  state.keep_going = true;
  SnapshotBuilder b;
  auto by_key = [](const admission::Snapshot& s) {
    std::map<std::string, std::string> out;
    for (const auto& w : s.workloads) {
      out[w.key] = w.cluster_queue + "|" +
                   std::to_string(w.pod_sets.empty() ? -1 : w.pod_sets[0].per_pod.at("nvidia.com/gpu")) + "|" +
                   (w.admission ? w.admission->cluster_queue : "-") + "|" + w.inadmissible_reason;
    }
    return out;
  };
  const std::string admitted = R"({"admission": {"clusterQueue": "team", "podSetAssignments": [
      {"name": "main", "flavors": {"nvidia.com/gpu": "a100"}, "resourceUsage": {"nvidia.com/gpu": "1"}, "count": 1}]}})";
  for (int step = 0; step < 40; ++step) {
    const std::string name = "w" + std::to_string(step % 7);
    const auto existing = std::find_if(state.workloads.begin(), state.workloads.end(),
                                       [&](const auto& w) { return w->metadata.name == name; });
    // A spec change comes with a new generation (as the apiserver does it).
    const int generation = 1 + step / 10;
    auto fresh = GpuWorkload(name, generation, 1 + (generation + step % 7) % 3, step % 4 == 0 ? admitted : "{}");
    if (existing == state.workloads.end()) {
      state.workloads.push_back(fresh);
    } else if (step % 5 == 0) {
      state.workloads.erase(existing);
    } else {
      *existing = fresh;
    }
    if (step % 9 == 0) {
      state.local_queues[0].metadata.resource_version = std::to_string(10 + step);
      state.local_queues[0].spec.cluster_queue = step % 2 ? "team" : "elsewhere";
    }
    ASSERT_TRUE(b.Build(state).ok());
    Result<admission::Snapshot> fresh_snapshot = BuildSnapshot(state);
    ASSERT_TRUE(fresh_snapshot.ok());
    EXPECT_EQ(by_key(b.snapshot()), by_key(*fresh_snapshot)) << "step " << step;
    // One entry per workload, each found by its key, and nothing found for a gone one.
    ASSERT_EQ(b.snapshot().workloads.size(), fresh_snapshot->workloads.size()) << "step " << step;
    for (const auto& w : fresh_snapshot->workloads) {
      const admission::WorkloadSpec* found = b.Find(w.key);
      ASSERT_NE(found, nullptr) << w.key << " at step " << step;
      EXPECT_EQ(found->key, w.key) << "step " << step;
      EXPECT_EQ(b.Object(w.key)->metadata.name, w.key.substr(w.key.find('/') + 1)) << "step " << step;
    }
    for (int gone = 0; gone < 7; ++gone) {
      const std::string key = "ml/w" + std::to_string(gone);
      if (!by_key(*fresh_snapshot).count(key)) {
        EXPECT_EQ(b.Find(key), nullptr) << key << " at step " << step;
      }
    }
  }
}

// A caller that vouches for the objects the builder already holds passes only the changed ones:
// the vouched entries stay (and are resolved again when their queues change), an entry neither
// vouched for nor passed goes, and an object the builder does not hold cannot be vouched for.
TEST(SnapshotBuilderTest, EntriesVouchedForStayWithoutTheirObjects) {
  ClusterState state = TeamState();
  state.keep_going = true;
  auto a = GpuWorkload("a", 1, 1), b = GpuWorkload("b", 1, 2), c = GpuWorkload("c", 1, 3);
  state.workloads = {a, b, c};
  SnapshotBuilder builder;
  ASSERT_TRUE(builder.Build(state).ok());

  auto b2 = GpuWorkload("b", 2, 4);
  EXPECT_FALSE(builder.StillHas(b2.get(), 1));
  EXPECT_TRUE(builder.StillHas(a.get(), 0));
  state.workloads = {b2};  // a vouched for, b changed, c gone
  ASSERT_TRUE(builder.Build(state).ok());
  EXPECT_EQ(builder.snapshot().workloads.size(), 2u);
  EXPECT_EQ(GpusOf(builder, "ml/a"), 1);
  EXPECT_EQ(GpusOf(builder, "ml/b"), 4);
  EXPECT_EQ(GpusOf(builder, "ml/c"), -1);
  EXPECT_EQ(builder.Find("ml/a")->cluster_queue, "team");

  // The LocalQueue now points elsewhere: the vouched entry is resolved again too.
  state.local_queues[0].metadata.resource_version = "2";
  state.local_queues[0].metadata.generation = 2;
  state.local_queues[0].spec.cluster_queue = "other";
  EXPECT_TRUE(builder.StillHas(a.get(), 0));
  EXPECT_TRUE(builder.StillHas(b2.get(), 1));
  state.workloads = {};
  ASSERT_TRUE(builder.Build(state).ok());
  ASSERT_EQ(builder.snapshot().workloads.size(), 2u);
  EXPECT_EQ(builder.Find("ml/a")->cluster_queue, "other");
  EXPECT_EQ(builder.Find("ml/b")->cluster_queue, "other");
  // Found at each other's places, and again at their own.
  for (int build = 0; build < 2; ++build) {
    EXPECT_TRUE(builder.StillHas(a.get(), 1 - build));
    EXPECT_TRUE(builder.StillHas(b2.get(), build));
    ASSERT_TRUE(builder.Build(state).ok());
    EXPECT_EQ(builder.snapshot().workloads.size(), 2u) << "build " << build;
  }
  // An entry the caller changed is not vouched for, even where it was found before.
  builder.Mutable("ml/a");
  EXPECT_FALSE(builder.StillHas(a.get(), 0));
  EXPECT_TRUE(builder.StillHas(b2.get(), 1));
  state.workloads = {a};
  ASSERT_TRUE(builder.Build(state).ok());
  EXPECT_EQ(builder.snapshot().workloads.size(), 2u);
  EXPECT_EQ(&builder.ObjectAt(builder.snapshot().order.at(0)), a.get());  // (created at the same time: by key)

  // Not vouched for again: gone.
  state.workloads = {};
  ASSERT_TRUE(builder.Build(state).ok());
  EXPECT_TRUE(builder.snapshot().workloads.empty());
  EXPECT_TRUE(builder.snapshot().order.empty());
}

// The order the builder keeps from build to build is the one a sort of the current entries
// gives, through workloads that come, go, change priority and are created again under their
// name, and a build that changes nothing.
TEST(SnapshotBuilderTest, KeepsTheSchedulingOrderThroughChanges) {
  ClusterState state = TeamState();
  state.keep_going = true;
  state.priority_classes.push_back(*DecodeObject<WorkloadPriorityClass>(
      Json::parse(R"({"metadata": {"name": "high", "resourceVersion": "1"}, "value": 100})")));
  SnapshotBuilder b;
  std::mt19937 rng(7);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  auto workload = [&](const std::string& name, int created, bool high) {
    Workload w = *GpuWorkload(name, 1, 1);
    // Many share a creation second, so that keys break ties.
    w.metadata.creation_timestamp = FormatTime(1'790'000'000 + created / 4);
    w.metadata.uid = "uid-" + name + "-" + std::to_string(created);
    if (high) w.spec.priority_class_ref = PriorityClassRef{"kueue.x-k8s.io", "WorkloadPriorityClass", "high"};
    return std::make_shared<const Workload>(std::move(w));
  };
  int created = 0;
  for (int step = 0; step < 60; ++step) {
    const int changes = step % 10 == 9 ? 0 : 1 + pick(12);
    for (int c = 0; c < changes; ++c) {
      const std::string name = "w" + std::to_string(pick(80));
      auto it = std::find_if(state.workloads.begin(), state.workloads.end(),
                             [&](const auto& w) { return w->metadata.name == name; });
      if (it == state.workloads.end()) {
        state.workloads.push_back(workload(name, created++, pick(3) == 0));
      } else if (pick(3) == 0) {
        state.workloads.erase(it);
      } else {
        *it = workload(name, pick(2) ? created++ : 0, pick(2) == 0);  // new time or priority (or both)
      }
    }
    std::shuffle(state.workloads.begin(), state.workloads.end(), rng);
    ASSERT_TRUE(b.Build(state).ok());
    const admission::Snapshot& s = b.snapshot();
    ASSERT_EQ(s.order.size(), s.workloads.size()) << "step " << step;
    std::vector<std::string> kept, sorted;
    for (uint32_t i : s.order) kept.push_back(s.workloads.at(i).key);
    std::vector<const admission::WorkloadSpec*> entries;
    for (const auto& w : s.workloads) entries.push_back(&w);
    std::sort(entries.begin(), entries.end(),
              [](const auto* x, const auto* y) { return admission::InSchedulingOrder(*x, *y); });
    for (const auto* w : entries) sorted.push_back(w->key);
    ASSERT_EQ(kept, sorted) << "step " << step;
  }
  EXPECT_GT(b.snapshot().workloads.size(), 20u);
}

}  // namespace
}  // namespace rota::api
