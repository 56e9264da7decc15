// rota's CustomResourceDefinitions on the real apiserver: they install, every example applies,
// each validation rule refuses a bad object with a message that names the field, and
// `kubectl get` shows the printer columns.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "support/kube.h"

namespace rota::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

const fs::path kSourceDir = ROTA_SOURCE_DIR;

class CrdTest : public ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    if (HasFatalFailure()) return;
    // Tests run in parallel: two first applies can race to create the same CRD (AlreadyExists);
    // apply is idempotent, so try again.
    CommandResult applied;
    for (int attempt = 0; attempt < 5 && !applied.ok(); ++attempt) {
      applied = kubectl()({"apply", "-f", (kSourceDir / "crds").string()});
    }
    ASSERT_TRUE(applied.ok()) << applied.err;
    CommandResult established =
        kubectl()({"wait", "--for=condition=Established", "--timeout=60s", "-f", (kSourceDir / "crds").string()});
    ASSERT_TRUE(established.ok()) << established.err;
  }

  // A cluster-scoped name unique to this test (the namespace name is).
  std::string Unique(const std::string& base) const { return base + "-" + ns(); }

  // Applies `manifest` and expects the apiserver to refuse it with a message containing
  // every one of `fragments`.
  void ExpectRejected(const std::string& manifest, std::initializer_list<std::string> fragments) {
    CommandResult r = kubectl().Apply(manifest, ns());
    ASSERT_FALSE(r.ok()) << "accepted:\n" << manifest;
    for (const std::string& f : fragments) {
      EXPECT_NE(r.err.find(f), std::string::npos) << "missing \"" << f << "\" in:\n" << r.err;
    }
  }

  std::string ClusterQueue(const std::string& name, const std::string& spec) const {
    return "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: " + name + "\nspec:\n" + spec;
  }
};

TEST_F(CrdTest, EveryExampleApplies) {
  // In file order, so flavors and classes exist before the queues that name them. Files whose
  // objects name no namespace go to this test's one. examples/replay/ holds inputs of `rota
  // replay`, not objects for a cluster (its tests load them).
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(kSourceDir / "examples")) {
    const bool replay = entry.path().string().find("/examples/replay/") != std::string::npos;
    if (entry.path().extension() == ".yaml" && !replay) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  std::vector<std::vector<std::string>> deletes;  // what takes each file's objects away again
  for (const fs::path& file : files) {
    std::ifstream in(file);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> args{"apply", "-f", file.string()};
    std::vector<std::string> del{"delete", "--wait=false", "--ignore-not-found", "-f", file.string()};
    if (text.find("\n  namespace: ") == std::string::npos) {
      args.insert(args.end(), {"-n", ns()});
      del.insert(del.end(), {"-n", ns()});
    }
    CommandResult r = kubectl()(args);
    EXPECT_TRUE(r.ok()) << file << ": " << r.err;
    deletes.push_back(del);
  }
  CommandResult get = kubectl()({"get", "clusterqueues,localqueues,workloads", "-A"});
  ASSERT_TRUE(get.ok()) << get.err;
  for (const char* name : {"team-inference", "team-llm", "team-vision", "notebooks", "llm-finetune-70b",
                           "hparam-sweep-17", "ranking-model-serve"}) {
    EXPECT_NE(get.out.find(name), std::string::npos) << name << " missing from:\n" << get.out;
  }
  EXPECT_EQ(kubectl().JsonPath({"workloadpriorityclass", "critical-inference"},
                               "{.metadata.annotations.rota\\.dev/preemptible}"),
            "false");
  // Defaults from the schema were applied by the apiserver.
  EXPECT_EQ(kubectl().JsonPath({"clusterqueue", "team-llm"},
                               "{.spec.queueingStrategy}/{.spec.stopPolicy}/"
                               "{.spec.preemption.borrowWithinCohort.policy}"),
            "BestEffortFIFO/None/LowerPriority");
  EXPECT_EQ(kubectl().JsonPath({"workload", "llm-finetune-70b"}, "{.spec.active}", "team-llm"), "true");
  // Leave the shared cluster as it was: queues and Workloads left behind would be scheduled by
  // every controller the later tests start.
  for (auto it = deletes.rbegin(); it != deletes.rend(); ++it) kubectl()(*it);
}

