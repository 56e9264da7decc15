#include "soak/auditor.h"

#include <gtest/gtest.h>

namespace rota::soak {
namespace {

// Team a (nominal 4, borrowingLimit 2) and team b (nominal 4, lendingLimit 1) share cohort c;
// solo (nominal 2) has none.
Limits TestLimits() {
  Limits l;
  l["a"]["f/gpu"] = {"c", 4, 2, std::nullopt};
  l["b"]["f/gpu"] = {"c", 4, std::nullopt, 1};
  l["solo"]["f/gpu"] = {"", 2, std::nullopt, std::nullopt};
  return l;
}

Json Workload(const std::string& name, const std::string& cq, int gpus, const std::string& job_uid,
              bool reserved = true) {
  Json w;
  w["metadata"] = {{"name", name}, {"namespace", "ns"}};
  w["metadata"]["ownerReferences"] = Json::array({{{"kind", "Job"}, {"controller", true}, {"uid", job_uid}}});
  w["status"]["conditions"] = Json::array({{{"type", "QuotaReserved"}, {"status", reserved ? "True" : "False"}}});
  if (reserved) {
    Json assignment = {{"flavors", {{"gpu", "f"}}}, {"resourceUsage", {{"gpu", std::to_string(gpus)}}}};
    w["status"]["admission"] = {{"clusterQueue", cq}, {"podSetAssignments", Json::array({assignment})}};
  }
  return w;
}

Json Pod(const std::string& name, const std::string& uid, const std::string& job_uid, const std::string& phase) {
  Json p;
  p["metadata"] = {{"name", name}, {"namespace", "ns"}, {"uid", uid}};
  p["metadata"]["ownerReferences"] = Json::array({{{"kind", "Job"}, {"controller", true}, {"uid", job_uid}}});
  p["status"]["phase"] = phase;
  return p;
}

TEST(AuditorTest, AdmissionsWithinNominalAndBorrowingAreFine) {
  Auditor a(TestLimits());
  a.OnWorkload(Workload("w1", "a", 4, "j1"), false);
  a.OnWorkload(Workload("w2", "a", 1, "j2"), false);  // borrows the 1 GPU b lends
  a.OnWorkload(Workload("w3", "solo", 2, "j3"), false);
  EXPECT_EQ(a.violation_count(), 0) << a.violations().front();
  EXPECT_EQ(a.admissions(), 3);
}

TEST(AuditorTest, AQueueAboveNominalPlusBorrowingLimitIsAViolation) {
  Auditor a(TestLimits());
  a.OnWorkload(Workload("w1", "a", 4, "j1"), false);
  a.OnWorkload(Workload("w2", "a", 3, "j2"), false);
  ASSERT_EQ(a.violation_count(), 2);
  EXPECT_EQ(a.violations()[0], "ClusterQueue a holds 7 of f/gpu, above nominal 4 + borrowingLimit 2");
  EXPECT_EQ(a.violations()[1], "cohort c has 7 of f/gpu in use from its shared pool of 5; held by ns/w1@a=4 ns/w2@a=3");
}

TEST(AuditorTest, BorrowingMoreThanTheCohortLendsIsAViolation) {
  // b keeps 3 of its 4 for itself and lends 1; a lends all 4: the pool is 5. b's fourth GPU and
  // a's 4 come from the pool: 5 of 5.
  Auditor a(TestLimits());
  a.OnWorkload(Workload("b1", "b", 4, "j1"), false);
  a.OnWorkload(Workload("a1", "a", 4, "j2"), false);
  EXPECT_EQ(a.violation_count(), 0);
  // b borrowing 2 more (6 held, 3 above what it keeps) with a holding 4: 4 + 3 = 7 from a pool of 5.
  a.OnWorkload(Workload("b2", "b", 2, "j3"), false);
  ASSERT_EQ(a.violation_count(), 1);
  EXPECT_EQ(a.violations()[0],
            "cohort c has 7 of f/gpu in use from its shared pool of 5; held by ns/a1@a=4 ns/b1@b=4 ns/b2@b=2");
}

TEST(AuditorTest, ReleasedQuotaIsFreeAgain) {
  Auditor a(TestLimits());
  a.OnWorkload(Workload("s1", "solo", 2, "j1"), false);
  a.OnWorkload(Workload("s1", "solo", 2, "j1", false), false);  // evicted
  a.OnWorkload(Workload("s2", "solo", 2, "j2"), false);
  Json finished = Workload("s2", "solo", 2, "j2");
  finished["status"]["conditions"].push_back({{"type", "Finished"}, {"status", "True"}});
  a.OnWorkload(finished, false);
  a.OnWorkload(Workload("s3", "solo", 2, "j3"), false);
  a.OnWorkload(Workload("s3", "solo", 2, "j3"), true);  // deleted
  a.OnWorkload(Workload("s4", "solo", 2, "j4"), false);
  EXPECT_EQ(a.violation_count(), 0) << a.violations().front();
  a.OnWorkload(Workload("s5", "solo", 1, "j5"), false);
  EXPECT_EQ(a.violation_count(), 1);
}

TEST(AuditorTest, AListIsJudgedWholeNotItemByItem) {
  Auditor a(TestLimits());
  a.OnWorkload(Workload("s1", "solo", 2, "j1"), false);
  // Listed after a watch could not resume: s1 gave its quota back and s2 took it. Taken item by
  // item, s2 before s1 would pass through 4 GPUs held in a queue of 2.
  a.ReplaceWorkloads({Workload("s2", "solo", 2, "j2"), Workload("s1", "solo", 2, "j1", false)});
  EXPECT_EQ(a.violation_count(), 0);
  EXPECT_EQ(a.admissions(), 2);
  a.ReplaceWorkloads({Workload("s2", "solo", 2, "j2"), Workload("s3", "solo", 1, "j3")});
  ASSERT_EQ(a.violation_count(), 1);
  EXPECT_EQ(a.violations()[0], "ClusterQueue solo holds 3 of f/gpu, above its nominal 2 and in no cohort");
}

TEST(AuditorTest, TwoAdmittedWorkloadsOfOneJobAreAViolation) {
  Auditor a(TestLimits());
  a.OnWorkload(Workload("w1", "a", 1, "job"), false);
  a.OnWorkload(Workload("w2", "b", 1, "job"), false);
  ASSERT_EQ(a.violation_count(), 1);
  EXPECT_EQ(a.violations()[0], "Job job has two Workloads admitted at once: ns/w1 and ns/w2");
}

TEST(AuditorTest, UnknownQueuesAndResourcesAreViolations) {
  Auditor a(TestLimits());
  a.OnWorkload(Workload("w1", "elsewhere", 1, "j1"), false);
  Json other = Workload("w2", "a", 1, "j2");
  other["status"]["admission"]["podSetAssignments"][0]["flavors"]["gpu"] = "g";
  a.OnWorkload(other, false);
  ASSERT_EQ(a.violation_count(), 2);
  EXPECT_EQ(a.violations()[0], "a Workload was admitted to unknown ClusterQueue elsewhere");
  EXPECT_EQ(a.violations()[1], "ClusterQueue a admitted 1 of g/gpu, which it has no quota for");
}

TEST(AuditorTest, APodRunningAcrossAListWithoutAdmissionIsAViolation) {
  Auditor a(TestLimits());
  // (p4's Job has no Workload: it is being deleted, and its pods go with it.)
  const std::vector<Json> pods = {Pod("p1", "u1", "j1", "Running"), Pod("p2", "u2", "j2", "Running"),
                                  Pod("p3", "u3", "j3", "Succeeded"), Pod("p4", "u4", "j4", "Running")};
  const std::vector<Json> workloads = {Workload("w1", "a", 1, "j1"), Workload("w2", "a", 1, "j2", false),
                                       Workload("w3", "a", 1, "j3", false)};
  a.CheckPods(pods, workloads, pods);
  ASSERT_EQ(a.violation_count(), 1);
  EXPECT_EQ(a.violations()[0], "pod ns/p2 ran while its Job's Workload was not admitted");
  // A pod seen in only one of the two lists may have started or stopped in between: not judged.
  a.CheckPods({}, workloads, pods);
  Json deleting = Pod("p2", "u2", "j2", "Running");
  deleting["metadata"]["deletionTimestamp"] = "2026-11-26T00:00:00Z";
  a.CheckPods(pods, workloads, {deleting});
  EXPECT_EQ(a.violation_count(), 1);
}

TEST(AuditorTest, SuspendingAJobWhoseWorkloadStillHoldsQuotaIsAViolation) {
  Auditor a(TestLimits());
  auto job = [](const std::string& uid, bool suspend) {
    Json j;
    j["metadata"] = {{"name", "job-" + uid}, {"namespace", "ns"}, {"uid", uid}};
    j["spec"]["suspend"] = suspend;
    return j;
  };
  const auto t0 = std::chrono::steady_clock::now();
  const auto grace = std::chrono::seconds(2);
  // Evicted, then suspended: as it should be, whichever watch event comes first.
  a.OnWorkload(Workload("w1", "a", 1, "j1"), false);
  a.OnJob(job("j1", false), t0);
  a.OnJob(job("j1", true), t0);
  a.OnWorkload(Workload("w1", "a", 1, "j1", false), false);
  // Evicted but holding its quota while its pods stop: suspended, as it should be.
  Json evicting = Workload("w3", "a", 1, "j3");
  evicting["status"]["conditions"].push_back({{"type", "Evicted"}, {"status", "True"}});
  a.OnWorkload(evicting, false);
  a.OnJob(job("j3", false), t0);
  a.OnJob(job("j3", true), t0);
  // Suspended while admitted: a stale leader's write.
  a.OnWorkload(Workload("w2", "a", 1, "j2"), false);
  a.OnJob(job("j2", false), t0);
  a.OnJob(job("j2", true), t0);
  a.CheckSuspended(t0 + std::chrono::seconds(1), grace);
  EXPECT_EQ(a.violation_count(), 0) << "not judged before the grace has passed";
  a.CheckSuspended(t0 + std::chrono::seconds(3), grace);
  ASSERT_EQ(a.violation_count(), 1);
  EXPECT_EQ(a.violations()[0], "Job ns/job-j2 was suspended while its Workload held quota and was not evicted");
}

TEST(AuditorTest, EveryJobMustFinishOnceWithOneFinishedWorkload) {
  Auditor a(TestLimits());
  auto job = [](const std::string& name, const std::string& uid, int succeeded, bool complete) {
    Json conditions = Json::array();
    if (complete) conditions.push_back({{"type", "Complete"}, {"status", "True"}});
    return Json{{"metadata", {{"name", name}, {"uid", uid}}},
                {"spec", {{"completions", 2}}},
                {"status", {{"succeeded", succeeded}, {"conditions", conditions}}}};
  };
  Json finished = Workload("w-ok", "a", 1, "u-ok", false);
  finished["status"]["conditions"].push_back({{"type", "Finished"}, {"status", "True"}});
  Json finished2 = finished;
  finished2["metadata"]["ownerReferences"][0]["uid"] = "u-two";
  const std::vector<Json> jobs = {job("ok", "u-ok", 2, true), job("short", "u-short", 1, false),
                                  job("two", "u-two", 2, true)};
  a.CheckFinished({"ok", "short", "two", "gone"}, jobs, {finished, finished2, finished2});
  const auto v = a.violations();
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0], "Job short did not finish exactly once: 1 of 2 pods succeeded, Complete=False");
  EXPECT_EQ(v[1], "Job short has 0 Workloads, not one");
  EXPECT_EQ(v[2], "Job two has 2 Workloads, not one");
  EXPECT_EQ(v[3], "Job gone was lost");
}

TEST(AuditorTest, ARecoveryAboveTheLimitIsAViolationAndTheWorstIsKept) {
  Auditor a(TestLimits());
  a.Recovered("proxy cut", std::chrono::milliseconds(800), std::chrono::seconds(10));
  a.Recovered("proxy cut", std::chrono::milliseconds(1200), std::chrono::seconds(10));
  EXPECT_EQ(a.violation_count(), 0);
  a.Recovered("kill", std::chrono::milliseconds(12000), std::chrono::seconds(10));
  EXPECT_EQ(a.violation_count(), 1);
  EXPECT_EQ(a.worst_recovery().at("proxy cut"), std::chrono::milliseconds(1200));
}

}  // namespace
}  // namespace rota::soak
