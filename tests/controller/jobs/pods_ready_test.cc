#include "jobs/pods_ready.h"

#include <map>

#include "jobs/quota_release.h"

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
  EXPECT_FALSE(e.status.contains("admission")) << "kept until the pods are gone";
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

// The eviction keeps the quota until the Job's pods are gone; the release that follows says
// Requeued=False, as Kueue's: the backoff decides when.
TEST(PodsReadyTest, TheQuotaIsReleasedAfterThePodsWithTheBackoffKept) {
  RunConfig c;
  api::Workload w = AdmittedAt("2026-11-01T09:50:00Z");
  w.status->admission = api::Admission{};
  w.status->admission->cluster_queue = "q";
  const PodsReadyEviction e = EvictForPodsReadyTimeout(w, c, kNow);
  std::map<std::string, api::Json> by_type;
  for (const auto& cond : e.status["conditions"]) by_type[cond["type"]] = cond;
  EXPECT_EQ(by_type["Admitted"]["status"], "True") << "until the pods are gone";
  EXPECT_EQ(by_type["Evicted"]["status"], "True");

  api::Json doc = {{"metadata", {{"name", "w"}, {"namespace", "ml"}, {"resourceVersion", "9"}}},
                   {"spec", {{"podSets", api::Json::array()}}},
                   {"status", e.status}};
  doc["status"]["admission"] = {{"clusterQueue", "q"}, {"podSetAssignments", api::Json::array()}};
  const api::Workload evicted = *api::DecodeObject<api::Workload>(doc);
  ASSERT_TRUE(EvictedHoldingQuota(evicted));
  const api::Json released = QuotaReleasePatch(evicted, "2026-11-01T10:00:30Z");
  EXPECT_TRUE(released["status"]["admission"].is_null());
  for (const auto& cond : released["status"]["conditions"]) {
    if (cond["type"] == "QuotaReserved") EXPECT_EQ(cond["status"], "False");
    if (cond["type"] == "Requeued") {
      EXPECT_EQ(cond["status"], "False") << "the backoff decides when";
      EXPECT_EQ(cond["reason"], "PodsReadyTimeout");
    }
  }
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
