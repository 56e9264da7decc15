#include "rota/replay/replay.h"
#include "rota/replay/settings.h"
#include "simulate.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "nlohmann/json.hpp"

namespace rota::replay {
namespace {

namespace fs = std::filesystem;

const fs::path kScenario = fs::path(ROTA_SOURCE_DIR) / "examples" / "replay" / "scenario";

ReplayOptions Scenario(const std::string& out) {
  ReplayOptions o;
  o.format = TraceFormat::kWorkloads;
  o.cluster_dir = (kScenario / "cluster").string();
  o.trace_file = (kScenario / "workloads.yaml").string();
  o.out_dir = (fs::temp_directory_path() / out).string();
  fs::remove_all(o.out_dir);
  return o;
}

TEST(RotaReplay, WritesTheReportAndSaysWhatHappened) {
  ReplayOptions o = Scenario("rota-replay-test-out");
  o.compare_dir = (kScenario / "isolated").string();
  std::ostringstream out, err;
  ASSERT_EQ(RunReplay(o, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("cluster: 28 jobs replayed"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("isolated: 28 jobs replayed"), std::string::npos) << out.str();
  for (const char* f : {"summary.json", "series.csv", "jobs.csv", "report.html", "compare/summary.json"}) {
    EXPECT_TRUE(fs::exists(fs::path(o.out_dir) / f)) << f;
  }
  std::ifstream summary(fs::path(o.out_dir) / "summary.json");
  const nlohmann::json s = nlohmann::json::parse(summary);
  EXPECT_EQ(s["trace"]["finished"], 28);
  EXPECT_EQ(s["label"], "cluster");
  EXPECT_TRUE(s["violations"].empty());
}

TEST(RotaReplay, BadInputIsExitCode2WithTheFileNamed) {
  std::ostringstream out, err;
  ReplayOptions o = Scenario("rota-replay-test-bad");
  o.cluster_dir = "/nonexistent/cluster";
  EXPECT_EQ(RunReplay(o, out, err), 2);
  EXPECT_EQ(err.str(), "rota replay: --cluster: /nonexistent/cluster is not a directory\n");

  const fs::path dir = fs::temp_directory_path() / "rota-replay-test-trace";
  fs::create_directories(dir);
  std::ofstream(dir / "bad.csv") << "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,x,1,1,a\n";
  ReplayOptions p = Scenario("rota-replay-test-bad");
  p.format = TraceFormat::kPhilly;
  p.trace_file = (dir / "bad.csv").string();
  p.read.strict = true;
  std::ostringstream err2;
  EXPECT_EQ(RunReplay(p, out, err2), 2);
  EXPECT_NE(err2.str().find("bad.csv: line 2: duration: \"x\" is not a number of seconds"), std::string::npos)
      << err2.str();
  EXPECT_FALSE(fs::exists(fs::path(p.out_dir) / "report.html"));
}

TEST(RotaReplay, GenerateClusterNeverWritesOverAnEditedFile) {
  const fs::path dir = fs::temp_directory_path() / "rota-replay-test-generate";
  fs::remove_all(dir);
  fs::create_directories(dir / "trace");
  std::ofstream(dir / "trace" / "philly.csv") << "timestamp,duration,num_gpus,gpu_time,cluster\n"
                                                 "2017-10-09 07:01:55,60,8,480,vc1\n"
                                                 "2017-10-09 07:02:55,60,1,60,vc2\n";
  std::ofstream(dir / "trace" / "philly_vc_nodes_from_HeliosArtifact.csv") << "vc,node num\nvc1,2\n";
  ReplayOptions o;
  o.cluster_dir = (dir / "cluster").string();
  o.trace_file = (dir / "trace" / "philly.csv").string();
  o.out_dir = (dir / "out").string();
  o.generate_cluster = true;
  std::ostringstream out, err;
  ASSERT_EQ(RunReplay(o, out, err), 0) << err.str();
  std::ifstream generated(dir / "cluster" / "cluster.yaml");
  std::stringstream text;
  text << generated.rdbuf();
  EXPECT_NE(text.str().find("nominalQuota: 16"), std::string::npos) << text.str();  // vc1: 2 nodes of 8
  EXPECT_NE(text.str().find("name: \"vc2\""), std::string::npos);
  std::ostringstream err2;
  EXPECT_EQ(RunReplay(o, out, err2), 2);
  EXPECT_NE(err2.str().find("cluster.yaml: exists; remove it or leave out --generate-cluster"), std::string::npos);
}

TEST(RotaReplay, ADirectoryCanNameItsQueuesElsewhereAndItsOwnPolicy) {
  const fs::path dir = fs::temp_directory_path() / "rota-replay-test-settings";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "replay.yaml") << "queues: " << (kScenario / "cluster").string()
                                     << "\nvictims: kueue\ncheckpointAll: true\ncheckpointWrite: 5s\n";
  DirectorySettings defaults;
  Result<DirectorySettings> s = ReadSettings(dir.string(), defaults);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->queues_dir, (kScenario / "cluster").string());
  EXPECT_FALSE(s->simulator.lost_work_order);
  EXPECT_TRUE(s->simulator.checkpoint_all);
  EXPECT_EQ(s->simulator.checkpoint_write, 5);

  ReplayOptions o = Scenario("rota-replay-test-settings-out");
  o.compare_dir = dir.string();
  std::ostringstream out, err;
  ASSERT_EQ(RunReplay(o, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("rota-replay-test-settings: 28 jobs replayed"), std::string::npos) << out.str();
  // The handshake loses no work; the first run, without it, does.
  auto lost = [&](const fs::path& summary) {
    std::ifstream in(summary);
    return nlohmann::json::parse(in)["overall"]["lostGpuHours"].get<double>();
  };
  EXPECT_GT(lost(fs::path(o.out_dir) / "summary.json"), 0);
  EXPECT_EQ(lost(fs::path(o.out_dir) / "compare" / "summary.json"), 0);

  std::ofstream(dir / "replay.yaml") << "victim: kueue\n";
  Result<DirectorySettings> bad = ReadSettings(dir.string(), defaults);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), (dir / "replay.yaml").string() +
                                        ": victim: unknown (queues, victims, checkpointEvery, checkpointAll, "
                                        "checkpointWrite, fairSharing)");
  std::ofstream(dir / "replay.yaml") << "checkpointEvery: soon\n";
  bad = ReadSettings(dir.string(), defaults);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("replay.yaml: checkpointEvery: "), std::string::npos);
}

