#include "scheduling/heartbeat.h"

#include <gtest/gtest.h>

namespace rota::controller {
namespace {

using std::chrono::seconds;
const Heartbeat::TimePoint kStart(std::chrono::hours(5));

TEST(HeartbeatTest, AFollowerThatNeverRanTheLoopIsNotStalled) {
  Heartbeat h;
  EXPECT_FALSE(h.Stalled(kStart + std::chrono::hours(10), seconds(60)));
}

TEST(HeartbeatTest, QuietLongerThanTheLimitIsStalledForThatLong) {
  Heartbeat h;
  h.Beat(kStart);
  EXPECT_FALSE(h.Stalled(kStart + seconds(60), seconds(60)));
  auto stalled = h.Stalled(kStart + seconds(75), seconds(60));
  ASSERT_TRUE(stalled);
  EXPECT_EQ(std::chrono::duration_cast<seconds>(*stalled), seconds(75));
  h.Beat(kStart + seconds(76));
  EXPECT_FALSE(h.Stalled(kStart + seconds(80), seconds(60)));
}

TEST(HeartbeatTest, ALoopThatStoppedIsNotStalled) {
  Heartbeat h;
  h.Beat(kStart);
  h.Stop();
  EXPECT_FALSE(h.Stalled(kStart + std::chrono::hours(1), seconds(60)));
}

}  // namespace
}  // namespace rota::controller
