#include "jobs/pods_ready.h"

#include <gtest/gtest.h>

namespace rota::controller {
namespace {

constexpr int64_t kNow = 1793527200;  // 2026-11-01T10:00:00Z

api::Workload AdmittedAt(const std::string& when, std::optional<int32_t> requeued = std::nullopt) {
  api::Json status = {{"conditions",
                       {{{"type", "Admitted"},
                         {"status", "True"},
                         {"reason", "Admitted"},
                         {"message", ""},
                         {"lastTransitionTime", when}}}}};
  if (requeued) status["requeueState"] = {{"count", *requeued}};
  return *api::DecodeObject<api::Workload>(api::Json{{"metadata", {{"name", "w"}, {"namespace", "ml"}}},
                                                     {"spec", {{"podSets", api::Json::array()}}},
                                                     {"status", status}});
}

TEST(PodsReadyTest, TheTimeoutCountsFromTheAdmission) {
  const api::Workload w = AdmittedAt("2026-11-01T09:58:00Z");
  EXPECT_EQ(PodsReadySecondsLeft(w, std::chrono::minutes(5), kNow), 180);
  EXPECT_EQ(PodsReadySecondsLeft(w, std::chrono::minutes(2), kNow), 0);
}

TEST(PodsReadyTest, TheRequeueBackoffDoublesUpToItsCap) {
  RunConfig c;  // 60 s, at most 3600 s
  EXPECT_EQ(RequeueBackoffSeconds(1, c), 60);
  EXPECT_EQ(RequeueBackoffSeconds(2, c), 120);
  EXPECT_EQ(RequeueBackoffSeconds(6, c), 1920);
  EXPECT_EQ(RequeueBackoffSeconds(7, c), 3600);
  EXPECT_EQ(RequeueBackoffSeconds(60, c), 3600);
}

TEST(PodsReadyTest, AnEvictionRequeuesAfterTheBackoff) {
  RunConfig c;
  const PodsReadyEviction e = EvictForPodsReadyTimeout(AdmittedAt("2026-11-01T09:50:00Z", 1), c, kNow);
  EXPECT_EQ(e.count, 2);
  EXPECT_FALSE(e.deactivate);
  EXPECT_TRUE(e.status["admission"].is_null());
  EXPECT_EQ(e.status["requeueState"]["count"], 2);
  EXPECT_EQ(e.status["requeueState"]["requeueAt"], "2026-11-01T10:02:00Z");  // 120 s on
  bool evicted = false;
  for (const auto& cond : e.status["conditions"]) {
    if (cond["type"] == "Evicted") {
      evicted = true;
      EXPECT_EQ(cond["reason"], "PodsReadyTimeout");
      EXPECT_EQ(cond["lastTransitionTime"], "2026-11-01T10:00:00Z");
    }
    if (cond["type"] == "Requeued") {
      EXPECT_EQ(cond["message"], "Requeued after backoff at 2026-11-01T10:02:00Z");
    }
  }
  EXPECT_TRUE(evicted);
}

TEST(PodsReadyTest, PastTheBackoffLimitTheWorkloadIsDeactivated) {
  RunConfig c;
  c.backoff_limit = 2;
  const PodsReadyEviction e = EvictForPodsReadyTimeout(AdmittedAt("2026-11-01T09:50:00Z", 2), c, kNow);
  EXPECT_TRUE(e.deactivate);
  EXPECT_FALSE(e.status.contains("requeueState"));
  EXPECT_EQ(e.message, "Deactivated: the workload was evicted 3 times for exceeding the PodsReady timeout");
}

}  // namespace
}  // namespace rota::controller
