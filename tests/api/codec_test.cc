#include <gtest/gtest.h>

#include <string>

#include "rota/api/kueue.h"

namespace rota::api {
namespace {

Json Parse(const char* text) { return Json::parse(text); }

// Decodes `text` as T, encodes it again and expects the very same JSON: every field, typed or
// not, at every depth, survives.
template <ApiObject T>
void ExpectRoundTrip(const char* text) {
  Json in = Parse(text);
  Result<T> decoded = DecodeObject<T>(in);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(EncodeObject(*decoded), in) << "re-encoded:\n" << EncodeObject(*decoded).dump(2);
}

TEST(CodecRoundTripTest, ClusterQueueKeepsEveryField) {
  ExpectRoundTrip<ClusterQueue>(R"({
    "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
    "metadata": {"name": "team-llm", "uid": "u-1", "resourceVersion": "42", "generation": 3,
                 "creationTimestamp": "2026-11-01T10:00:00Z", "labels": {"team": "llm"},
                 "managedFields": [{"manager": "kubectl", "operation": "Apply"}],
                 "finalizers": ["kueue.x-k8s.io/resource-in-use"]},
    "spec": {
      "resourceGroups": [{
        "coveredResources": ["nvidia.com/gpu"],
        "flavors": [{"name": "a100-80gb", "futureFlavorField": {"x": 1},
                     "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "16",
                                    "borrowingLimit": "8", "lendingLimit": "4",
                                    "futureQuotaField": true}]}]}],
      "cohortName": "ml-platform",
      "queueingStrategy": "StrictFIFO",
      "namespaceSelector": {"matchLabels": {"team": "llm"},
                            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]},
      "flavorFungibility": {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "TryNextFlavor",
                            "preference": "PreemptionOverBorrowing"},
      "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority",
                     "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 100}},
      "stopPolicy": "Hold",
      "fairSharing": {"weight": "2"},
      "admissionChecksStrategy": {"admissionChecks": [{"name": "prov"}]}
    },
    "status": {
      "conditions": [{"type": "Active", "status": "True", "reason": "Ready", "message": "Can admit new workloads",
                      "lastTransitionTime": "2026-11-01T10:00:01Z", "observedGeneration": 3}],
      "pendingWorkloads": 5, "reservingWorkloads": 2, "admittedWorkloads": 2,
      "flavorsReservation": [{"name": "a100-80gb", "resources": [{"name": "nvidia.com/gpu", "total": "20", "borrowed": "4"}]}],
      "flavorsUsage": [{"name": "a100-80gb", "resources": [{"name": "nvidia.com/gpu", "total": "20", "borrowed": "4"}]}],
      "fairSharing": {"weightedShare": 250}
    },
    "unknownTopLevel": "kept"
  })");
}

TEST(CodecRoundTripTest, WorkloadKeepsItsPodTemplateWhole) {
  ExpectRoundTrip<Workload>(R"({
    "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
    "metadata": {"name": "job-train-abcde", "namespace": "team-llm",
                 "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": "j-1", "controller": true}]},
    "spec": {
      "podSets": [{"name": "main", "count": 4, "minCount": 2,
                   "template": {"metadata": {"labels": {"app": "train"}},
                                "spec": {"containers": [{"name": "t", "image": "img:1",
                                         "resources": {"requests": {"cpu": "16", "nvidia.com/gpu": "4"}}}],
                                         "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
                                         "someFutureSpecField": {"a": [1, 2]}}},
                   "topologyRequest": {"required": "rack"}}],
      "queueName": "gpu",
      "priorityClassRef": {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "training"},
      "priority": 500,
      "active": true,
      "maximumExecutionTimeSeconds": 86400
    },
    "status": {
      "conditions": [{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved",
                      "message": "Quota reserved in ClusterQueue team-llm", "lastTransitionTime": "2026-11-01T10:00:00Z"}],
      "admission": {"clusterQueue": "team-llm",
                    "podSetAssignments": [{"name": "main", "flavors": {"nvidia.com/gpu": "a100-80gb"},
                                           "resourceUsage": {"cpu": "64", "nvidia.com/gpu": "16"}, "count": 4}]},
      "requeueState": {"count": 1, "requeueAt": "2026-11-01T10:05:00Z"},
      "reclaimablePods": [{"name": "main", "count": 1}],
      "resourceRequests": [{"name": "main", "resources": {"cpu": "64"}}],
      "schedulingStats": {"evictions": []}
    }
  })");
}

