#include "rota/replay/simulator.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "simulate.h"

namespace rota::replay {
namespace {

// Two teams with 4 GPUs each in one cohort; each reclaims what it lent.
const char* kCluster = R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: gpu}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-a}
spec:
  cohortName: lab
  namespaceSelector: {}
  preemption: {reclaimWithinCohort: Any}
  resourceGroups: [{coveredResources: [nvidia.com/gpu], flavors: [{name: gpu, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-b}
spec:
  cohortName: lab
  namespaceSelector: {}
  preemption: {reclaimWithinCohort: Any}
  resourceGroups: [{coveredResources: [nvidia.com/gpu], flavors: [{name: gpu, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: gpu, namespace: team-a}
spec: {clusterQueue: team-a}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: gpu, namespace: team-b}
spec: {clusterQueue: team-b}
)";

api::ClusterState Cluster() {
  // A file of this process's own: ctest runs the tests of this file in parallel processes.
  const auto file =
      std::filesystem::temp_directory_path() / ("rota-replay-test-cluster-" + std::to_string(getpid()) + ".yaml");
  std::ofstream(file) << kCluster;
  api::ClusterState state;
  std::ostringstream err;
  EXPECT_EQ(simulate::LoadFiles({file.string()}, state, err), "");
  return state;
}

// A Philly-format trace from (seconds after the start, run time, GPUs, team) rows.
Trace Jobs(const std::vector<std::tuple<int, int, int, std::string>>& rows) {
  std::ostringstream csv;
  csv << "timestamp,duration,num_gpus,gpu_time,cluster\n";
  for (const auto& [at, run, gpus, team] : rows) {
    char when[32];
    std::snprintf(when, sizeof when, "2017-10-01 %02d:%02d:%02d", at / 3600, at / 60 % 60, at % 60);
    csv << when << "," << run << "," << gpus << "," << run * gpus << "," << team << "\n";
  }
  std::istringstream in(csv.str());
  Result<Trace> t = ReadPhilly(in, "t.csv", {});
  EXPECT_TRUE(t.ok() && t->problems.empty());
  return *t;
}

// Team A fills the cluster with 8 one-GPU jobs of 100 s; at 10 s team B asks for its 4 GPUs back.
Trace Reclaim() {
  std::vector<std::tuple<int, int, int, std::string>> rows;
  for (int i = 0; i < 8; ++i) rows.emplace_back(0, 100, 1, "team-a");
  for (int i = 0; i < 4; ++i) rows.emplace_back(10, 50, 1, "team-b");
  return Jobs(rows);
}

const JobOutcome& Job(const Replay& r, const std::string& team, int nth) {
  for (const JobOutcome& j : r.jobs)
    if (j.team == team && nth-- == 0) return j;
  throw std::out_of_range(team);
}

TEST(Simulator, ATeamReclaimsItsGuaranteeAndTheBorrowersLoseTheirWork) {
  const Trace trace = Reclaim();
  Result<Replay> r = Simulate(Cluster(), trace, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->violations.empty()) << r->violations.front();
  EXPECT_EQ(r->capacity, 8);
  int preempted = 0;
  double lost = 0;
  for (const JobOutcome& j : r->jobs) {
    preempted += j.preemptions;
    lost += j.lost_gpu_seconds;
    EXPECT_GE(j.finish - j.first_start, j.runtime) << j.name;
  }
  EXPECT_EQ(preempted, 4);
  EXPECT_EQ(lost, 4 * 10);  // 10 s of one GPU each, no checkpoint
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(Job(*r, "team-b", i).first_start, 10);
    EXPECT_EQ(Job(*r, "team-b", i).finish, 60);
    EXPECT_EQ(Job(*r, "team-b", i).waited_within_guarantee, 0);
  }
  EXPECT_EQ(r->guarantee.at("team-b"), 4);
  // The evicted four start again from scratch when team B is done: 60 + 100.
  int64_t last = 0;
  for (int i = 0; i < 8; ++i) last = std::max(last, Job(*r, "team-a", i).finish);
  EXPECT_EQ(last, 160);
  EXPECT_EQ(r->end, 160);
}

TEST(Simulator, PeriodicCheckpointsKeepTheWorkUpToTheLastSave) {
  SimulatorOptions o;
  o.checkpoint_every = 4;
  Result<Replay> r = Simulate(Cluster(), Reclaim(), o);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->violations.empty());
  double lost = 0;
  for (const JobOutcome& j : r->jobs) lost += j.lost_gpu_seconds;
  EXPECT_EQ(lost, 4 * 2);  // saved at 8 s, evicted at 10 s
  int64_t last = 0;
  for (int i = 0; i < 8; ++i) last = std::max(last, Job(*r, "team-a", i).finish);
  EXPECT_EQ(last, 60 + 92);
}

// As in the controller, one preemptor at a time waits for its victims to save (PreemptionHold):
// team B's four jobs start 3 s apart.
TEST(Simulator, WithTheHandshakeVictimsSaveFirstAndThePreemptorWaitsForThem) {
  SimulatorOptions o;
  o.checkpoint_all = true;
  o.checkpoint_write = 3;
  Result<Replay> r = Simulate(Cluster(), Reclaim(), o);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->violations.empty()) << r->violations.front();
  double lost = 0;
  int preempted = 0;
  for (const JobOutcome& j : r->jobs) lost += j.lost_gpu_seconds, preempted += j.preemptions;
  EXPECT_EQ(lost, 0);
  EXPECT_EQ(preempted, 4);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(Job(*r, "team-b", i).first_start, 13 + 3 * i);
    // Team B asked for no more than its guarantee all the while.
    EXPECT_EQ(Job(*r, "team-b", i).waited_within_guarantee, 3 + 3 * i);
  }
  // Each victim keeps the work up to its save and runs the rest when team B's job is done.
  std::multiset<int64_t> finishes;
  for (int i = 0; i < 8; ++i) finishes.insert(Job(*r, "team-a", i).finish);
  EXPECT_EQ(finishes, (std::multiset<int64_t>{100, 100, 100, 100, 150, 150, 150, 150}));
}