// Every configuration in examples/replay/ is queue YAML rota can use (or a replay.yaml naming one).
TEST(RotaReplay, EveryExampleConfigurationLoads) {
  size_t configurations = 0;
  for (const auto& entry : fs::recursive_directory_iterator(kScenario.parent_path())) {
    if (!entry.is_directory()) continue;
    const bool has_queues = fs::exists(entry.path() / "cluster.yaml"),
               has_settings = fs::exists(entry.path() / kSettingsFile);
    if (!has_queues && !has_settings) continue;
    ++configurations;
    Result<DirectorySettings> s = ReadSettings(entry.path().string(), {});
    ASSERT_TRUE(s.ok()) << s.status().message();
    api::ClusterState state;
    std::ostringstream err;
    EXPECT_EQ(simulate::LoadFiles({(fs::path(s->queues_dir) / "cluster.yaml").string()}, state, err), "")
        << entry.path();
    EXPECT_FALSE(state.cluster_queues.empty()) << entry.path();
    Result<admission::Snapshot> snapshot = api::BuildSnapshot(state);
    EXPECT_TRUE(snapshot.ok()) << entry.path() << ": " << snapshot.status().message();
  }
  EXPECT_GE(configurations, 9u);
}

}  // namespace
}  // namespace rota::replay
