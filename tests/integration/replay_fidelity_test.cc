// `rota replay` against `rota run`: the same jobs, on the same queues, replayed on the virtual
// clock and run as batch/v1 Jobs on the real control plane (kwok pods that complete after each
// job's run time). The two agree on who starts in which order and how often jobs are preempted;
// where real time makes them differ (pods starting and stopping, the apiserver's round trips),
// the test prints by how much. Runs serially: a running controller acts on the whole cluster.

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "integration/controller_fixture.h"
#include "support/kube.h"

namespace rota::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct FidelityJob {
  std::string name, team;  // team: "a" or "b"
  int submit = 0, runtime = 0, pods = 1;
};

// Team A fills both teams' 8 GPUs (4 of them borrowed); at 10 s team B takes three back, at 20 s
// one more, and its fifth job waits for its own first ones to finish.
std::vector<FidelityJob> Scenario() {
  std::vector<FidelityJob> jobs;
  for (int i = 0; i < 8; ++i) jobs.push_back({"a" + std::to_string(i), "a", i / 4, 40, 1});
  for (int i = 0; i < 3; ++i) jobs.push_back({"b" + std::to_string(i), "b", 10, 15, 1});
  jobs.push_back({"b3", "b", 20, 10, 1});
  jobs.push_back({"b4", "b", 21, 10, 1});
  return jobs;
}

class ReplayFidelityTest : public ControllerTest {
 protected:
  std::string Team(const std::string& t) const { return ns() + "-" + t; }

  std::string ClusterYaml() const {
    std::string y = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f-" + ns() + "}\n";
    for (const std::string t : {"a", "b"}) {
      y += "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq-" + Team(t) +
           "}\nspec:\n  cohortName: lab-" + ns() +
           "\n  namespaceSelector: {}\n  preemption: {reclaimWithinCohort: Any}\n  resourceGroups:\n"
           "  - coveredResources: [nvidia.com/gpu]\n    flavors: [{name: f-" +
           ns() +
           ", resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]\n---\napiVersion: kueue.x-k8s.io/v1beta2\n" +
           "kind: LocalQueue\nmetadata: {name: gpu, namespace: " + Team(t) + "}\nspec: {clusterQueue: cq-" + Team(t) +
           "}\n";
    }
    return y;
  }

  std::string WorkloadsYaml(const std::vector<FidelityJob>& jobs) const {
    std::string y;
    for (const FidelityJob& j : jobs) {
      y += "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata:\n  name: " + j.name +
           "\n  namespace: " + Team(j.team) + "\n  annotations: {rota.dev/submit-at: \"" + std::to_string(j.submit) +
           "\", rota.dev/runtime: \"" + std::to_string(j.runtime) +
           "s\"}\nspec:\n  queueName: gpu\n  podSets:\n  - name: main\n    count: " + std::to_string(j.pods) +
           "\n    template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: 1}}}]}}\n";
    }
    return y;
  }

  // Replays the jobs; returns each one's first start and preemptions, from jobs.csv.
  std::map<std::string, std::pair<double, int>> Replay(const std::vector<FidelityJob>& jobs) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("rota-fidelity-" + ns());
    std::filesystem::create_directories(dir / "cluster");
    std::ofstream(dir / "cluster" / "cluster.yaml") << ClusterYaml();
    std::ofstream(dir / "workloads.yaml") << WorkloadsYaml(jobs);
    CommandResult r =
        testing::Run({ROTA_BINARY, "replay", "--format", "workloads", "--cluster", (dir / "cluster").string(),
                      "--trace", (dir / "workloads.yaml").string(), "--out", (dir / "out").string(), "--no-progress"});
    EXPECT_TRUE(r.ok()) << r.out << r.err;
    std::ifstream csv(dir / "out" / "jobs.csv");
    std::map<std::string, std::pair<double, int>> out;
    std::string line;
    std::getline(csv, line);
    while (std::getline(csv, line)) {
      std::vector<std::string> f;
      std::stringstream fields(line);
      for (std::string x; std::getline(fields, x, ',');) f.push_back(x);
      if (f.size() >= 9) out[f[0]] = {std::stod(f[4]), std::stoi(f[8])};
    }
    return out;
  }

  // Runs the jobs as Jobs under rota; returns each one's first start (seconds after the first
  // submission) and how often it was suspended again after starting.
  std::map<std::string, std::pair<double, int>> RunLive(const std::vector<FidelityJob>& jobs) {
    for (const std::string t : {"a", "b"}) EXPECT_TRUE(kubectl()({"create", "namespace", Team(t)}).ok());
    EXPECT_TRUE(kubectl().Apply(ClusterYaml()).ok());
    StartRota();
    EXPECT_TRUE(Eventually([&] { return Http(health_port_, "/readyz").ends_with("200"); }, 30s)) << Log();
    std::map<std::string, std::pair<double, int>> seen;
    std::map<std::string, bool> running;
    const auto t0 = Clock::now();
    auto since = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
    size_t submitted = 0;
    std::set<std::string> done;
    while (done.size() < jobs.size() && since() < 240) {
      for (; submitted < jobs.size() && since() >= jobs[submitted].submit; ++submitted) {
        const FidelityJob& j = jobs[submitted];
        const std::string labels = "    kueue.x-k8s.io/queue-name: gpu\n    rota.test/fidelity: " + ns() + "\n";
        EXPECT_TRUE(kubectl()
                        .Apply(JobManifest(j.name, labels, j.pods, 1, std::to_string(j.runtime) + "s"), Team(j.team))
                        .ok());
      }
      CommandResult r = kubectl()({"get", "jobs", "-A", "-l", "rota.test/fidelity=" + ns(), "-o",
                                   "jsonpath={range .items[*]}{.metadata.name} {.spec.suspend} "
                                   "{.status.succeeded}{\"\\n\"}{end}"});
      std::stringstream rows(r.out);
      for (std::string name, suspend, succeeded; rows >> name >> suspend;) {
        std::getline(rows, succeeded);
        const bool runs = suspend == "false";
        if (runs && !seen.count(name)) seen[name] = {since(), 0};
        if (!runs && running[name]) ++seen[name].second;
        running[name] = runs;
        if (succeeded.find(std::to_string(1)) != std::string::npos) done.insert(name);
      }
      std::this_thread::sleep_for(200ms);
    }
    EXPECT_EQ(done.size(), jobs.size()) << "not all Jobs completed in 240 s\n" << Log();
    return seen;
  }
};