// A Workload's status and priorityClassRef are held apart from it (Boxed): absent, they stay
// absent when written back; present, a copy of the Workload has its own to change.
TEST(CodecRoundTripTest, WorkloadWithoutStatusOrPriorityClassAndCopiesOfOneWithThem) {
  ExpectRoundTrip<Workload>(R"({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
    "metadata": {"name": "waiting", "namespace": "team-llm"},
    "spec": {"podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": []}}}], "queueName": "gpu", "active": true}})");

  Result<Workload> w = DecodeObject<Workload>(Parse(R"({"metadata": {"name": "w", "namespace": "ns"},
    "spec": {"podSets": [], "priorityClassRef": {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "high"}},
    "status": {"conditions": [{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": "m",
                               "lastTransitionTime": "2026-11-01T10:00:00Z"}]}})"));
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_TRUE(w->status.has_value());
  ASSERT_TRUE(w->spec.priority_class_ref.has_value());
  Workload copy = *w;
  copy.status->conditions.clear();
  copy.spec.priority_class_ref->name = "low";
  EXPECT_EQ(w->status->conditions.size(), 1u);
  EXPECT_EQ(w->spec.priority_class_ref->name, "high");
  copy = *w;
  EXPECT_EQ(EncodeObject(copy), EncodeObject(*w));
  copy.status.reset();
  EXPECT_FALSE(EncodeObject(copy).contains("status"));
  EXPECT_TRUE(EncodeObject(*w).contains("status"));
}

TEST(CodecRoundTripTest, EveryOtherKind) {
  ExpectRoundTrip<Cohort>(R"({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort",
    "metadata": {"name": "research"},
    "spec": {"parentName": "ml-platform", "fairSharing": {"weight": "1"},
             "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"],
                                 "flavors": [{"name": "a100-80gb", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "8"}]}]}]},
    "status": {"fairSharing": {"weightedShare": 0}}})");
  ExpectRoundTrip<LocalQueue>(R"({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
    "metadata": {"name": "gpu", "namespace": "team-llm"},
    "spec": {"clusterQueue": "team-llm", "stopPolicy": "None", "fairSharing": {"weight": "1"}},
    "status": {"pendingWorkloads": 1, "reservingWorkloads": 0, "admittedWorkloads": 0,
               "flavorsUsage": [{"name": "a100-80gb", "resources": [{"name": "nvidia.com/gpu", "total": "0", "borrowed": "0"}]}]}})");
  ExpectRoundTrip<ResourceFlavor>(R"({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
    "metadata": {"name": "a100-80gb"},
    "spec": {"nodeLabels": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"},
             "nodeTaints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
             "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
             "topologyName": "default"}})");
  ExpectRoundTrip<WorkloadPriorityClass>(R"({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass",
    "metadata": {"name": "critical-inference", "annotations": {"rota.dev/preemptible": "false"}},
    "value": 1000, "description": "Production inference"})");
}

