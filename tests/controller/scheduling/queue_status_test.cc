#include "scheduling/queue_status.h"

#include <gtest/gtest.h>

#include "scheduling/queue_tally.h"
#include "small_cluster.h"

namespace rota::controller {
namespace {

using std::chrono::seconds;
using testing::GpuWorkload;
using testing::SmallCluster;

const std::chrono::steady_clock::time_point kT0{std::chrono::hours(1)};

class QueueStatusTest : public ::testing::Test {
 protected:
  // One pass at kT0 + `at` over the cluster with `workloads` (their admissions applied as the
  // engine decides): the queue status writes it calls for.
  std::vector<StatusWriter::Write> Pass(seconds at, std::vector<std::shared_ptr<const api::Workload>> workloads) {
    state_.workloads = std::move(workloads);
    const admission::Decisions d = testing::ScheduleAndApply(state_, builder_, workspace_);
    const QueueTally::Result tally = tally_.Count(builder_, d);
    ++pass_;
    return status_.Writes(state_, tally, {pass_, kT0 + at, "2026-11-01T10:00:00Z", seconds(3)});
  }
  static int Pending(const StatusWriter::Write& w) { return w.body["status"]["pendingWorkloads"].get<int>(); }

  SchedulingTuning tuning_;
  QueueTally tally_{tuning_};
  QueueStatus status_;
  api::ClusterState state_ = SmallCluster();
  api::SnapshotBuilder builder_;
  admission::Workspace workspace_;
  uint64_t pass_ = 0;
};

TEST_F(QueueStatusTest, ABusyQueuesStatusIsHeldUntilItsIntervalIsUp) {
  auto a = GpuWorkload("a", "2026-11-01T09:00:00Z"), b = GpuWorkload("b", "2026-11-01T09:00:01Z"),
       c = GpuWorkload("c", "2026-11-01T09:00:02Z");
  std::vector<StatusWriter::Write> first = Pass(seconds(0), {a, b});
  ASSERT_EQ(first.size(), 2u);  // the ClusterQueue and the LocalQueue
  EXPECT_EQ(first[0].kind, "clusterqueues");
  EXPECT_EQ(first[0].body["status"]["admittedWorkloads"], 1);
  EXPECT_EQ(Pending(first[0]), 1);
  EXPECT_EQ(first[1].kind, "localqueues");
  EXPECT_EQ(first[1].ns, "ml");
  // One more pending a second later: held until 3 s after the last write.
  EXPECT_TRUE(Pass(seconds(1), {a, b, c}).empty());
  EXPECT_EQ(status_.NextHeld(kT0 + seconds(1)), kT0 + seconds(3));
  std::vector<StatusWriter::Write> due = Pass(seconds(3), {a, b, c});
  ASSERT_EQ(due.size(), 2u);
  EXPECT_EQ(Pending(due[0]), 2);
  EXPECT_FALSE(status_.NextHeld(kT0 + seconds(3)).has_value());
}

// A queue that drains is written at once: that it is empty is what people and tools wait for.
TEST_F(QueueStatusTest, AQueueThatBecomesIdleIsWrittenAtOnce) {
  ASSERT_EQ(Pass(seconds(0), {GpuWorkload("a", "2026-11-01T09:00:00Z")}).size(), 2u);
  std::vector<StatusWriter::Write> idle = Pass(seconds(1), {});
  ASSERT_EQ(idle.size(), 2u);
  EXPECT_EQ(idle[0].body["status"]["admittedWorkloads"], 0);
}

TEST_F(QueueStatusTest, TheActiveConditionNamesMissingFlavors) {
  state_.flavors.clear();
  std::vector<StatusWriter::Write> w = Pass(seconds(0), {});
  ASSERT_FALSE(w.empty());
  const api::Json& active = w[0].body["status"]["conditions"][0];
  EXPECT_EQ(active["status"], "False");
  EXPECT_EQ(active["reason"], "FlavorNotFound");
  EXPECT_EQ(active["message"], "Can't admit new workloads: references missing ResourceFlavor(s): gpu");
}

// A ClusterQueue whose spec rota cannot read (the cache keeps it with the reason) says so in its
// Active condition, and its workloads wait with the reason instead of the queue vanishing.
TEST_F(QueueStatusTest, AnUnusableClusterQueueSaysWhyInItsStatusAndItsWorkloads) {
  const std::string why =
      "ClusterQueue \"team\": spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: "
      "\"10P\" is too large";
  state_.cluster_queues[0].spec = api::ClusterQueueSpec{};
  state_.cluster_queues[0].unusable = why;
  state_.keep_going = true;
  state_.workloads = {GpuWorkload("a", "2026-11-01T09:00:00Z")};
  const admission::Decisions d = testing::ScheduleAndApply(state_, builder_, workspace_);
  EXPECT_TRUE(d.admitted.empty());
  ASSERT_EQ(d.pending.size(), 1u);
  EXPECT_EQ(d.pending[0].reason, "Inadmissible");
  EXPECT_EQ(d.pending[0].message, "ClusterQueue team is inactive: rota cannot use its spec: " + why);
  const QueueTally::Result tally = tally_.Count(builder_, d);
  std::vector<StatusWriter::Write> w = status_.Writes(state_, tally, {1, kT0, "2026-11-01T10:00:00Z", seconds(3)});
  ASSERT_FALSE(w.empty());
  const api::Json& active = w[0].body["status"]["conditions"][0];
  EXPECT_EQ(active["status"], "False");
  EXPECT_EQ(active["reason"], "InvalidSpec");
  EXPECT_EQ(active["message"], "Can't admit new workloads: rota cannot use its spec: " + why);
}

}  // namespace
}  // namespace rota::controller