TEST_F(CrdTest, ClusterQueueRulesNameTheField) {
  // One resource group of GPUs on flavor a100, up to the nominal quota's value.
  const std::string gpu_quota =
      "  resourceGroups:\n"
      "  - coveredResources: [nvidia.com/gpu]\n"
      "    flavors:\n"
      "    - name: a100\n"
      "      resources:\n"
      "      - {name: nvidia.com/gpu, nominalQuota: ";
  const std::string gpu_group = gpu_quota + "8, ";
  ExpectRejected(ClusterQueue(Unique("borrow"), gpu_group + "borrowingLimit: 2}\n"),
                 {"spec.resourceGroups", "borrowingLimit may only be set when spec.cohortName"});
  ExpectRejected(ClusterQueue(Unique("lend"), gpu_group + "lendingLimit: 2}\n"),
                 {"spec.resourceGroups", "lendingLimit may only be set when spec.cohortName"});
  ExpectRejected(ClusterQueue(Unique("negative"), gpu_group + "borrowingLimit: -1}\n  cohortName: c\n"),
                 {"spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit"});
  ExpectRejected(
      ClusterQueue(Unique("mismatch"),
                   "  resourceGroups:\n"
                   "  - coveredResources: [cpu, memory]\n"
                   "    flavors:\n"
                   "    - name: default\n"
                   "      resources:\n"
                   "      - {name: cpu, nominalQuota: 8}\n"),
      {"spec.resourceGroups[0].flavors", "every flavor must list exactly the resources in coveredResources"});
  ExpectRejected(ClusterQueue(Unique("twice"),
                              "  resourceGroups:\n"
                              "  - coveredResources: [nvidia.com/gpu]\n"
                              "    flavors: [{name: a100, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]\n"
                              "  - coveredResources: [nvidia.com/gpu]\n"
                              "    flavors: [{name: h100, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]\n"),
                 {"spec.resourceGroups",
                  "each resource may appear in the coveredResources of one "
                  "resource group only"});
  ExpectRejected(ClusterQueue(Unique("flavor-twice"),
                              "  resourceGroups:\n"
                              "  - coveredResources: [cpu]\n"
                              "    flavors: [{name: a100, resources: [{name: cpu, nominalQuota: 8}]}]\n"
                              "  - coveredResources: [nvidia.com/gpu]\n"
                              "    flavors: [{name: a100, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]\n"),
                 {"spec.resourceGroups", "each flavor may appear in one resource group only"});
  ExpectRejected(ClusterQueue(Unique("preempt"),
                              "  preemption:\n"
                              "    reclaimWithinCohort: Never\n"
                              "    borrowWithinCohort: {policy: LowerPriority}\n"),
                 {"spec.preemption.borrowWithinCohort.policy",
                  "borrowWithinCohort.policy must be Never when reclaimWithinCohort is Never"});
  ExpectRejected(ClusterQueue(Unique("fungibility"), "  flavorFungibility: {preference: PreemptionOverBorrowing}\n"),
                 {"spec.flavorFungibility.preference",
                  "preference may only be set when both whenCanBorrow and whenCanPreempt are "
                  "TryNextFlavor"});
  ExpectRejected(ClusterQueue(Unique("strategy"), "  queueingStrategy: FIFO\n"),
                 {"spec.queueingStrategy", "Unsupported value: \"FIFO\""});
  ExpectRejected(ClusterQueue(Unique("stop"), "  stopPolicy: Pause\n"),
                 {"spec.stopPolicy", "Unsupported value: \"Pause\""});
  ExpectRejected(
      ClusterQueue(Unique("quantity"), gpu_group + "}\n  cohortName: c\n" + "  fairSharing: {weight: heavy}\n"),
      {"spec.fairSharing.weight"});
  // rota holds quantities in thousandths in 64 bits: the CRD refuses what rota could not hold.
  ExpectRejected(ClusterQueue(Unique("huge"), gpu_quota + "10P}\n"),
                 {"spec.resourceGroups[0].flavors[0].resources[0].nominalQuota", "must be at most 9P"});
  ExpectRejected(ClusterQueue(Unique("huge-int"), gpu_quota + "10000000000000000}\n"),
                 {"spec.resourceGroups[0].flavors[0].resources[0].nominalQuota", "must be at most 9P"});
  CommandResult largest = kubectl().Apply(ClusterQueue(Unique("largest"), gpu_quota + "9P}\n"), ns());
  EXPECT_TRUE(largest.ok()) << largest.err;
  kubectl()({"delete", "clusterqueue", Unique("largest"), "--ignore-not-found"});
}