TEST(JsonInternerTest, EqualValuesShareOneCopyWhileSomeoneHoldsIt) {
  JsonInterner interner;
  const char* tpl = R"({"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}})";
  auto workload = [&](const std::string& name) {
    return DecodeObject<Workload>(Json::parse(R"({"metadata": {"name": ")" + name +
                                              R"("}, "spec": {"podSets": [{"count": 1, "template": )" + tpl + "}]}}"));
  };
  Result<Workload> a = workload("a"), b = workload("b");
  ASSERT_TRUE(a.ok() && b.ok());
  // Decoded separately: two copies.
  EXPECT_NE(a->spec.pod_sets[0].template_.shared(), b->spec.pod_sets[0].template_.shared());
  a->spec.pod_sets[0].template_ = interner.Intern(a->spec.pod_sets[0].template_);
  b->spec.pod_sets[0].template_ = interner.Intern(b->spec.pod_sets[0].template_);
  EXPECT_EQ(a->spec.pod_sets[0].template_.shared(), b->spec.pod_sets[0].template_.shared());
  EXPECT_EQ(interner.size(), 1u);
  // A different template is its own; the shared one encodes as it came.
  SharedJson other = interner.Intern(SharedJson(Parse(R"({"spec": {}})")));
  EXPECT_NE(other.shared(), a->spec.pod_sets[0].template_.shared());
  EXPECT_EQ(interner.size(), 2u);
  EXPECT_EQ(EncodeObject(*b)["spec"]["podSets"][0]["template"], Parse(tpl));
  // Once nobody holds a value, it is not handed out again.
  other = SharedJson();
  EXPECT_EQ(interner.size(), 1u);
  EXPECT_TRUE(interner.Intern(SharedJson()).get().is_null());
}

TEST(CodecTest, AppliesTheSchemaDefaults) {
  Result<ClusterQueue> cq = DecodeObject<ClusterQueue>(Parse(R"({"metadata": {"name": "q"}, "spec": {}})"));
  ASSERT_TRUE(cq.ok()) << cq.status().message();
  EXPECT_EQ(cq->spec.queueing_strategy, QueueingStrategy::kBestEffortFIFO);
  EXPECT_EQ(cq->spec.flavor_fungibility.when_can_borrow, FungibilityPolicy::kMayStopSearch);
  EXPECT_EQ(cq->spec.flavor_fungibility.when_can_preempt, FungibilityPolicy::kTryNextFlavor);
  EXPECT_EQ(cq->spec.preemption.within_cluster_queue, PreemptionPolicy::kNever);
  EXPECT_EQ(cq->spec.stop_policy, StopPolicy::kNone);
  EXPECT_FALSE(cq->spec.namespace_selector.has_value());

  Result<Workload> wl = DecodeObject<Workload>(
      Parse(R"({"metadata": {"name": "w", "namespace": "n"}, "spec": {"podSets": [{"template": {}}]}})"));
  ASSERT_TRUE(wl.ok()) << wl.status().message();
  EXPECT_EQ(wl->spec.pod_sets[0].name, "main");
  EXPECT_EQ(wl->spec.pod_sets[0].count, 1);
  EXPECT_TRUE(wl->spec.active);
}

TEST(CodecTest, WritesQuantitiesInCanonicalForm) {
  Result<ClusterQueue> cq = DecodeObject<ClusterQueue>(Parse(R"({"metadata": {"name": "q"}, "spec": {
    "resourceGroups": [{"coveredResources": ["cpu", "memory", "nvidia.com/gpu"], "flavors": [{"name": "f", "resources": [
      {"name": "cpu", "nominalQuota": 1.5}, {"name": "memory", "nominalQuota": "1024Mi"},
      {"name": "nvidia.com/gpu", "nominalQuota": 8}]}]}]}})"));
  ASSERT_TRUE(cq.ok()) << cq.status().message();
  const Json out = EncodeObject(*cq)["spec"]["resourceGroups"][0]["flavors"][0]["resources"];
  EXPECT_EQ(out[0]["nominalQuota"], "1500m");
  EXPECT_EQ(out[1]["nominalQuota"], "1Gi");
  EXPECT_EQ(out[2]["nominalQuota"], "8");
  EXPECT_EQ(cq->spec.resource_groups[0].flavors[0].resources[2].nominal_quota.milli(), 8000);
}

