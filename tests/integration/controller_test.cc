// `rota run` on the real control plane: Workloads admitted by their ClusterQueue's quota, Kueue's
// conditions and queue status written back, quota released when a Workload finishes,
// preemption by priority, no status churn for workloads that stay pending, a clean stop.
// Runs serially: a running controller acts on the whole cluster.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/kube.h"

namespace rota::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

class ControllerTest : public ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    if (HasFatalFailure()) return;
    const fs::path crds = fs::path(ROTA_SOURCE_DIR) / "crds";
    ASSERT_TRUE(kubectl()({"apply", "-f", crds.string()}).ok());
    ASSERT_TRUE(kubectl()({"wait", "--for=condition=Established", "--timeout=60s", "-f", crds.string()}).ok());
    log_ = fs::temp_directory_path() / ("rota-run-" + ns() + ".log");
  }
  void TearDown() override {
    StopRota();
    ClusterTest::TearDown();
  }

  void StartRota() {
    pid_ = fork();
    if (pid_ == 0) {
      FILE* f = freopen(log_.c_str(), "w", stderr);
      (void)f;
      execl(ROTA_BINARY, ROTA_BINARY, "run", "--kubeconfig", KubeconfigFromEnv().c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  // Stops rota with SIGTERM; returns its exit status (or -1 if it had to be killed).
  int StopRota() {
    if (pid_ <= 0) return 0;
    kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 100; ++i) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = 0;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(100ms);
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    pid_ = 0;
    return -1;
  }
  std::string Log() const {
    std::ifstream in(log_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::string Workload(const std::string& name, int gpus, int priority = 0) {
    return "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata:\n  name: " + name +
           "\nspec:\n  queueName: gpu\n  priority: " + std::to_string(priority) +
           "\n  podSets:\n  - name: main\n    count: 1\n    template:\n      spec:\n        containers:\n"
           "        - name: c\n          image: i\n          resources:\n            requests: {nvidia.com/gpu: " +
           std::to_string(gpus) + "}\n";
  }
  std::string Status(const std::string& wl, const std::string& path) {
    return kubectl().JsonPath({"workload", wl}, path, ns());
  }
  std::string Condition(const std::string& wl, const std::string& type, const std::string& field = "status") {
    return Status(wl, "{.status.conditions[?(@.type==\"" + type + "\")]." + field + "}");
  }

  fs::path log_;
  pid_t pid_ = 0;
};

TEST_F(ControllerTest, AdmitsByQuotaWritesStatusReleasesAndPreempts) {
  const std::string flavor = "a100-" + ns(), cq = "cq-" + ns();
  ASSERT_TRUE(kubectl().Apply("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: " + flavor + "\n").ok());
  ASSERT_TRUE(kubectl().Apply(
      "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: " + cq +
      "\nspec:\n  namespaceSelector: {}\n  preemption: {withinClusterQueue: LowerPriority}\n"
      "  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: " + flavor +
      "\n      resources: [{name: nvidia.com/gpu, nominalQuota: 4}]\n").ok());
  ASSERT_TRUE(kubectl().Apply("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: gpu\n"
                              "spec:\n  clusterQueue: " + cq + "\n", ns()).ok());
  for (const char* w : {"w1", "w2", "w3"}) {
    ASSERT_TRUE(kubectl().Apply(Workload(w, 2), ns()).ok());
    std::this_thread::sleep_for(1100ms);  // distinct creation times: w1 is the oldest
  }
  StartRota();

  // Two fit the 4 GPUs; the third waits and says why.
  ASSERT_TRUE(Eventually([&] { return Condition("w1", "Admitted") == "True" && Condition("w2", "Admitted") == "True"; }, 60s))
      << Log();
  EXPECT_EQ(Status("w1", "{.status.admission.clusterQueue}"), cq);
  EXPECT_EQ(Status("w1", "{.status.admission.podSetAssignments[0].flavors.nvidia\\.com/gpu}"), flavor);
  EXPECT_EQ(Status("w1", "{.status.admission.podSetAssignments[0].resourceUsage.nvidia\\.com/gpu}"), "2");
  EXPECT_EQ(Condition("w1", "QuotaReserved", "reason"), "QuotaReserved");
  ASSERT_TRUE(Eventually([&] { return Condition("w3", "QuotaReserved") == "False"; }, 30s));
  EXPECT_EQ(Condition("w3", "QuotaReserved", "reason"), "WaitingForQuota");
  EXPECT_EQ(Condition("w3", "QuotaReserved", "message"),
            "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor " +
                flavor + ", 2 more needed; no workload can be preempted to make room");
  ASSERT_TRUE(Eventually([&] {
    return kubectl().JsonPath({"clusterqueue", cq}, "{.status.admittedWorkloads}/{.status.pendingWorkloads}/"
                              "{.status.flavorsUsage[0].resources[0].total}") == "2/1/4";
  }, 30s)) << kubectl().JsonPath({"clusterqueue", cq}, "{.status}");
  EXPECT_EQ(kubectl().JsonPath({"clusterqueue", cq}, "{.status.conditions[?(@.type==\"Active\")].reason}"), "Ready");
  ASSERT_TRUE(Eventually([&] {
    return kubectl().JsonPath({"localqueue", "gpu"}, "{.status.admittedWorkloads}/{.status.pendingWorkloads}", ns()) == "2/1";
  }, 30s));

  // A pending workload's status is not rewritten while nothing changes.
  const std::string rv = Status("w3", "{.metadata.resourceVersion}");
  std::this_thread::sleep_for(3s);
  EXPECT_EQ(Status("w3", "{.metadata.resourceVersion}"), rv) << "status churn on a pending workload";

  // w1 finishes (someone else marks it, as a job controller would): its quota goes to w3.
  CommandResult finished = kubectl()(
      {"patch", "workload", "w1", "-n", ns(), "--subresource=status", "--type=merge", "-p",
       R"({"status":{"conditions":[)" + std::string(R"({"type":"QuotaReserved","status":"True","reason":"QuotaReserved","message":"kept","lastTransitionTime":"2026-11-22T00:00:00Z"},)") +
           R"({"type":"Finished","status":"True","reason":"Succeeded","message":"done","lastTransitionTime":"2026-11-22T00:00:00Z"}]}})"});
  ASSERT_TRUE(finished.ok()) << finished.err;
  ASSERT_TRUE(Eventually([&] { return Condition("w3", "Admitted") == "True"; }, 60s)) << Log();

  // A higher-priority workload needing all 4 GPUs preempts the two running ones.
  ASSERT_TRUE(kubectl().Apply(Workload("urgent", 4, 100), ns()).ok());
  ASSERT_TRUE(Eventually([&] { return Condition("urgent", "Admitted") == "True"; }, 60s)) << Log();
  for (const char* victim : {"w2", "w3"}) {
    EXPECT_EQ(Condition(victim, "Evicted"), "True") << victim;
    EXPECT_EQ(Condition(victim, "Evicted", "reason"), "Preempted") << victim;
    EXPECT_EQ(Condition(victim, "Preempted", "reason"), "InClusterQueue") << victim;
    EXPECT_EQ(Condition(victim, "QuotaReserved"), "False") << victim;
    EXPECT_EQ(Status(victim, "{.status.admission}"), "") << victim;
  }
  EXPECT_NE(Condition("w2", "Preempted", "message").find("Preempted to accommodate workload " + ns() + "/urgent"),
            std::string::npos);

  EXPECT_EQ(StopRota(), 0) << Log();
  EXPECT_NE(Log().find("stopped after"), std::string::npos) << Log();
  kubectl()({"delete", "clusterqueue", cq, "--wait=false"});
  kubectl()({"delete", "resourceflavor", flavor, "--wait=false"});
}

}  // namespace
}  // namespace rota::testing