// A request to save is withdrawn, as the controller withdraws it, when the preemptor is admitted
// without its victim: here a job of team A finishes while the victim is still saving.
TEST(Simulator, ARequestNoLongerNeededIsWithdrawn) {
  std::vector<std::tuple<int, int, int, std::string>> rows;
  for (int i = 0; i < 7; ++i) rows.emplace_back(0, 100, 1, "team-a");
  rows.emplace_back(0, 12, 1, "team-a");
  rows.emplace_back(10, 5, 1, "team-b");
  SimulatorOptions o;
  o.checkpoint_all = true;
  o.checkpoint_write = 5;
  Result<Replay> r = Simulate(Cluster(), Jobs(rows), o);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->violations.empty());
  EXPECT_EQ(Job(*r, "team-b", 0).first_start, 12);
  int preempted = 0;
  for (const JobOutcome& j : r->jobs) preempted += j.preemptions;
  EXPECT_EQ(preempted, 0);
}

TEST(Simulator, KueuesVictimOrderIsAnOption) {
  SimulatorOptions o;
  o.lost_work_order = false;
  Result<Replay> r = Simulate(Cluster(), Reclaim(), o);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->violations.empty());
}

TEST(Simulator, AJobBiggerThanTheClusterNeverStartsAndTheRestRun) {
  Result<Replay> r = Simulate(Cluster(), Jobs({{0, 10, 16, "team-a"}, {5, 10, 2, "team-a"}}), {});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->violations.empty());
  EXPECT_EQ(Job(*r, "team-a", 0).first_start, -1);
  EXPECT_EQ(Job(*r, "team-a", 0).finish, -1);
  // Why, in the engine's words.
  EXPECT_EQ(Job(*r, "team-a", 0).waiting_reason,
            "ExceedsMaxQuota: couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in "
            "flavor gpu, request > maximum capacity (16 > 8)");
  EXPECT_EQ(Job(*r, "team-a", 1).waiting_reason, "");
  EXPECT_EQ(Job(*r, "team-a", 1).finish, 15);
}

TEST(Simulator, UtilizationIsTheMeanOverEachInterval) {
  SimulatorOptions o;
  o.interval = 20;
  // Team A holds 2 GPUs for 10 of the first 20 s: a mean of 1.
  Result<Replay> r = Simulate(Cluster(), Jobs({{0, 10, 2, "team-a"}, {30, 10, 1, "team-b"}}), o);
  ASSERT_TRUE(r.ok());
  ASSERT_GE(r->series.at("team-a").in_use.size(), 2u);
  EXPECT_DOUBLE_EQ(r->series.at("team-a").in_use[0], 1.0);
  EXPECT_DOUBLE_EQ(r->series.at("team-b").in_use[1], 0.5);
}

// Random traces: no queue ever exceeds its limits, every GPU-second is accounted for, and every
// job runs its full run time after it last started.
TEST(Simulator, RandomTracesStaySound) {
  std::mt19937 rng(7);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::tuple<int, int, int, std::string>> rows;
    for (int i = 0; i < 60; ++i) {
      rows.emplace_back(static_cast<int>(rng() % 600), 1 + static_cast<int>(rng() % 200),
                        1 + static_cast<int>(rng() % 4), rng() % 2 ? "team-a" : "team-b");
    }
    SimulatorOptions o;
    o.checkpoint_all = round % 2 == 1;
    o.checkpoint_every = round % 3 == 0 ? 0 : 30;
    o.checkpoint_write = 5;
    const Trace trace = Jobs(rows);
    Result<Replay> r = Simulate(Cluster(), trace, o);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->violations.empty()) << "round " << round << ": " << r->violations.front();
    for (const JobOutcome& j : r->jobs) {
      EXPECT_GE(j.first_start, j.submit) << j.name;
      EXPECT_GE(j.finish - j.first_start, j.runtime) << j.name;
    }
    // The order kept between passes decides as the engine's own sort does.
    o.keep_order = false;
    Result<Replay> sorted = Simulate(Cluster(), trace, o);
    ASSERT_TRUE(sorted.ok());
    ASSERT_EQ(sorted->jobs.size(), r->jobs.size());
    for (size_t i = 0; i < r->jobs.size(); ++i) {
      EXPECT_EQ(sorted->jobs[i].first_start, r->jobs[i].first_start) << "round " << round << ": " << r->jobs[i].name;
      EXPECT_EQ(sorted->jobs[i].finish, r->jobs[i].finish) << "round " << round << ": " << r->jobs[i].name;
    }
  }
}

}  // namespace
}  // namespace rota::replay
