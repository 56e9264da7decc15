#include "rota/kubectl/top.h"

#include <gtest/gtest.h>

#include <sstream>

#include "samples.h"

namespace rota::kubectl {
namespace {

using namespace samples;

std::vector<api::Workload> Sample() {
  Json a = WorkloadJson("ml", "a", 4, 0), b = WorkloadJson("ml", "b", 2, 0), c = WorkloadJson("vision", "c", 8, 0);
  Json waiting = WorkloadJson("ml", "waiting", 16, 0), done = WorkloadJson("ml", "done", 16, 0);
  Admit(a, "team-ml", "2026-11-01T10:00:00Z");
  Admit(b, "shared", "2026-11-01T10:00:00Z");
  Admit(c, "shared", "2026-11-01T10:00:00Z");
  Admit(done, "team-ml", "2026-11-01T10:00:00Z");
  SetCondition(done, "Finished", "True", "Succeeded", "Job finished", "2026-11-01T11:00:00Z");
  Json mig = WorkloadJson("notebooks", "mig", 0, 0);
  mig["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"]["requests"] = {
      {"nvidia.com/mig-1g.10gb", "7"}};
  Admit(mig, "notebooks", "2026-11-01T10:00:00Z");
  std::vector<api::Workload> out;
  for (const Json& j : {a, b, c, waiting, done, mig}) out.push_back(Decode<api::Workload>(j));
  return out;
}

TEST(TopTest, AddsUpWhatAdmittedWorkloadsHoldMostGpusFirst) {
  const auto groups = TallyUsage(Sample(), GroupBy::kNamespace);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].name, "vision");
  EXPECT_EQ(groups[1].name, "ml");
  EXPECT_EQ(groups[1].workloads, 2);  // (not the waiting or the finished one)
  EXPECT_EQ(groups[1].usage.at("nvidia.com/gpu"), 6000);
  EXPECT_EQ(groups[2].name, "notebooks");
  EXPECT_DOUBLE_EQ(groups[2].gpus, 1.0);  // 7 slices of 1g = one GPU
  EXPECT_EQ(TallyUsage(Sample(), GroupBy::kClusterQueue)[0].name, "shared");
  EXPECT_EQ(TallyUsage(Sample(), GroupBy::kLocalQueue)[0].name, "vision/main");
}

TEST(TopTest, TheTableShowsGpusFirst) {
  std::ostringstream out;
  RenderUsage(TallyUsage(Sample(), GroupBy::kClusterQueue), GroupBy::kClusterQueue, false, out);
  EXPECT_EQ(out.str(),
            "CLUSTERQUEUE   WORKLOADS   GPU-EQ   nvidia.com/gpu   nvidia.com/mig-1g.10gb   cpu\n"
            "shared         2           10.00    10               0                        2\n"
            "team-ml        1           4.00     4                0                        1\n"
            "notebooks      1           1.00     0                7                        0\n");
  const Json doc = UsageDocument(TallyUsage(Sample(), GroupBy::kClusterQueue), GroupBy::kClusterQueue);
  EXPECT_EQ(doc["kind"], "UsageList");
  EXPECT_EQ(doc["items"][0], Json::parse(R"({"clusterQueue": "shared", "workloads": 2, "gpuEquivalents": 10.0,
      "usage": {"cpu": "2", "nvidia.com/gpu": "10"}})"));
}

}  // namespace
}  // namespace rota::kubectl