TEST_F(ReplayFidelityTest, AReplayAgreesWithTheControllerOnTheSameJobs) {
  const std::vector<FidelityJob> jobs = Scenario();
  auto replayed = Replay(jobs);
  ASSERT_EQ(replayed.size(), jobs.size());
  auto live = RunLive(jobs);
  ASSERT_EQ(live.size(), jobs.size()) << Log();

  std::ostringstream table;
  table << "job  replay start  live start  drift (s)  preemptions replay/live\n";
  double worst = 0, sum = 0;
  int preempted_replay = 0, preempted_live = 0;
  for (const FidelityJob& j : jobs) {
    const auto& [rs, rp] = replayed.at(j.name);
    const auto& [ls, lp] = live.at(j.name);
    table << j.name << "  " << rs << "  " << ls << "  " << ls - rs << "  " << rp << "/" << lp << "\n";
    worst = std::max(worst, std::fabs(ls - rs));
    sum += ls - rs;
    preempted_replay += rp;
    preempted_live += lp;
  }
  table << "mean drift " << sum / static_cast<double>(jobs.size()) << " s, largest " << worst << " s\n";
  std::cout << table.str();
  // Team B reclaims 4 GPUs from team A's borrowed ones in both.
  EXPECT_EQ(preempted_replay, 4) << table.str();
  EXPECT_EQ(preempted_live, preempted_replay) << table.str() << Log();
  // Whoever the replay starts 5 s or more before another starts before it live too.
  for (const FidelityJob& x : jobs) {
    for (const FidelityJob& y : jobs) {
      if (replayed.at(x.name).first + 5 <= replayed.at(y.name).first) {
        EXPECT_LT(live.at(x.name).first, live.at(y.name).first) << x.name << " before " << y.name << "\n"
                                                                << table.str();
      }
    }
  }
  // Real pods take seconds to start and stop; the replay's clock does not.
  EXPECT_LT(worst, 20) << table.str();
  DeleteAll({"namespace/" + Team("a"), "namespace/" + Team("b"), "clusterqueue/cq-" + Team("a"),
             "clusterqueue/cq-" + Team("b"), "resourceflavor/f-" + ns()});
}

}  // namespace
}  // namespace rota::testing
