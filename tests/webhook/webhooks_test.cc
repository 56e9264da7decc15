#include "webhooks.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>

#include "admission_review.h"

namespace rota::webhook {
namespace {

class FakeView : public ClusterView {
 public:
  std::set<std::string> local_queues;  // "ns/name"
  std::set<std::string> priority_classes;
  std::map<std::string, std::string> cohorts;  // name -> parent

  bool LocalQueueExists(const std::string& ns, const std::string& name) const override {
    return local_queues.count(ns + "/" + name) > 0;
  }
  bool PriorityClassExists(const std::string& name) const override { return priority_classes.count(name) > 0; }
  std::optional<std::string> CohortParent(const std::string& name) const override {
    auto it = cohorts.find(name);
    if (it == cohorts.end()) return std::nullopt;
    return it->second;
  }
};

Json Review(const std::string& op, const Json& object, const Json& old_object = nullptr, const std::string& ns = "ml") {
  Json req = {{"uid", "u-1"},
              {"kind", {{"group", "batch"}, {"version", "v1"}, {"kind", "Job"}}},
              {"resource", {{"group", "batch"}, {"version", "v1"}, {"resource", "jobs"}}},
              {"namespace", ns},
              {"operation", op},
              {"userInfo", {{"username", "alice"}}},
              {"object", object}};
  if (!old_object.is_null()) req["oldObject"] = old_object;
  return {{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"request", req}};
}

AdmissionRequest Parse(const Json& review) {
  auto r = ParseAdmissionReview(review.dump());
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : AdmissionRequest{};
}

Json Job(const std::string& name, const Json& labels, bool suspend) {
  return {
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata", {{"name", name}, {"namespace", "ml"}, {"labels", labels}}},
      {"spec", {{"suspend", suspend}, {"parallelism", 4}, {"template", {{"spec", {{"containers", Json::array()}}}}}}}};
}

TEST(AdmissionReviewTest, RefusesWhatIsNotAV1ReviewSayingWhy) {
  struct Case {
    std::string body;
    std::string message;
  };
  for (
      const Case& c : std::vector<Case>{
          {"", "the request body is empty; expected an AdmissionReview"},
          {"{not json", "the request body is not JSON; expected an AdmissionReview"},
          {"[1,2]", "the AdmissionReview must be a JSON object"},
          {R"({"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview"})",
           "apiVersion is \"admission.k8s.io/v1beta1\"; rota serves admission.k8s.io/v1 (set admissionReviewVersions: "
           "[v1])"},
          {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"})",
           "AdmissionReview.request: missing or not an object"},
          {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"operation":"CREATE"}})",
           "AdmissionReview.request.uid: is required"},
          {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":7}})",
           "AdmissionReview.request.uid: must be a string"},
          {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"a","operation":"CREATE","kind":{"kind":"Job"}}})",
           "AdmissionReview.request.object: is required for CREATE"},
          {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"a","operation":"UPDATE","kind":{"kind":"Job"},"object":{}}})",
           "AdmissionReview.request.oldObject: is required for UPDATE"},
          {std::string(100000, '[') + std::string(100000, ']'), "the AdmissionReview is nested deeper than 128 levels"},
      }) {
    auto r = ParseAdmissionReview(c.body);
    ASSERT_FALSE(r.ok()) << c.body.substr(0, 80);
    EXPECT_EQ(r.status().message(), c.message);
  }
}