TEST(CodecTest, ClearingAnOptionalFieldRemovesIt) {
  Result<ClusterQueue> cq = DecodeObject<ClusterQueue>(Parse(R"({"metadata": {"name": "q"}, "spec": {
    "cohortName": "c", "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": [{"name": "f",
      "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "4", "borrowingLimit": "2"}]}]}]}})"));
  ASSERT_TRUE(cq.ok());
  cq->spec.resource_groups[0].flavors[0].resources[0].borrowing_limit.reset();
  cq->spec.cohort_name.clear();
  Json out = EncodeObject(*cq);
  EXPECT_FALSE(out["spec"].contains("cohortName"));
  EXPECT_FALSE(out["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0].contains("borrowingLimit"));
}

struct BadInput {
  const char* kind;
  const char* json;
  const char* message;  // the whole error message
};

class CodecRejectionTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(CodecRejectionTest, NamesTheObjectAndTheField) {
  const BadInput& c = GetParam();
  Json in = Parse(c.json);
  Status s;
  std::string kind = c.kind;
  if (kind == "ClusterQueue") s = DecodeObject<ClusterQueue>(in).status();
  if (kind == "Workload") s = DecodeObject<Workload>(in).status();
  if (kind == "LocalQueue") s = DecodeObject<LocalQueue>(in).status();
  if (kind == "ResourceFlavor") s = DecodeObject<ResourceFlavor>(in).status();
  if (kind == "WorkloadPriorityClass") s = DecodeObject<WorkloadPriorityClass>(in).status();
  ASSERT_FALSE(s.ok()) << c.json;
  EXPECT_EQ(s.message(), c.message);
}

INSTANTIATE_TEST_SUITE_P(
    Messages, CodecRejectionTest,
    ::testing::Values(
        BadInput{
            "ClusterQueue",
            R"({"metadata": {"name": "team-a"}, "spec": {"resourceGroups": [{"coveredResources": ["nvidia.com/gpu"],
                     "flavors": [{"name": "a100", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "4x"}]}]}]}})",
            R"(ClusterQueue "team-a": spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: "4x" is not a valid quantity: unknown suffix "x" (use one of n u m k M G T P E, Ki Mi Gi Ti Pi Ei, or an exponent such as e3))"},
        BadInput{
            "ClusterQueue", R"({"metadata": {"name": "team-a"}, "spec": {"queueingStrategy": "FIFO"}})",
            R"(ClusterQueue "team-a": spec.queueingStrategy: unsupported value "FIFO": use one of StrictFIFO, BestEffortFIFO)"},
        BadInput{"ClusterQueue", R"({"metadata": {"name": "team-a"}, "spec": {"resourceGroups": [{"flavors": []}]}})",
                 R"(ClusterQueue "team-a": spec.resourceGroups[0].coveredResources: is required)"},
        BadInput{
            "ClusterQueue", R"({"apiVersion": "kueue.x-k8s.io/v1beta1", "metadata": {"name": "team-a"}})",
            R"(ClusterQueue "team-a": apiVersion: "kueue.x-k8s.io/v1beta1" is not served; use kueue.x-k8s.io/v1beta2)"},
        BadInput{"ClusterQueue", R"({"kind": "Cohort", "metadata": {"name": "x"}})",
                 R"(ClusterQueue "x": kind: expected ClusterQueue, got "Cohort")"},
        BadInput{"ClusterQueue", R"([1, 2])", R"(ClusterQueue "<unnamed>": must be a JSON object)"},
        BadInput{
            "Workload",
            R"({"metadata": {"name": "w", "namespace": "team-llm"}, "spec": {"podSets": [{"count": "4", "template": {}}]}})",
            R"(Workload "team-llm/w": spec.podSets[0].count: must be an integer, not a string ("4"))"},
        BadInput{
            "Workload",
            R"({"metadata": {"name": "w", "namespace": "team-llm"}, "spec": {"podSets": [{"count": 3000000000, "template": {}}]}})",
            R"(Workload "team-llm/w": spec.podSets[0].count: 3000000000 does not fit in a 32-bit integer)"},
        BadInput{"Workload", R"({"metadata": {"name": "w", "namespace": "n"}})",
                 R"(Workload "n/w": spec: is required)"},
        BadInput{
            "Workload",
            R"({"metadata": {"name": "w", "namespace": "n"}, "spec": {"podSets": [{"template": {}}],
                     "status": 1}, "status": {"admission": {"clusterQueue": "q", "podSetAssignments": [
                     {"name": "main", "resourceUsage": {"nvidia.com/gpu": "10P"}}]}}})",
            R"(Workload "n/w": status.admission.podSetAssignments[0].resourceUsage["nvidia.com/gpu"]: "10P" is too large: rota holds quantities up to 9223372036854775807m (about 9.2e15 units))"},
        BadInput{"LocalQueue", R"({"metadata": {"name": "gpu", "namespace": "a"}, "spec": {"clusterQueue": 7}})",
                 R"(LocalQueue "a/gpu": spec.clusterQueue: must be a string, not a number (7))"},
        BadInput{
            "ResourceFlavor",
            R"({"metadata": {"name": "a100"}, "spec": {"nodeTaints": [{"key": "k", "effect": "Sometimes"}]}})",
            R"(ResourceFlavor "a100": spec.nodeTaints[0].effect: unsupported value "Sometimes": use one of NoSchedule, PreferNoSchedule, NoExecute)"},
        BadInput{"ResourceFlavor", R"({"metadata": {"name": "a100"}, "spec": {"nodeLabels": {"zone": 3}}})",
                 R"(ResourceFlavor "a100": spec.nodeLabels["zone"]: must be a string, not a number (3))"},
        BadInput{"WorkloadPriorityClass", R"({"metadata": {"name": "p"}})",
                 R"(WorkloadPriorityClass "p": value: is required)"}));