TEST_F(CrdTest, CohortCannotBeItsOwnParent) {
  const std::string name = Unique("loop");
  ExpectRejected("apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata:\n  name: " + name +
                     "\nspec:\n  parentName: " + name + "\n",
                 {"spec.parentName", "a Cohort cannot be its own parent"});
}

TEST_F(CrdTest, ResourceFlavorAndPriorityClassRules) {
  ExpectRejected("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: " + Unique("tol") +
                     "\nspec:\n  tolerations:\n  - {operator: Equal, value: x}\n",
                 {"spec.tolerations", "a toleration without a key must use operator Exists"});
  ExpectRejected("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: " + Unique("taint") +
                     "\nspec:\n  nodeTaints:\n  - {key: k, effect: Sometimes}\n",
                 {"spec.nodeTaints[0].effect", "Unsupported value: \"Sometimes\""});
  ExpectRejected("apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata:\n  name: " +
                     Unique("novalue") + "\ndescription: x\n",
                 {"value: Required value"});
}

std::string WorkloadManifest(const std::string& name, const std::string& pod_set_extra,
                             const std::string& spec_extra = "") {
  return "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata:\n  name: " + name +
         "\nspec:\n  queueName: gpu\n" + spec_extra + "  podSets:\n  - name: main\n" + pod_set_extra +
         "    template:\n      spec:\n        containers:\n        - name: c\n          image: i\n";
}

TEST_F(CrdTest, WorkloadRules) {
  ExpectRejected(WorkloadManifest("too-few", "    count: 2\n    minCount: 3\n"),
                 {"spec.podSets[0].minCount", "minCount must not exceed count"});
  ExpectRejected(WorkloadManifest("no-priority", "    count: 1\n",
                                  "  priorityClassRef: {group: kueue.x-k8s.io, kind: "
                                  "WorkloadPriorityClass, name: training}\n"),
                 {"spec.priority", "priority must be set when priorityClassRef is set"});
  ExpectRejected(WorkloadManifest("bad-ref", "    count: 1\n",
                                  "  priority: 1\n  priorityClassRef: {group: scheduling.k8s.io, "
                                  "kind: WorkloadPriorityClass, name: x}\n"),
                 {"spec.priorityClassRef", "group scheduling.k8s.io goes with kind PriorityClass"});
  ExpectRejected(WorkloadManifest("negative", "    count: -1\n"),
                 {"spec.podSets[0].count", "should be greater than or equal to 0"});
}

TEST_F(CrdTest, WorkloadHoldingQuotaKeepsItsPodSetsAndQueue) {
  ASSERT_TRUE(kubectl().Apply(WorkloadManifest("held", "    count: 4\n"), ns()).ok());
  // Changes are fine while the workload holds no quota.
  ASSERT_TRUE(kubectl().Apply(WorkloadManifest("held", "    count: 2\n"), ns()).ok());

  CommandResult admitted =
      kubectl()({"patch", "workload", "held", "-n", ns(), "--subresource=status", "--type=merge", "-p",
                 R"({"status":{"admission":{"clusterQueue":"team-a","podSetAssignments":[{"name":"main",)"
                 R"("flavors":{"nvidia.com/gpu":"a100"},"resourceUsage":{"nvidia.com/gpu":"2"},"count":2}]}}})"});
  ASSERT_TRUE(admitted.ok()) << admitted.err;

  ExpectRejected(WorkloadManifest("held", "    count: 8\n"),
                 {"spec.podSets", "podSets cannot change while the workload holds quota"});
  CommandResult requeue =
      kubectl()({"patch", "workload", "held", "-n", ns(), "--type=merge", "-p", R"({"spec":{"queueName":"other"}})"});
  EXPECT_FALSE(requeue.ok());
  EXPECT_NE(requeue.err.find("queueName cannot change while the workload holds quota"), std::string::npos)
      << requeue.err;
  // The admission itself cannot be rewritten, only cleared.
  CommandResult rewrite = kubectl()({"patch", "workload", "held", "-n", ns(), "--subresource=status", "--type=merge",
                                     "-p", R"({"status":{"admission":{"clusterQueue":"team-b"}}})"});
  EXPECT_FALSE(rewrite.ok());
  EXPECT_NE(rewrite.err.find("admission cannot be changed once set"), std::string::npos) << rewrite.err;
  CommandResult cleared = kubectl()({"patch", "workload", "held", "-n", ns(), "--subresource=status", "--type=merge",
                                     "-p", R"({"status":{"admission":null}})"});
  EXPECT_TRUE(cleared.ok()) << cleared.err;
  EXPECT_TRUE(kubectl().Apply(WorkloadManifest("held", "    count: 8\n"), ns()).ok());
}