TEST(AdmissionReviewTest, EncodesAPatchAsBase64JsonPatchAndADenialAsAStatus) {
  AdmissionResponse patch;
  patch.patch = Json::array({{{"op", "add"}, {"path", "/spec/suspend"}, {"value", true}}});
  Json out = Json::parse(EncodeAdmissionReview("u-1", patch));
  EXPECT_EQ(out["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(out["response"]["uid"], "u-1");
  EXPECT_EQ(out["response"]["allowed"], true);
  EXPECT_EQ(out["response"]["patchType"], "JSONPatch");
  // base64 of [{"op":"add","path":"/spec/suspend","value":true}]
  EXPECT_EQ(out["response"]["patch"], "W3sib3AiOiJhZGQiLCJwYXRoIjoiL3NwZWMvc3VzcGVuZCIsInZhbHVlIjp0cnVlfV0=");

  Json denied = Json::parse(EncodeAdmissionReview("u-2", AdmissionResponse::Deny("Job \"x\" is invalid: no")));
  EXPECT_EQ(denied["response"]["allowed"], false);
  EXPECT_EQ(denied["response"]["status"]["code"], 422);
  EXPECT_EQ(denied["response"]["status"]["reason"], "Invalid");
  EXPECT_EQ(denied["response"]["status"]["message"], "Job \"x\" is invalid: no");
  EXPECT_FALSE(denied["response"].contains("patch"));
}

TEST(MutateJobTest, SuspendsAQueuedJobAndLeavesOthersAlone) {
  FakeView view;
  AdmissionResponse r =
      MutateJob(Parse(Review("CREATE", Job("train", {{"kueue.x-k8s.io/queue-name", "gpu"}}, false))), view);
  ASSERT_TRUE(r.allowed);
  EXPECT_EQ(r.patch, Json::parse(R"([{"op":"add","path":"/spec/suspend","value":true}])"));

  // No queue label and no "default" LocalQueue: not rota's Job.
  EXPECT_TRUE(MutateJob(Parse(Review("CREATE", Job("plain", Json::object(), false))), view).patch.is_null());
  // Already suspended: nothing to change.
  EXPECT_TRUE(
      MutateJob(Parse(Review("CREATE", Job("s", {{"kueue.x-k8s.io/queue-name", "gpu"}}, true))), view).patch.is_null());
  // A "default" LocalQueue in the namespace queues unlabelled Jobs.
  view.local_queues.insert("ml/default");
  EXPECT_FALSE(MutateJob(Parse(Review("CREATE", Job("plain", Json::object(), false))), view).patch.is_null());
  // Updates are never mutated (rota itself unsuspends admitted Jobs).
  Json job = Job("train", {{"kueue.x-k8s.io/queue-name", "gpu"}}, false);
  EXPECT_TRUE(MutateJob(Parse(Review("UPDATE", job, job)), view).patch.is_null());
  // A Job another controller owns is that controller's.
  Json child = Job("child", {{"kueue.x-k8s.io/queue-name", "gpu"}}, false);
  child["metadata"]["ownerReferences"] = Json::array({{{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
                                                       {"kind", "JobSet"},
                                                       {"name", "js"},
                                                       {"uid", "1"},
                                                       {"controller", true}}});
  EXPECT_TRUE(MutateJob(Parse(Review("CREATE", child)), view).patch.is_null());
}

TEST(ValidateJobTest, QueueLabelIsFrozenWhileTheJobRuns) {
  FakeView view;
  Json running = Job("train", {{"kueue.x-k8s.io/queue-name", "gpu"}}, false);
  Json moved = Job("train", {{"kueue.x-k8s.io/queue-name", "cpu"}}, false);
  AdmissionResponse r = ValidateJob(Parse(Review("UPDATE", moved, running)), view);
  ASSERT_FALSE(r.allowed);
  EXPECT_EQ(r.message,
            "Job \"train\" in namespace \"ml\" is invalid: metadata.labels[kueue.x-k8s.io/queue-name]: cannot change "
            "from \"gpu\" to "
            "\"cpu\" while the Job is admitted (running); suspend it first (spec.suspend: true) or create a new Job");
  // While suspended (queued, not admitted) it may move.
  Json queued = Job("train", {{"kueue.x-k8s.io/queue-name", "gpu"}}, true);
  EXPECT_TRUE(
      ValidateJob(Parse(Review("UPDATE", Job("train", {{"kueue.x-k8s.io/queue-name", "cpu"}}, true), queued)), view)
          .allowed);
  // Removing the label from a running Job is a change too.
  EXPECT_FALSE(ValidateJob(Parse(Review("UPDATE", Job("train", Json::object(), false), running)), view).allowed);
}

TEST(ValidateJobTest, PriorityClassMustExistAndQueueNameMustBeAName) {
  FakeView view;
  view.priority_classes.insert("training");
  EXPECT_TRUE(
      ValidateJob(Parse(Review("CREATE", Job("a", {{"kueue.x-k8s.io/priority-class", "training"}}, true))), view)
          .allowed);
  AdmissionResponse r =
      ValidateJob(Parse(Review("CREATE", Job("a", {{"kueue.x-k8s.io/priority-class", "urgent"}}, true))), view);
  ASSERT_FALSE(r.allowed);
  EXPECT_NE(
      r.message.find("metadata.labels[kueue.x-k8s.io/priority-class]: WorkloadPriorityClass \"urgent\" does not exist"),
      std::string::npos)
      << r.message;
  r = ValidateJob(Parse(Review("CREATE", Job("a", {{"kueue.x-k8s.io/queue-name", "GPU_Queue"}}, true))), view);
  ASSERT_FALSE(r.allowed);
  EXPECT_NE(r.message.find("\"GPU_Queue\" is not a valid LocalQueue name"), std::string::npos) << r.message;
  Json partial = Job("p", {{"kueue.x-k8s.io/queue-name", "gpu"}}, true);
  partial["metadata"]["annotations"] = {{"kueue.x-k8s.io/job-min-parallelism", "4"}};
  r = ValidateJob(Parse(Review("CREATE", partial)), view);
  ASSERT_FALSE(r.allowed);
  EXPECT_NE(r.message.find("must be a whole number greater than 0 and less than spec.parallelism (4)"),
            std::string::npos)
      << r.message;
  // Partial admission: rota lowers parallelism to the admitted count (here the minimum); allowed.
  partial["metadata"]["annotations"]["kueue.x-k8s.io/job-min-parallelism"] = "2";
  Json admitted = partial;
  admitted["spec"]["parallelism"] = 2;
  admitted["spec"]["suspend"] = false;
  EXPECT_TRUE(ValidateJob(Parse(Review("UPDATE", admitted, partial)), view).allowed);
}

TEST(ValidateJobTest, CheckpointAnnotationsAreCheckedNamingTheAnnotation) {
  FakeView view;
  Json job = Job("train", {{"kueue.x-k8s.io/queue-name", "gpu"}}, true);
  job["metadata"]["annotations"] = {{"rota.dev/checkpoint", "true"},
                                    {"rota.dev/checkpoint-timeout", "10m"},
                                    {"rota.dev/checkpointed-at", "2026-11-26T12:00:00Z"}};
  EXPECT_TRUE(ValidateJob(Parse(Review("CREATE", job)), view).allowed);
  job["metadata"]["annotations"]["rota.dev/checkpoint-timeout"] = "ten minutes";
  AdmissionResponse r = ValidateJob(Parse(Review("CREATE", job)), view);
  ASSERT_FALSE(r.allowed);
  EXPECT_NE(r.message.find("Job \"train\" in namespace \"ml\""), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("metadata.annotations[rota.dev/checkpoint-timeout]: \"ten minutes\" is not a duration "
                           "such as 90s, 10m or 1h30m"),
            std::string::npos)
      << r.message;
  job["metadata"]["annotations"]["rota.dev/checkpoint-timeout"] = "500ms";
  r = ValidateJob(Parse(Review("CREATE", job)), view);
  EXPECT_NE(r.message.find("\"500ms\" must be at least 1s"), std::string::npos) << r.message;
  job["metadata"]["annotations"]["rota.dev/checkpoint-timeout"] = "10m";
  job["metadata"]["annotations"]["rota.dev/checkpoint"] = "yes";
  r = ValidateJob(Parse(Review("CREATE", job)), view);
  EXPECT_NE(r.message.find("metadata.annotations[rota.dev/checkpoint]: \"yes\" must be \"true\" or \"false\""),
            std::string::npos)
      << r.message;
  job["metadata"]["annotations"]["rota.dev/checkpoint"] = "true";
  job["metadata"]["annotations"]["rota.dev/checkpointed-at"] = "noon";
  r = ValidateJob(Parse(Review("UPDATE", job, job)), view);
  EXPECT_NE(r.message.find("metadata.annotations[rota.dev/checkpointed-at]: \"noon\" is not an RFC 3339 time"),
            std::string::npos)
      << r.message;
}

Json Workload(int count, const Json& min_count, const Json& resources) {
  Json ps = {{"name", "main"},
             {"count", count},
             {"template", {{"spec", {{"containers", Json::array({{{"name", "c"}, {"resources", resources}}})}}}}}};
  if (!min_count.is_null()) ps["minCount"] = min_count;
  return {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
          {"kind", "Workload"},
          {"metadata", {{"name", "w"}, {"namespace", "ml"}}},
          {"spec", {{"queueName", "gpu"}, {"podSets", Json::array({ps})}}}};
}

TEST(ValidateWorkloadTest, CountsRequestsAndTotals) {
  FakeView view;
  const Json gpu = {{"requests", {{"nvidia.com/gpu", "1"}}}, {"limits", {{"nvidia.com/gpu", "1"}}}};
  EXPECT_TRUE(ValidateWorkload(Parse(Review("CREATE", Workload(4, 2, gpu))), view).allowed);
  AdmissionResponse r = ValidateWorkload(Parse(Review("CREATE", Workload(0, nullptr, gpu))), view);
  ASSERT_FALSE(r.allowed);
  EXPECT_EQ(r.message, "Workload \"w\" in namespace \"ml\" is invalid: spec.podSets[0].count: 0 must be at least 1");
  r = ValidateWorkload(Parse(Review("CREATE", Workload(2, 3, gpu))), view);
  ASSERT_FALSE(r.allowed);
  EXPECT_NE(r.message.find("spec.podSets[0].minCount: 3 must be at least 1 and at most count (2)"), std::string::npos)
      << r.message;
  r = ValidateWorkload(
      Parse(Review("CREATE", Workload(1, nullptr, {{"requests", {{"cpu", "4"}}}, {"limits", {{"cpu", "2"}}}}))), view);
  ASSERT_FALSE(r.allowed);
  EXPECT_NE(r.message.find("spec.podSets[0].template.spec.containers[0].resources.requests[cpu]: 4 must be less than "
                           "or equal to the limit 2"),
            std::string::npos)
      << r.message;
  r = ValidateWorkload(Parse(Review("CREATE", Workload(100, nullptr, {{"requests", {{"memory", "1Pi"}}}}))), view);
  ASSERT_FALSE(r.allowed);
  EXPECT_NE(r.message.find("the total request of memory"), std::string::npos) << r.message;
}

TEST(ValidateWorkloadTest, NegativeRequestsAndCountsAreRefused) {
  FakeView view;
  AdmissionResponse r =
      ValidateWorkload(Parse(Review("CREATE", Workload(1, nullptr, {{"requests", {{"nvidia.com/gpu", "-1"}}}}))), view);
  ASSERT_FALSE(r.allowed);
  EXPECT_NE(r.message.find("spec.podSets[0].template.spec.containers[0].resources.requests[nvidia.com/gpu]: -1 must be "
                           "greater than or equal to 0"),
            std::string::npos)
      << r.message;
  r = ValidateWorkload(Parse(Review("CREATE", Workload(-3, nullptr, {}))), view);
  ASSERT_FALSE(r.allowed);
  EXPECT_NE(r.message.find("spec.podSets[0].count: -3 must be at least 1"), std::string::npos) << r.message;
}

TEST(ValidateWorkloadTest, SpecIsFrozenWhileHoldingQuota) {
  FakeView view;
  const Json gpu = {{"requests", {{"nvidia.com/gpu", "1"}}}};
  Json old_wl = Workload(2, nullptr, gpu);
  old_wl["status"] = {{"admission", {{"clusterQueue", "team"}, {"podSetAssignments", Json::array()}}}};
  Json bigger = Workload(3, nullptr, gpu);
  bigger["status"] = old_wl["status"];
  AdmissionResponse r = ValidateWorkload(Parse(Review("UPDATE", bigger, old_wl)), view);
  ASSERT_FALSE(r.allowed);
  EXPECT_NE(r.message.find("spec.podSets: cannot change while the workload holds quota"), std::string::npos)
      << r.message;
  Json requeued = bigger;
  requeued["spec"]["queueName"] = "other";
  r = ValidateWorkload(Parse(Review("UPDATE", requeued, old_wl)), view);
  EXPECT_NE(r.message.find("spec.queueName: cannot change while the workload holds quota"), std::string::npos)
      << r.message;
  // Pending: free to change.
  EXPECT_TRUE(
      ValidateWorkload(Parse(Review("UPDATE", Workload(3, nullptr, gpu), Workload(2, nullptr, gpu))), view).allowed);
}

Json Cohort(const std::string& name, const std::string& parent) {
  Json c = {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
            {"kind", "Cohort"},
            {"metadata", {{"name", name}}},
            {"spec", Json::object()}};
  if (!parent.empty()) c["spec"]["parentName"] = parent;
  return c;
}

TEST(ValidateCohortTest, RejectsACycleSpellingItOut) {
  FakeView view;
  view.cohorts = {{"org", ""}, {"research", "org"}, {"vision", "research"}};
  EXPECT_TRUE(ValidateCohort(Parse(Review("CREATE", Cohort("nlp", "research"), nullptr, "")), view).allowed);
  AdmissionResponse r = ValidateCohort(Parse(Review("UPDATE", Cohort("org", "vision"), Cohort("org", ""), "")), view);
  ASSERT_FALSE(r.allowed);
  EXPECT_EQ(r.message,
            "Cohort \"org\" is invalid: spec.parentName: \"vision\" would make a cycle of cohorts (org -> vision -> "
            "research -> "
            "org); cohorts must form a tree, so pick a parent that is not below \"org\"");
  // A parent that does not exist yet is an implicit cohort: fine.
  EXPECT_TRUE(ValidateCohort(Parse(Review("CREATE", Cohort("new", "not-yet"), nullptr, "")), view).allowed);
  // An existing cycle above (not through this cohort) does not hang the check.
  view.cohorts = {{"x", "y"}, {"y", "x"}};
  EXPECT_TRUE(ValidateCohort(Parse(Review("CREATE", Cohort("z", "x"), nullptr, "")), view).allowed);
}

TEST(ValidateLocalQueueTest, ClusterQueueIsImmutable) {
  FakeView view;
  Json lq = {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
             {"kind", "LocalQueue"},
             {"metadata", {{"name", "gpu"}, {"namespace", "ml"}}},
             {"spec", {{"clusterQueue", "team-a"}}}};
  Json moved = lq;
  moved["spec"]["clusterQueue"] = "team-b";
  AdmissionResponse r = ValidateLocalQueue(Parse(Review("UPDATE", moved, lq)), view);
  ASSERT_FALSE(r.allowed);
  EXPECT_EQ(r.message,
            "LocalQueue \"gpu\" in namespace \"ml\" is invalid: spec.clusterQueue: cannot change from \"team-a\" to "
            "\"team-b\"; the "
            "field is immutable: delete and recreate the LocalQueue, or create a new one");
  EXPECT_TRUE(ValidateLocalQueue(Parse(Review("UPDATE", lq, lq)), view).allowed);
}

TEST(ValidateResourceFlavorTest, LabelAndTaintSyntax) {
  FakeView view;
  Json rf = {
      {"apiVersion", "kueue.x-k8s.io/v1beta2"},
      {"kind", "ResourceFlavor"},
      {"metadata", {{"name", "a100"}}},
      {"spec",
       {{"nodeLabels", {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}}},
        {"nodeTaints", Json::array({{{"key", "nvidia.com/gpu"}, {"value", "present"}, {"effect", "NoSchedule"}}})},
        {"tolerations",
         Json::array({{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}})}}}};
  EXPECT_TRUE(ValidateResourceFlavor(Parse(Review("CREATE", rf, nullptr, "")), view).allowed);
  Json bad = rf;
  bad["spec"]["nodeLabels"] = {{"gpu type", "a100"}, {"zone", "us east"}};
  bad["spec"]["nodeTaints"][0]["effect"] = "NoRun";
  bad["spec"]["tolerations"][0]["value"] = "x";
  AdmissionResponse r = ValidateResourceFlavor(Parse(Review("CREATE", bad, nullptr, "")), view);
  ASSERT_FALSE(r.allowed);
  for (const char* part : {"spec.nodeLabels[gpu type]: the key is not a valid label key",
                           "spec.nodeLabels[zone]: \"us east\" is not a valid label value",
                           "spec.nodeTaints[0].effect: \"NoRun\" must be NoSchedule, PreferNoSchedule or NoExecute",
                           "spec.tolerations[0].value: must be empty when operator is Exists"}) {
    EXPECT_NE(r.message.find(part), std::string::npos) << part << "\nin: " << r.message;
  }
  EXPECT_EQ(r.message.rfind("ResourceFlavor \"a100\" is invalid: ", 0), 0u) << r.message;
}

Json Budget() {
  return {{"apiVersion", "rota.dev/v1alpha1"},
          {"kind", "Budget"},
          {"metadata", {{"name", "team-llm-monthly"}}},
          {"spec",
           {{"clusterQueue", "team-llm"},
            {"window", {{"calendar", "Monthly"}, {"timeZone", "UTC"}}},
            {"limits", Json::array({{{"resource", "nvidia.com/gpu"}, {"hours", 5000}}})},
            {"weights", {{"nvidia.com/mig-1g.10gb", "0.143"}, {"nvidia.com/gpu.shared", "0.25"}}},
            {"whenExhausted", "Hold"},
            {"warnAt", 80}}}};
}

AdmissionResponse CheckBudget(const Json& budget, const std::string& op = "CREATE") {
  FakeView view;
  return ValidateBudget(Parse(Review(op, budget, op == "UPDATE" ? Budget() : Json(nullptr), "")), view);
}

TEST(ValidateBudgetTest, AllowsACalendarOrRollingBudgetOfOneScope) {
  EXPECT_TRUE(CheckBudget(Budget()).allowed) << CheckBudget(Budget()).message;
  Json rolling = Budget();
  rolling["spec"].erase("clusterQueue");
  rolling["spec"]["cohort"] = "ml-platform";
  rolling["spec"]["window"] = {{"rolling", "168h"}};
  rolling["spec"]["limits"].push_back({{"resource", "cpu"}, {"hours", "1.5k"}});
  const AdmissionResponse r = CheckBudget(rolling, "UPDATE");
  EXPECT_TRUE(r.allowed) << r.message;
}

TEST(ValidateBudgetTest, DeniesNamingTheBudgetAndTheField) {
  struct Case {
    std::function<void(Json&)> edit;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](Json& b) { b["spec"]["cohort"] = "ml-platform"; }, "spec: name exactly one of clusterQueue and cohort"},
      {[](Json& b) { b["spec"].erase("window"); }, "spec.window: is required"},
      {[](Json& b) { b["spec"]["window"] = Json::object(); }, "spec.window: give exactly one of calendar and rolling"},
      {[](Json& b) {
         b["spec"]["window"] = {{"rolling", "30s"}};
       },
       "spec.window.rolling: \"30s\" is shorter than 1m"},
      {[](Json& b) { b["spec"]["window"]["timeZone"] = "Mars/Olympus_Mons"; },
       "spec.window.timeZone: unknown time zone \"Mars/Olympus_Mons\""},
      {[](Json& b) { b["spec"]["limits"][0]["hours"] = 0; }, "spec.limits[0].hours: must be more than 0"},
      {[](Json& b) { b["spec"]["limits"][0]["hours"] = "abc"; }, "spec.limits[0].hours: "},
      {[](Json& b) {
         b["spec"]["limits"].push_back({{"resource", "nvidia.com/gpu"}, {"hours", 1}});
       },
       "spec.limits[1].resource: \"nvidia.com/gpu\" is listed twice"},
      {[](Json& b) { b["spec"]["weights"]["nvidia.com/gpu"] = "2"; },
       "spec.weights[\"nvidia.com/gpu\"]: nvidia.com/gpu counts 1 by definition"},
      {[](Json& b) { b["spec"]["warnAt"] = 101; }, "spec.warnAt: 101 is not a percentage from 1 to 100"},
      {[](Json& b) { b["apiVersion"] = "rota.dev/v1"; },
       "apiVersion: \"rota.dev/v1\" is not served; use rota.dev/v1alpha1"},
  };
  for (const Case& c : cases) {
    Json b = Budget();
    c.edit(b);
    const AdmissionResponse r = CheckBudget(b);
    ASSERT_FALSE(r.allowed) << c.message;
    EXPECT_EQ(r.message.rfind("Budget \"team-llm-monthly\" is invalid: " + c.message, 0), 0u) << r.message;
  }
}

