// The commands end to end on a FakeCluster: what they print, and their exit codes.

#include <gtest/gtest.h>

#include <sstream>

#include "rota/kubectl/context.h"
#include "samples.h"

namespace rota::kubectl {
namespace {

using namespace samples;

struct RanCommand {
  int code;
  std::string out, err;
};

RanCommand RunCommand(int (*command)(const Context&), ClusterReader& cluster, Invocation inv,
                      const std::string& ns = "ml") {
  std::ostringstream out, err;
  const int code = command(Context{inv, cluster, ns, 1793527200, out, err});
  return {code, out.str(), err.str()};
}

class FailingCluster : public FakeCluster {
 public:
  Fetched<std::vector<api::ClusterQueue>> ClusterQueues() override {
    return Failure{"Unable to connect to the server: connection refused"};
  }
};

TEST(CommandsTest, QueuesPrintsATableOrADocument) {
  FakeCluster cluster;
  cluster.cluster_queues = {ClusterQueueJson("b", "", 8), ClusterQueueJson("a", "", 4)};
  RanCommand table = RunCommand(RunQueues, cluster, {});
  EXPECT_EQ(table.code, 0);
  EXPECT_LT(table.out.find("\na "), table.out.find("\nb "));  // by name
  Invocation yaml;
  yaml.output = Output::kYaml;
  EXPECT_EQ(RunCommand(RunQueues, cluster, yaml).out.rfind("apiVersion: rota.dev/v1alpha1\n", 0), 0u);
  FakeCluster empty;
  EXPECT_EQ(RunCommand(RunQueues, empty, {}).err, "No resources found\n");
}

TEST(CommandsTest, AFailedReadExitsOneWithKubectlsWords) {
  FailingCluster cluster;
  RanCommand r = RunCommand(RunQueues, cluster, {});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "Unable to connect to the server: connection refused\n");
}

TEST(CommandsTest, WhyOfAJobThatIsNotThereExitsOneNamingIt) {
  FakeCluster cluster;
  Invocation inv;
  inv.command = Command::kWhy;
  inv.target = "job/nope";
  RanCommand r = RunCommand(RunWhy, cluster, inv);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "Error from server (NotFound): jobs.batch \"nope\" not found\n");
}

TEST(CommandsTest, WhyOfAWaitingJob) {
  FakeCluster cluster;
  cluster.cluster_queues = {ClusterQueueJson("team", "", 4, {{"withinClusterQueue", "Never"}})};
  cluster.local_queues = {LocalQueueJson("ml", "main", "team")};
  Json holder = WorkloadJson("ml", "big", 4, 0);
  Admit(holder, "team", "2026-11-01T09:00:00Z");
  cluster.workloads = {holder, WorkloadJson("ml", "small", 1, 0)};
  cluster.job_uids = {{"ml/small", "uid-small"}};
  Invocation inv;
  inv.target = "small";
  RanCommand r = RunCommand(RunWhy, cluster, inv);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Job:         small\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Position:    unknown (the visibility API is not available: 404 page not found)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(
      r.out.find("  ml/job-big-00000   team           0          yes           nvidia.com/gpu: 4, cpu: 1   60m ago"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Preemption could help: no: withinClusterQueue is Never\n"), std::string::npos) << r.out;
}

// A user who may list Workloads in their namespace only.
class NamespacedCluster : public FakeCluster {
 public:
  Fetched<std::vector<api::Workload>> Workloads(const std::string& ns) override {
    if (ns.empty()) return Failure{"Error from server (Forbidden): workloads.kueue.x-k8s.io is forbidden"};
    return FakeCluster::Workloads(ns);
  }
};

TEST(CommandsTest, WhyWithoutRightsInEveryNamespaceShowsTheHoldersOfItsOwn) {
  NamespacedCluster cluster;
  cluster.cluster_queues = {ClusterQueueJson("team", "", 4)};
  cluster.local_queues = {LocalQueueJson("ml", "main", "team")};
  Json holder = WorkloadJson("ml", "big", 4, 0);
  Admit(holder, "team", "2026-11-01T09:00:00Z");
  cluster.workloads = {holder, WorkloadJson("ml", "small", 1, 0)};
  Invocation inv;
  inv.target = "workload/job-small-00000";
  RanCommand r = RunCommand(RunWhy, cluster, inv);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Holding the quota it needs (of namespace ml only: Error from server (Forbidden): "
                       "workloads.kueue.x-k8s.io is forbidden):\n  WORKLOAD"),
            std::string::npos)
      << r.out;
}

TEST(CommandsTest, PreemptedAndTopSayWhenThereIsNothing) {
  FakeCluster cluster;
  Invocation inv;
  EXPECT_EQ(RunCommand(RunPreempted, cluster, inv).err, "No preemptions found in ml namespace.\n");
  EXPECT_EQ(RunCommand(RunTop, cluster, inv).err, "No admitted workloads found in ml namespace.\n");
  inv.all_namespaces = true;
  EXPECT_EQ(RunCommand(RunTop, cluster, inv).err, "No admitted workloads found\n");
  inv.output = Output::kJson;
  RanCommand json = RunCommand(RunPreempted, cluster, inv);
  EXPECT_EQ(json.code, 0);
  EXPECT_EQ(Json::parse(json.out)["items"], Json::array());
}

}  // namespace
}  // namespace rota::kubectl
