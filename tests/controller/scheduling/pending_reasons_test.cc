#include "scheduling/pending_reasons.h"

#include <gtest/gtest.h>

#include "small_cluster.h"

namespace rota::controller {
namespace {

using std::chrono::seconds;
using testing::GpuWorkload;
using testing::SmallCluster;

// The wall time of the tests' passes, and the loop's clock at the first one.
constexpr int64_t kNow = 1793527200;  // 2026-11-01T10:00:00Z
const std::chrono::steady_clock::time_point kT0{std::chrono::hours(1)};

class PendingReasonsTest : public ::testing::Test {
 protected:
  // One pass over `state` at kT0 + `at`, with room for `room` reasons.
  PendingReasons::Result Pass(seconds at, size_t room = 500) {
    EXPECT_TRUE(builder_.Build(state_).ok());
    admission::Decisions d = admission::Schedule(builder_.snapshot(), workspace_);
    const int64_t now = kNow + at.count();
    return reasons_.Decide(d, builder_, assumed_, kT0 + at, now, api::FormatTime(now), room);
  }
  static std::string ReasonOf(const WorkloadWrite& w) {
    return w.body["status"]["conditions"][0]["reason"].get<std::string>();
  }

  SchedulingTuning tuning_;
  PendingReasons reasons_{tuning_};
  AssumedAdmissions assumed_;
  api::ClusterState state_ = SmallCluster();
  api::SnapshotBuilder builder_;
  admission::Workspace workspace_;
};

// "a" holds the one GPU; "b" heads the queue waiting for quota and gets its reason once it has
// been the head for 2 s; "c" behind it gets none.
TEST_F(PendingReasonsTest, TheHeadOfAQueueGetsItsReasonAfterTwoSecondsAndTheRestNone) {
  state_.workloads = {GpuWorkload("a", "2026-11-01T09:00:00Z"), GpuWorkload("b", "2026-11-01T09:00:01Z"),
                      GpuWorkload("c", "2026-11-01T09:00:02Z")};
  PendingReasons::Result first = Pass(seconds(0));
  EXPECT_TRUE(first.writes.empty());
  ASSERT_TRUE(first.wake.has_value());
  EXPECT_EQ(*first.wake, kT0 + seconds(2));
  EXPECT_TRUE(Pass(seconds(1)).writes.empty());
  PendingReasons::Result due = Pass(seconds(2));
  ASSERT_EQ(due.writes.size(), 1u);
  EXPECT_EQ(due.writes[0].name, "b");
  EXPECT_EQ(ReasonOf(due.writes[0]), "WaitingForQuota");
  EXPECT_EQ(due.first, 1);
}

// A new head starts its own 2 s.
TEST_F(PendingReasonsTest, ANewHeadWaitsItsOwnDelay) {
  state_.workloads = {GpuWorkload("a", "2026-11-01T09:00:00Z"), GpuWorkload("b", "2026-11-01T09:00:01Z")};
  EXPECT_TRUE(Pass(seconds(0)).writes.empty());
  state_.workloads = {GpuWorkload("a", "2026-11-01T09:00:00Z"), GpuWorkload("c", "2026-11-01T09:00:02Z")};
  PendingReasons::Result changed = Pass(seconds(1));
  EXPECT_TRUE(changed.writes.empty());
  EXPECT_EQ(*changed.wake, kT0 + seconds(3));
  EXPECT_EQ(Pass(seconds(3)).writes.size(), 1u);
}

// A reason queued is not queued again while it is on its way back (5 s), and is again after.
TEST_F(PendingReasonsTest, AQueuedReasonIsNotQueuedAgainWhileItSettles) {
  state_.workloads = {GpuWorkload("a", "2026-11-01T09:00:00Z"), GpuWorkload("b", "2026-11-01T09:00:01Z")};
  (void)Pass(seconds(0));
  EXPECT_EQ(Pass(seconds(2)).writes.size(), 1u);
  EXPECT_TRUE(Pass(seconds(6)).writes.empty());
  EXPECT_EQ(Pass(seconds(7)).writes.size(), 1u);  // never seen back: written again
}

// A failed write makes the reason new again at once.
TEST_F(PendingReasonsTest, AForgottenReasonIsWrittenAgainAtOnce) {
  state_.workloads = {GpuWorkload("a", "2026-11-01T09:00:00Z"), GpuWorkload("b", "2026-11-01T09:00:01Z")};
  (void)Pass(seconds(0));
  EXPECT_EQ(Pass(seconds(2)).writes.size(), 1u);
  reasons_.Forget("ml/b");
  EXPECT_EQ(Pass(seconds(3)).writes.size(), 1u);
}

// A reason particular to the workload is written whatever its place, but a new workload's first
// reason waits 2 s after its creation.
TEST_F(PendingReasonsTest, AnInadmissibleWorkloadGetsItsReasonOnceItIsTwoSecondsOld) {
  state_.workloads = {GpuWorkload("old", "2026-11-01T09:00:00Z", "nosuchqueue"),
                      GpuWorkload("new", "2026-11-01T10:00:00Z", "nosuchqueue")};
  PendingReasons::Result first = Pass(seconds(0));
  ASSERT_EQ(first.writes.size(), 1u);
  EXPECT_EQ(first.writes[0].name, "old");
  EXPECT_NE(ReasonOf(first.writes[0]), "WaitingForQuota");
  EXPECT_EQ(*first.wake, kT0 + seconds(2));
  PendingReasons::Result later = Pass(seconds(2));
  ASSERT_EQ(later.writes.size(), 1u);
  EXPECT_EQ(later.writes[0].name, "new");
}

// With no room in the writer, nothing is queued and the loop comes back in a second.
TEST_F(PendingReasonsTest, NoRoomMeansTryAgainInASecond) {
  state_.workloads = {GpuWorkload("old", "2026-11-01T09:00:00Z", "nosuchqueue")};
  PendingReasons::Result full = Pass(seconds(0), /*room=*/0);
  EXPECT_TRUE(full.writes.empty());
  EXPECT_EQ(*full.wake, kT0 + seconds(1));
  EXPECT_EQ(Pass(seconds(1)).writes.size(), 1u);
}

// A workload whose eviction we have not seen back gets no reason built on its stale conditions.
TEST_F(PendingReasonsTest, AnAssumedWorkloadGetsNoReason) {
  state_.workloads = {GpuWorkload("old", "2026-11-01T09:00:00Z", "nosuchqueue")};
  assumed_.Assume("ml/old", std::nullopt, 1);
  EXPECT_TRUE(Pass(seconds(0)).writes.empty());
}

}  // namespace
}  // namespace rota::controller
