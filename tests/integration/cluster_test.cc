// The local control plane behaves like a GPU cluster: batch/v1 Jobs asking for whole GPUs or MIG
// slices are scheduled by the real kube-scheduler onto the fake nodes that have them, kwok runs
// and completes their pods, and a Job asking for more than any node has stays Pending.

#include <string>

#include "support/kube.h"

namespace rota::testing {
namespace {

using namespace std::chrono_literals;

// A Job of `parallelism` pods, each asking for `count` of `resource`. With `complete_after`
// set, kwok completes each pod that long after it started.
std::string GpuJob(const std::string& name, const std::string& resource, int count,
                   const std::string& complete_after = "") {
  std::string annotations =
      complete_after.empty()
          ? ""
          : "      annotations:\n        pod-complete.stage.kwok.x-k8s.io/delay: \"" + complete_after + "\"\n";
  return "apiVersion: batch/v1\n"
         "kind: Job\n"
         "metadata:\n"
         "  name: " +
         name +
         "\n"
         "spec:\n"
         "  backoffLimit: 0\n"
         "  template:\n"
         "    metadata:\n" +
         annotations +
         "      labels:\n"
         "        app: " +
         name +
         "\n"
         "    spec:\n"
         "      restartPolicy: Never\n"
         "      containers:\n"
         "      - name: train\n"
         "        image: registry.example/train:1\n"
         "        resources:\n"
         "          limits:\n"
         "            " +
         resource + ": \"" + std::to_string(count) +
         "\"\n"
         "            cpu: \"4\"\n"
         "            memory: 32Gi\n";
}

class ClusterJobsTest : public ClusterTest {
 protected:
  // The node the Job's pod was bound to, once it is; "" if that does not happen in time.
  std::string NodeOfJobPod(const std::string& job) {
    std::string node;
    Eventually(
        [&] {
          CommandResult r = kubectl()(
              {"get", "pods", "-n", ns(), "-l", "job-name=" + job, "-o", "jsonpath={.items[0].spec.nodeName}"});
          node = r.ok() ? r.out : "";
          return !node.empty();
        },
        60s);
    return node;
  }
};

TEST_F(ClusterJobsTest, FakeNodesAdvertiseGpuCapacity) {
  std::string a100 = kubectl().JsonPath(
      {"nodes", "-l", "nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB,nvidia.com/mig.config=all-disabled"},
      "{range .items[*]}{.status.allocatable.nvidia\\.com/gpu}{\" \"}{end}");
  EXPECT_EQ(a100, "4 4 4 4 4 4 4 4 ");
  EXPECT_EQ(kubectl().JsonPath({"node", "gpu-mig-1g-1"}, "{.status.allocatable.nvidia\\.com/mig-1g\\.10gb}"), "7");
  EXPECT_EQ(kubectl().JsonPath({"node", "gpu-mig-mixed-1"},
                               "{.status.allocatable.nvidia\\.com/mig-2g\\.20gb}/"
                               "{.status.allocatable.nvidia\\.com/mig-1g\\.10gb}"),
            "3/1");
  EXPECT_EQ(kubectl().JsonPath({"nodes", "-l", "nvidia.com/gpu.sharing-strategy=time-slicing"},
                               "{range .items[*]}{.status.allocatable.nvidia\\.com/gpu\\.shared}{\" \"}{end}"),
            "16 16 ");
}

TEST_F(ClusterJobsTest, WholeGpuJobRunsOnAnA100NodeAndCompletes) {
  CommandResult applied = kubectl().Apply(GpuJob("train-1gpu", "nvidia.com/gpu", 1, "2s"), ns());
  ASSERT_TRUE(applied.ok()) << applied.err;

  std::string node = NodeOfJobPod("train-1gpu");
  ASSERT_FALSE(node.empty()) << "the Job's pod was never scheduled";
  EXPECT_EQ(kubectl().JsonPath({"node", node}, "{.metadata.labels.nvidia\\.com/gpu\\.product}"),
            "NVIDIA-A100-SXM4-80GB");
  EXPECT_EQ(kubectl().JsonPath({"node", node}, "{.status.allocatable.nvidia\\.com/gpu}"), "4");

  CommandResult done = kubectl()({"wait", "-n", ns(), "--for=condition=Complete", "job/train-1gpu", "--timeout=120s"});
  EXPECT_TRUE(done.ok()) << "the Job did not complete: " << done.err
                         << kubectl()({"describe", "job", "-n", ns(), "train-1gpu"}).out;
  EXPECT_EQ(kubectl().JsonPath({"job", "train-1gpu"}, "{.status.succeeded}", ns()), "1");
}

TEST_F(ClusterJobsTest, MigSliceJobLandsOnAMigNode) {
  CommandResult applied = kubectl().Apply(GpuJob("notebook-mig", "nvidia.com/mig-1g.10gb", 1, "1s"), ns());
  ASSERT_TRUE(applied.ok()) << applied.err;

  std::string node = NodeOfJobPod("notebook-mig");
  ASSERT_FALSE(node.empty()) << "the Job's pod was never scheduled";
  EXPECT_TRUE(node == "gpu-mig-1g-1" || node == "gpu-mig-mixed-1") << "scheduled onto " << node;
  EXPECT_NE(kubectl().JsonPath({"node", node}, "{.status.allocatable.nvidia\\.com/mig-1g\\.10gb}"), "");
  CommandResult done =
      kubectl()({"wait", "-n", ns(), "--for=condition=Complete", "job/notebook-mig", "--timeout=120s"});
  EXPECT_TRUE(done.ok()) << done.err;
}

TEST_F(ClusterJobsTest, JobAskingForMoreGpusThanAnyNodeHasStaysPending) {
  CommandResult applied = kubectl().Apply(GpuJob("too-big", "nvidia.com/gpu", 5), ns());
  ASSERT_TRUE(applied.ok()) << applied.err;

  // The scheduler reports the pod unschedulable for lack of GPUs...
  std::string reason, message;
  bool reported = Eventually(
      [&] {
        CommandResult r = kubectl()({"get", "pods", "-n", ns(), "-l", "job-name=too-big", "-o",
                                     "jsonpath={.items[0].status.conditions[?(@.type==\"PodScheduled\")].reason}|"
                                     "{.items[0].status.conditions[?(@.type==\"PodScheduled\")].message}"});
        if (!r.ok()) return false;
        reason = r.out.substr(0, r.out.find('|'));
        message = r.out.substr(r.out.find('|') + 1);
        return !reason.empty();
      },
      60s);
  ASSERT_TRUE(reported) << "the scheduler never reported on the pod";
  EXPECT_EQ(reason, "Unschedulable");
  EXPECT_NE(message.find("Insufficient nvidia.com/gpu"), std::string::npos) << message;
  // ...and it stays Pending, unbound, while the Job stays active.
  EXPECT_EQ(kubectl().JsonPath({"pods", "-l", "job-name=too-big"}, "{.items[0].status.phase}/{.items[0].spec.nodeName}",
                               ns()),
            "Pending/");
  EXPECT_EQ(kubectl().JsonPath({"job", "too-big"}, "{.status.active}", ns()), "1");
}

}  // namespace
}  // namespace rota::testing
