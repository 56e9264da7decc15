#include "jobs/checkpoint_relay.h"

#include <gtest/gtest.h>

#include "job_controller.h"

namespace rota::controller {
namespace {

using api::Json;

std::shared_ptr<const PodInfo> Pod(const std::string& checkpointed_at) {
  auto p = std::make_shared<PodInfo>();
  p->ns = "ml";
  p->name = "train-0";
  p->job = "train";
  p->checkpointed_at = checkpointed_at;
  return p;
}

api::Workload WithCondition(const Json& condition) {
  Json w = {{"metadata", {{"name", "w"}, {"namespace", "ml"}}}, {"spec", {{"podSets", Json::array()}}}};
  if (!condition.is_null()) w["status"] = {{"conditions", Json::array({condition})}};
  return *api::DecodeObject<api::Workload>(w);
}

TEST(CheckpointRelayTest, TheLatestReportOfTheJobOrAnyPodCounts) {
  JobInfo job;
  job.annotations["rota.dev/checkpointed-at"] = "2026-11-01T10:05:00Z";
  EXPECT_EQ(LatestCheckpoint(job, {}), 1793527500);
  EXPECT_EQ(LatestCheckpoint(job, {Pod("2026-11-01T10:07:00Z"), Pod("2026-11-01T10:06:00Z")}), 1793527620);
  EXPECT_EQ(LatestCheckpoint(job, {Pod("not a time")}), 1793527500) << "a bad report is left out";
  EXPECT_EQ(LatestCheckpoint(JobInfo{}, {}), 0);
}

TEST(CheckpointRelayTest, TheJobsSettingsFollowItToTheWorkload) {
  const std::map<std::string, std::string> job = {{"rota.dev/checkpoint", "true"},
                                                  {"rota.dev/checkpoint-timeout", "10m"}};
  EXPECT_TRUE(CheckpointSettingsPatch(job, job).empty());
  EXPECT_EQ(CheckpointSettingsPatch(job, {{"rota.dev/checkpoint", "true"}}),
            (Json{{"rota.dev/checkpoint-timeout", "10m"}}));
  EXPECT_EQ(CheckpointSettingsPatch({}, job),
            (Json{{"rota.dev/checkpoint", nullptr}, {"rota.dev/checkpoint-timeout", nullptr}}))
      << "a Job that no longer takes part takes its Workload out too";
}

TEST(CheckpointRelayTest, PodsAreAskedWhileARequestIsOpenAndToldWhenItIsWithdrawn) {
  EXPECT_EQ(RequestedAtForPods(WithCondition(nullptr)), std::nullopt);
  Json c = {{"type", "CheckpointRequested"},
            {"status", "True"},
            {"reason", "InClusterQueue"},
            {"message", "m"},
            {"lastTransitionTime", "2026-11-01T10:00:00Z"}};
  EXPECT_EQ(RequestedAtForPods(WithCondition(c)), "2026-11-01T10:00:00Z");
  c["status"] = "False";
  c["reason"] = "Cancelled";
  EXPECT_EQ(RequestedAtForPods(WithCondition(c)), "") << "taken off the pods";
  c["reason"] = "Checkpointed";
  EXPECT_EQ(RequestedAtForPods(WithCondition(c)), std::nullopt) << "the pods are being stopped: left as they are";
}

}  // namespace
}  // namespace rota::controller