TEST(ValidateBudgetTest, LeavesDeletesAlone) {
  FakeView view;
  Json review = Review("DELETE", nullptr, Budget(), "");
  review["request"].erase("object");
  EXPECT_TRUE(ValidateBudget(Parse(review), view).allowed);
}

TEST(NameSyntaxTest, FollowsKubernetesRules) {
  EXPECT_EQ(CheckDns1123Subdomain("team-a.gpu"), "");
  EXPECT_NE(CheckDns1123Subdomain("Team"), "");
  EXPECT_NE(CheckDns1123Subdomain("a..b"), "");
  EXPECT_NE(CheckDns1123Subdomain("-a"), "");
  EXPECT_EQ(CheckQualifiedName("nvidia.com/gpu.product"), "");
  EXPECT_EQ(CheckQualifiedName("Zone_1"), "");
  EXPECT_NE(CheckQualifiedName("a/b/c"), "");
  EXPECT_NE(CheckQualifiedName("UPPER.com/x"), "");
  EXPECT_NE(CheckQualifiedName(std::string(64, 'a')), "");
  EXPECT_EQ(CheckLabelValue(""), "");
  EXPECT_NE(CheckLabelValue("ends-"), "");
}

}  // namespace
}  // namespace rota::webhook

namespace rota::webhook {
namespace {

// Objects with fields of the wrong type (a review the apiserver would not send, but anyone can
// POST): every rule answers, none throws.
TEST(WebhookRobustnessTest, WrongTypesAreAnsweredNotThrown) {
  FakeView view;
  const Json odd = Json::parse(R"({"metadata":{"name":5,"generateName":[],"labels":{"kueue.x-k8s.io/queue-name":7},
    "annotations":{"kueue.x-k8s.io/job-min-parallelism":{"a":1}},"ownerReferences":[{"controller":"yes"},3]},
    "spec":{"suspend":"no","parallelism":-3,"parentName":9,"clusterQueue":[],"podSets":[{"count":"x","minCount":9,
    "template":{"spec":{"containers":[{"resources":{"requests":{"cpu":[1]},"limits":"x"}}]}}}],
    "nodeLabels":{"k":1},"nodeTaints":[1,{"key":2}],"tolerations":"t"},
    "status":{"conditions":[{"type":1,"status":true}],"admission":{}}})");
  const Json old = Json::parse(
      R"({"metadata":{"annotations":3,"labels":[]},"spec":7,"status":{"conditions":[{"type":"QuotaReserved","status":"True"}]}})");
  for (const auto& route : Routes()) {
    for (const char* op : {"CREATE", "UPDATE"}) {
      AdmissionRequest req = Parse(Review(op, odd, std::string(op) == "UPDATE" ? old : Json(nullptr)));
      AdmissionResponse r;
      EXPECT_NO_THROW(r = route.handle(req, view)) << route.path << " " << op;
      EXPECT_NO_THROW(EncodeAdmissionReview(req.uid, r)) << route.path;
    }
  }
  // The Workload rule still reads what it can: the quantity that is not one is named.
  AdmissionResponse r = ValidateWorkload(Parse(Review("CREATE", odd)), view);
  EXPECT_FALSE(r.allowed);
  EXPECT_NE(r.message.find("requests[cpu]: [1] is not a valid quantity"), std::string::npos) << r.message;
}

}  // namespace
}  // namespace rota::webhook