TEST(MetaTest, LabelSelectorMatchesLikeKubernetes) {
  LabelSelector all;
  EXPECT_TRUE(all.Matches({}));
  LabelSelector sel;
  sel.match_labels = {{"team", "llm"}};
  sel.match_expressions = {{"tier", SelectorOperator::kNotIn, {"dev"}, Json::object()},
                           {"gpu", SelectorOperator::kExists, {}, Json::object()}};
  EXPECT_TRUE(sel.Matches({{"team", "llm"}, {"gpu", "a100"}}));
  EXPECT_FALSE(sel.Matches({{"team", "llm"}, {"gpu", "a100"}, {"tier", "dev"}}));
  EXPECT_FALSE(sel.Matches({{"team", "llm"}}));
  EXPECT_FALSE(sel.Matches({{"team", "cv"}, {"gpu", "a100"}}));
}

TEST(MetaTest, TolerationsFollowKubernetesRules) {
  Taint gpu{"nvidia.com/gpu", "present", TaintEffect::kNoSchedule, Json::object()};
  Toleration exists{"nvidia.com/gpu", TolerationOperator::kExists, "", std::nullopt, std::nullopt, Json::object()};
  Toleration equal{"nvidia.com/gpu", std::nullopt, "present", TaintEffect::kNoSchedule, std::nullopt, Json::object()};
  Toleration wrong_value{"nvidia.com/gpu", std::nullopt, "absent", std::nullopt, std::nullopt, Json::object()};
  Toleration wrong_effect{"nvidia.com/gpu", TolerationOperator::kExists, "", TaintEffect::kNoExecute, std::nullopt,
                          Json::object()};
  Toleration everything{"", TolerationOperator::kExists, "", std::nullopt, std::nullopt, Json::object()};
  EXPECT_TRUE(exists.Tolerates(gpu));
  EXPECT_TRUE(equal.Tolerates(gpu));
  EXPECT_FALSE(wrong_value.Tolerates(gpu));
  EXPECT_FALSE(wrong_effect.Tolerates(gpu));
  EXPECT_TRUE(everything.Tolerates(gpu));
}

TEST(MetaTest, CriticalTierIsNotPreemptible) {
  WorkloadPriorityClass critical;
  critical.metadata.annotations["rota.dev/preemptible"] = "false";
  WorkloadPriorityClass normal;
  EXPECT_FALSE(critical.preemptible());
  EXPECT_TRUE(normal.preemptible());
}

}  // namespace
}  // namespace rota::api
