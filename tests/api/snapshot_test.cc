#include "rota/api/snapshot.h"

#include <gtest/gtest.h>

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
  Json pod = Json::parse(R"({"spec": {"containers": [{"name": "a"}, {"name": "b", "resources": {"limits": {"cpu": "2 cores"}}}]}})");
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
    return std::make_shared<const Workload>(*DecodeObject<Workload>(Json::parse(
        R"({"metadata": {"name": "w", "namespace": ")" + ns + R"("}, "spec": {"queueName": "gpu",
            "podSets": [{"count": 2, "template": {"spec": {"containers": [{"name": "c",
            "resources": {"requests": {"nvidia.com/gpu": 1}}}]}}}])" + extra + "}}")));
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

TEST(BuildSnapshotTest, MemoReadsAPodTemplateAgainOnlyWhenTheGenerationChanges) {
  ClusterState state;
  state.cluster_queues.push_back(*DecodeObject<ClusterQueue>(Json::parse(R"({"metadata": {"name": "team"}})")));
  state.local_queues.push_back(*DecodeObject<LocalQueue>(
      Json::parse(R"({"metadata": {"name": "gpu", "namespace": "ml"}, "spec": {"clusterQueue": "team"}})")));
  auto workload = [](const std::string& name, int generation, int gpus) {
    return std::make_shared<const Workload>(*DecodeObject<Workload>(Json::parse(
        R"({"metadata": {"name": ")" + name + R"(", "namespace": "ml", "uid": "uid-)" + name +
        R"(", "generation": )" + std::to_string(generation) + R"(}, "spec": {"queueName": "gpu",
            "podSets": [{"count": 1, "template": {"spec": {"containers": [{"name": "c",
            "resources": {"requests": {"nvidia.com/gpu": )" + std::to_string(gpus) + "}}}]}}}]}}")));
  };
  PodSetMemo memo;
  auto gpus_of = [&](size_t i) {
    Result<admission::Snapshot> s = BuildSnapshot(state, &memo);
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() && s->workloads.size() > i ? s->workloads[i].pod_sets.at(0).per_pod.at("nvidia.com/gpu") / 1000 : -1;
  };
  state.workloads = {workload("a", 1, 2), workload("b", 1, 3)};
  EXPECT_EQ(gpus_of(0), 2);
  EXPECT_EQ(memo.size(), 2u);
  // The same generation is the same spec (the apiserver bumps it on every spec change): the memo
  // answers, so a template edited behind its back is not seen...
  state.workloads[0] = workload("a", 1, 5);
  EXPECT_EQ(gpus_of(0), 2);
  // ...and a new generation is read again.
  state.workloads[0] = workload("a", 2, 5);
  EXPECT_EQ(gpus_of(0), 5);
  // A workload no longer in the state is forgotten.
  state.workloads.pop_back();
  EXPECT_EQ(gpus_of(0), 5);
  EXPECT_EQ(memo.size(), 1u);
}

TEST(BuildSnapshotTest, KeepGoingLeavesAnUnreadableWorkloadPendingWithTheError) {
  ClusterState state;
  state.cluster_queues.push_back(*DecodeObject<ClusterQueue>(
      Json::parse(R"({"metadata": {"name": "team"}, "spec": {"namespaceSelector": {}}})")));
  state.local_queues.push_back(*DecodeObject<LocalQueue>(
      Json::parse(R"({"metadata": {"name": "gpu", "namespace": "ml"}, "spec": {"clusterQueue": "team"}})")));
  auto workload = [](const std::string& name, const std::string& gpus) {
    return std::make_shared<const Workload>(*DecodeObject<Workload>(Json::parse(
        R"({"metadata": {"name": ")" + name + R"(", "namespace": "ml", "uid": "uid-)" + name +
        R"(", "generation": 1}, "spec": {"queueName": "gpu",
            "podSets": [{"count": 1, "template": {"spec": {"containers": [{"name": "c",
            "resources": {"requests": {"nvidia.com/gpu": ")" + gpus + R"("}}}]}}}]}})")));
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

  // With a memo, a failure is not remembered as an empty pod set: every build reports it.
  PodSetMemo memo;
  for (int build = 0; build < 2; ++build) {
    Result<admission::Snapshot> m = BuildSnapshot(state, &memo);
    ASSERT_TRUE(m.ok()) << m.status().message();
    EXPECT_EQ(m->workloads[0].inadmissible_reason, "Inadmissible") << "build " << build;
  }
}

}  // namespace
}  // namespace rota::api