TEST_F(CrdTest, LocalQueueClusterQueueIsImmutable) {
  auto lq = [](const std::string& cq) {
    return "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: gpu\n"
           "spec:\n  clusterQueue: " +
           cq + "\n";
  };
  ASSERT_TRUE(kubectl().Apply(lq("team-a"), ns()).ok());
  ExpectRejected(lq("team-b"), {"spec.clusterQueue", "clusterQueue is immutable"});
}

TEST_F(CrdTest, PrinterColumnsShowQueueState) {
  const std::string cq = Unique("columns");
  ASSERT_TRUE(kubectl().Apply(ClusterQueue(cq, "  cohortName: ml\n  queueingStrategy: StrictFIFO\n")).ok());
  ASSERT_TRUE(kubectl()({"patch", "clusterqueue", cq, "--subresource=status", "--type=merge", "-p",
                         R"({"status":{"pendingWorkloads":3,"admittedWorkloads":2}})"})
                  .ok());
  CommandResult get = kubectl()({"get", "clusterqueue", cq});
  ASSERT_TRUE(get.ok()) << get.err;
  EXPECT_NE(get.out.find("COHORT"), std::string::npos) << get.out;
  EXPECT_NE(get.out.find("STRATEGY"), std::string::npos) << get.out;
  EXPECT_NE(get.out.find("PENDING"), std::string::npos) << get.out;
  EXPECT_NE(get.out.find("ADMITTED"), std::string::npos) << get.out;
  EXPECT_NE(get.out.find(cq + "   ml       StrictFIFO   3         2"), std::string::npos) << get.out;

  ASSERT_TRUE(kubectl()
                  .Apply("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n"
                         "  name: gpu\nspec:\n  clusterQueue: " +
                             cq + "\n",
                         ns())
                  .ok());
  ASSERT_TRUE(kubectl()({"patch", "localqueue", "gpu", "-n", ns(), "--subresource=status", "--type=merge", "-p",
                         R"({"status":{"pendingWorkloads":1,"admittedWorkloads":4}})"})
                  .ok());
  CommandResult lq = kubectl()({"get", "localqueues", "-n", ns()});
  ASSERT_TRUE(lq.ok()) << lq.err;
  EXPECT_NE(lq.out.find("CLUSTERQUEUE"), std::string::npos) << lq.out;
  EXPECT_NE(lq.out.find("gpu    " + cq + "   1         4"), std::string::npos) << lq.out;

  ASSERT_TRUE(kubectl().Apply(WorkloadManifest("shown", "    count: 1\n"), ns()).ok());
  ASSERT_TRUE(kubectl()({"patch", "workload", "shown", "-n", ns(), "--subresource=status", "--type=merge", "-p",
                         R"({"status":{"admission":{"clusterQueue":")" + cq +
                             R"(","podSetAssignments":[{"name":"main","count":1}]},)"
                             R"("conditions":[{"type":"Admitted","status":"True","reason":"Admitted",)"
                             R"("message":"The workload is admitted","lastTransitionTime":"2026-11-01T00:00:00Z"}]}})"})
                  .ok());
  CommandResult wl = kubectl()({"get", "workloads", "-n", ns()});
  ASSERT_TRUE(wl.ok()) << wl.err;
  EXPECT_NE(wl.out.find("QUEUE"), std::string::npos) << wl.out;
  EXPECT_NE(wl.out.find("RESERVED IN"), std::string::npos) << wl.out;
  EXPECT_NE(wl.out.find("FINISHED"), std::string::npos) << wl.out;
  EXPECT_NE(wl.out.find("shown   gpu     " + cq + "   True"), std::string::npos) << wl.out;
}

}  // namespace
}  // namespace rota::testing
