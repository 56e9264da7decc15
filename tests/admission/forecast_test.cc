// Start-time forecasts: the queue run forward on a virtual clock (admission/forecast.h).

#include "rota/admission/forecast.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rota::admission {
namespace {

constexpr int64_t kGpu = 1000;
const std::string kGpuName = "nvidia.com/gpu";
constexpr int64_t kNow = 1'000'000;

ClusterQueueSpec GpuQueue(const std::string& name, int64_t gpus, const std::string& cohort = "") {
  ClusterQueueSpec q;
  q.name = name;
  q.cohort = cohort;
  ResourceGroupSpec g;
  g.covered_resources = {kGpuName};
  g.flavors.push_back({"a100", {{kGpuName, gpus * kGpu, std::nullopt, std::nullopt}}});
  q.resource_groups = {g};
  return q;
}

WorkloadSpec Waiting(const std::string& key, int64_t gpus, int64_t created, int32_t priority = 0,
                     const std::string& cq = "team") {
  WorkloadSpec w;
  w.key = key;
  w.cluster_queue = cq;
  w.priority = priority;
  w.creation_time = created;
  PodSetSpec ps;
  ps.per_pod[kGpuName] = gpus * kGpu;
  w.pod_sets = {ps};
  return w;
}

WorkloadSpec Running(const std::string& key, int64_t gpus, int64_t admitted_at, int32_t priority = 0,
                     const std::string& cq = "team") {
  WorkloadSpec w = Waiting(key, gpus, admitted_at - 10, priority, cq);
  w.admission = AdmissionSpec{cq, {{"main", 1, {{kGpuName, "a100"}}, {{kGpuName, gpus * kGpu}}}}};
  w.admission_time = admitted_at;
  return w;
}

struct Case {
  Snapshot snapshot;
  std::vector<int64_t> run_time;
  void Add(WorkloadSpec w, int64_t run) {
    snapshot.workloads.push_back(std::move(w));
    run_time.push_back(run);
  }
  int64_t StartOf(const Forecast& f, const std::string& key) const {
    for (size_t i = 0; i < snapshot.workloads.size(); ++i)
      if (snapshot.workloads[i].key == key) return f.start[i];
    ADD_FAILURE() << "no workload " << key;
    return -2;
  }
};

Case FourGpuQueue() {
  Case c;
  c.snapshot.flavors = {{"a100", {}, {}}};
  c.snapshot.cluster_queues = {GpuQueue("team", 4)};
  c.snapshot.now = kNow;
  return c;
}

TEST(Forecast, StartsFollowReleasesInQueueOrder) {
  Case c = FourGpuQueue();
  c.Add(Running("ns/r1", 2, kNow - 100), 600);   // ends kNow + 500
  c.Add(Running("ns/r2", 2, kNow - 100), 1100);  // ends kNow + 1000
  c.Add(Waiting("ns/a", 2, kNow - 50), 300);     // first release: kNow + 500, ends kNow + 800
  c.Add(Waiting("ns/b", 4, kNow - 40), 100);     // needs all four GPUs
  c.Add(Waiting("ns/c", 2, kNow - 30), 500);     // BestEffortFIFO: takes what b cannot use
  const Forecast f = ForecastStarts(c.snapshot, c.run_time);
  EXPECT_EQ(c.StartOf(f, "ns/a"), kNow + 500);
  EXPECT_EQ(c.StartOf(f, "ns/c"), kNow + 800);
  EXPECT_EQ(c.StartOf(f, "ns/b"), kNow + 1300);   // once c (kNow + 1300) and r2 (kNow + 1000) end
  EXPECT_EQ(c.StartOf(f, "ns/r1"), kNoEstimate);  // already running
  EXPECT_FALSE(f.hit_horizon);
  EXPECT_FALSE(f.hit_max_passes);
}

TEST(Forecast, StrictFifoHoldsTheQueueBehindItsHead) {
  Case c = FourGpuQueue();
  c.snapshot.cluster_queues[0].queueing_strategy = QueueingStrategy::kStrictFIFO;
  c.Add(Running("ns/r1", 2, kNow - 100), 600);
  c.Add(Running("ns/r2", 2, kNow - 100), 1100);
  c.Add(Waiting("ns/b", 4, kNow - 40), 100);
  c.Add(Waiting("ns/c", 2, kNow - 30), 500);
  const Forecast f = ForecastStarts(c.snapshot, c.run_time);
  EXPECT_EQ(c.StartOf(f, "ns/b"), kNow + 1000);
  EXPECT_EQ(c.StartOf(f, "ns/c"), kNow + 1100);
}

TEST(Forecast, AWorkloadThatOverranItsRunTimeIsExpectedToEndNow) {
  Case c = FourGpuQueue();
  c.Add(Running("ns/late", 4, kNow - 5000), 600);
  c.Add(Waiting("ns/a", 4, kNow - 50), 300);
  const Forecast f = ForecastStarts(c.snapshot, c.run_time);
  EXPECT_EQ(c.StartOf(f, "ns/a"), kNow);
}

TEST(Forecast, NoEstimateBehindARunOfUnknownLength) {
  Case c = FourGpuQueue();
  c.Add(Running("ns/forever", 4, kNow - 100), kUnknownRunTime);
  c.Add(Waiting("ns/a", 1, kNow - 50), 300);
  const Forecast f = ForecastStarts(c.snapshot, c.run_time);
  EXPECT_EQ(c.StartOf(f, "ns/a"), kNoEstimate);
  EXPECT_FALSE(f.hit_horizon);
}

TEST(Forecast, AStartedWorkloadOfUnknownRunTimeBlocksThoseBehindIt) {
  Case c = FourGpuQueue();
  c.Add(Running("ns/r", 4, kNow - 100), 200);
  c.Add(Waiting("ns/a", 4, kNow - 50), kUnknownRunTime);
  c.Add(Waiting("ns/b", 4, kNow - 40), 100);
  const Forecast f = ForecastStarts(c.snapshot, c.run_time);
  EXPECT_EQ(c.StartOf(f, "ns/a"), kNow + 100);
  EXPECT_EQ(c.StartOf(f, "ns/b"), kNoEstimate);
}

TEST(Forecast, StopsAtTheHorizon) {
  Case c = FourGpuQueue();
  c.Add(Running("ns/r", 4, kNow), 3600);
  c.Add(Waiting("ns/a", 4, kNow - 50), 7200);
  c.Add(Waiting("ns/b", 4, kNow - 40), 100);
  const Forecast f = ForecastStarts(c.snapshot, c.run_time, ForecastLimits{.horizon = 2 * 3600});
  EXPECT_EQ(c.StartOf(f, "ns/a"), kNow + 3600);
  EXPECT_EQ(c.StartOf(f, "ns/b"), kNoEstimate);  // kNow + 10800 is past the horizon
  EXPECT_TRUE(f.hit_horizon);
}

TEST(Forecast, StopsAtItsPassLimit) {
  Case c = FourGpuQueue();
  c.Add(Running("ns/r", 4, kNow), 10);
  for (int i = 0; i < 5; ++i) c.Add(Waiting("ns/w" + std::to_string(i), 4, kNow - 50 + i), 10);
  const Forecast f = ForecastStarts(c.snapshot, c.run_time, ForecastLimits{.max_passes = 3});
  EXPECT_EQ(c.StartOf(f, "ns/w0"), kNow + 10);
  EXPECT_EQ(c.StartOf(f, "ns/w1"), kNow + 20);
  EXPECT_EQ(c.StartOf(f, "ns/w2"), kNoEstimate);
  EXPECT_TRUE(f.hit_max_passes);
}

TEST(Forecast, StopsWhenToldTo) {
  Case c = FourGpuQueue();
  c.Add(Running("ns/r", 4, kNow), 10);
  for (int i = 0; i < 5; ++i) c.Add(Waiting("ns/w" + std::to_string(i), 4, kNow - 50 + i), 10);
  int passes = 0;
  ForecastLimits limits;
  limits.keep_going = [&passes] { return ++passes <= 2; };
  const Forecast f = ForecastStarts(c.snapshot, c.run_time, limits);
  EXPECT_EQ(f.passes, 2u);
  EXPECT_EQ(c.StartOf(f, "ns/w0"), kNow + 10);
  EXPECT_EQ(c.StartOf(f, "ns/w1"), kNoEstimate);
  EXPECT_TRUE(f.hit_max_passes);
}

TEST(Forecast, HigherPriorityStartsNowByPreemption) {
  Case c = FourGpuQueue();
  c.snapshot.cluster_queues[0].within_cluster_queue = WithinClusterQueue::kLowerPriority;
  c.Add(Running("ns/low", 4, kNow - 100, 0), 1000);
  c.Add(Waiting("ns/urgent", 4, kNow - 10, 100), 300);
  c.Add(Waiting("ns/next", 4, kNow - 5, 0), 100);
  const Forecast f = ForecastStarts(c.snapshot, c.run_time);
  EXPECT_EQ(c.StartOf(f, "ns/urgent"), kNow);
  // The victim goes back to its queue, older than "next", and runs its whole run time again.
  EXPECT_EQ(c.StartOf(f, "ns/next"), kNow + 300 + 1000);
}

TEST(Forecast, BorrowedQuotaCountsWhenItIsReleased) {
  Case c;
  c.snapshot.flavors = {{"a100", {}, {}}};
  c.snapshot.cluster_queues = {GpuQueue("team", 2, "all"), GpuQueue("other", 2, "all")};
  c.snapshot.now = kNow;
  c.Add(Running("ns/borrower", 4, kNow - 100, 0, "team"), 400);  // holds both queues' GPUs
  c.Add(Waiting("ns/mine", 2, kNow - 10, 0, "other"), 100);
  const Forecast f = ForecastStarts(c.snapshot, c.run_time);
  EXPECT_EQ(c.StartOf(f, "ns/mine"), kNow + 300);
}

TEST(Forecast, NoEstimateWhereNoReleaseHelps) {
  Case c = FourGpuQueue();
  c.snapshot.cluster_queues[0].stopped = true;
  c.Add(Running("ns/r", 4, kNow), 10);
  c.Add(Waiting("ns/stopped", 1, kNow - 5), 10);
  WorkloadSpec orphan = Waiting("ns/orphan", 1, kNow - 4, 0, "");
  orphan.inadmissible_reason = "Inadmissible";
  c.Add(orphan, 10);
  c.Add(Waiting("ns/too-big", 8, kNow - 3, 0, "team"), 10);
  const Forecast f = ForecastStarts(c.snapshot, c.run_time);
  EXPECT_EQ(c.StartOf(f, "ns/stopped"), kNoEstimate);
  EXPECT_EQ(c.StartOf(f, "ns/orphan"), kNoEstimate);
  EXPECT_EQ(c.StartOf(f, "ns/too-big"), kNoEstimate);
}

TEST(Forecast, NeedsTheSnapshotsTime) {
  Case c = FourGpuQueue();
  c.snapshot.now = 0;
  c.Add(Waiting("ns/a", 1, 5), 10);
  EXPECT_EQ(ForecastStarts(c.snapshot, c.run_time).start[0], kNoEstimate);
}

TEST(Forecast, ManyReleasesCompactTheSimulation) {
  // More finished runs than half the snapshot: the simulation drops them and renumbers, and the
  // starts still come in order, one every ten seconds.
  Case c = FourGpuQueue();
  c.Add(Running("ns/r", 4, kNow), 10);
  for (int i = 0; i < 40; ++i) c.Add(Waiting("ns/w" + std::to_string(100 + i), 4, kNow - 100 + i), 10);
  const Forecast f = ForecastStarts(c.snapshot, c.run_time);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(c.StartOf(f, "ns/w" + std::to_string(100 + i)), kNow + 10 * (i + 1));
}

TEST(Forecast, AWindowOfEachQueueTakesPartAndMoreJoinAsTheyStart) {
  // One GPU at a time through a queue of ten: with a window of two, the later ones join as the
  // earlier ones start, and the starts are what they are without a window.
  Case c = FourGpuQueue();
  c.snapshot.cluster_queues[0].resource_groups[0].flavors[0].resources[0].nominal = kGpu;
  c.Add(Running("ns/r", 1, kNow), 60);
  for (int i = 0; i < 10; ++i) c.Add(Waiting("ns/w" + std::to_string(i), 1, kNow - 100 + i), 60);
  const Forecast windowed = ForecastStarts(c.snapshot, c.run_time, ForecastLimits{.window = 2});
  const Forecast whole = ForecastStarts(c.snapshot, c.run_time, ForecastLimits{.window = 0});
  for (int i = 0; i < 10; ++i) EXPECT_EQ(c.StartOf(windowed, "ns/w" + std::to_string(i)), kNow + 60 * (i + 1));
  EXPECT_EQ(windowed.start, whole.start);
}

TEST(Forecast, AWindowDelaysASmallWorkloadThatWouldSlipIntoAGap) {
  // The documented cost of the window: "small" fits beside the running half at once, but with
  // a window of one it joins only when big2 has started, and starts after it.
  Case c = FourGpuQueue();
  c.Add(Running("ns/r", 2, kNow), 100);
  c.Add(Waiting("ns/big1", 4, kNow - 30), 100);
  c.Add(Waiting("ns/big2", 4, kNow - 20), 100);
  c.Add(Waiting("ns/small", 2, kNow - 10), 50);
  const Forecast whole = ForecastStarts(c.snapshot, c.run_time, ForecastLimits{.window = 0});
  EXPECT_EQ(c.StartOf(whole, "ns/small"), kNow);
  const Forecast windowed = ForecastStarts(c.snapshot, c.run_time, ForecastLimits{.window = 1});
  EXPECT_EQ(c.StartOf(windowed, "ns/small"), kNow + 300);  // after big1, then big2
}

}  // namespace
}  // namespace rota::admission
