#include "jobs/max_exec_time.h"

#include "jobs/quota_release.h"

#include <gtest/gtest.h>

namespace rota::controller {
namespace {

constexpr int64_t kNow = 1793527200;  // 2026-11-01T10:00:00Z

api::Workload Admitted(const std::string& when, std::optional<int32_t> limit, int64_t past = 0) {
  api::Json spec = {{"podSets", api::Json::array()}};
  if (limit) spec["maximumExecutionTimeSeconds"] = *limit;
  api::Json status = {{"conditions",
                       {{{"type", "Admitted"},
                         {"status", "True"},
                         {"reason", "Admitted"},
                         {"message", ""},
                         {"lastTransitionTime", when}}}},
                      {"admission", {{"clusterQueue", "q"}, {"podSetAssignments", api::Json::array()}}}};
  if (past) status["accumulatedPastExecutionTimeSeconds"] = past;
  return *api::DecodeObject<api::Workload>(
      api::Json{{"metadata", {{"name", "w"}, {"namespace", "ml"}, {"resourceVersion", "42"}}},
                {"spec", spec},
                {"status", status}});
}

TEST(MaxExecTimeTest, CountsFromTheAdmissionAndEarlierRuns) {
  EXPECT_EQ(MaxExecSecondsLeft(Admitted("2026-11-01T09:59:00Z", 600), kNow), 540);
  EXPECT_EQ(MaxExecSecondsLeft(Admitted("2026-11-01T09:59:00Z", 600, 500), kNow), 40);
  EXPECT_EQ(MaxExecSecondsLeft(Admitted("2026-11-01T09:50:00Z", 600), kNow), 0);
  EXPECT_EQ(MaxExecSecondsLeft(Admitted("2026-11-01T09:59:00Z", std::nullopt), kNow), std::nullopt);
}

TEST(MaxExecTimeTest, NotAdmittedHasNoClock) {
  api::Workload w = Admitted("2026-11-01T09:59:00Z", 60);
  w.status->conditions[0].status = api::ConditionStatus::kFalse;
  EXPECT_EQ(MaxExecSecondsLeft(w, kNow), std::nullopt);
}

TEST(MaxExecTimeTest, DeactivationSaysWhyAsKueueDoes) {
  const MaxExecDeactivation d = DeactivateForMaxExecTime(Admitted("2026-11-01T09:58:00Z", 60), kNow);
  EXPECT_EQ(d.message, "The maximum execution time (60s) exceeded");
  EXPECT_FALSE(d.patch["status"].contains("admission")) << "the quota is released once the pods are gone";
  EXPECT_EQ(d.patch["metadata"]["resourceVersion"], "42");
  std::map<std::string, api::Json> by_type;
  for (const auto& c : d.patch["status"]["conditions"]) by_type[c["type"]] = c;
  EXPECT_EQ(by_type["DeactivationTarget"]["reason"], "MaximumExecutionTimeExceeded");
  EXPECT_EQ(by_type["Evicted"]["reason"], "DeactivatedDueToMaximumExecutionTimeExceeded");
  EXPECT_EQ(by_type["Evicted"]["status"], "True");
  EXPECT_EQ(by_type["Admitted"]["status"], "True") << "until the quota is released";
  EXPECT_EQ(by_type["Evicted"]["lastTransitionTime"], "2026-11-01T10:00:00Z");
}

TEST(MaxExecTimeTest, AnEvictionAddsTheRunToThePastExecutionTime) {
  const api::Workload w = Admitted("2026-11-01T09:59:00Z", 600, 100);
  EXPECT_EQ(AccumulatedExecutionSeconds(w, "2026-11-01T10:00:00Z"), 160);
  EXPECT_EQ(QuotaReleasePatch(w, "2026-11-01T10:00:00Z")["status"]["accumulatedPastExecutionTimeSeconds"], 160);
  EXPECT_EQ(AccumulatedExecutionSeconds(Admitted("2026-11-01T09:59:00Z", std::nullopt), "2026-11-01T10:00:00Z"),
            std::nullopt)
      << "without a limit nothing is counted";
}

}  // namespace
}  // namespace rota::controller
