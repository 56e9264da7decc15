#include <gtest/gtest.h>

#include <chrono>

#include "scheduling/pacing.h"

namespace rota::controller {
namespace {

using std::chrono::milliseconds;

// The scheduler waits its batch period after a change, longer only after a costly pass.
TEST(BatchWaitTest, StretchesWithThePassCostUpToACap) {
  // A small cluster's pass costs far less than the period: the period stands.
  EXPECT_EQ(BatchWait(milliseconds(100), std::chrono::microseconds(300)), milliseconds(100));
  EXPECT_EQ(BatchWait(milliseconds(100), std::chrono::nanoseconds(0)), milliseconds(100));
  // A deep backlog's 12 ms pass: 20 times that before the next one.
  EXPECT_EQ(BatchWait(milliseconds(100), milliseconds(12)), milliseconds(240));
  // However costly the pass, a pass at least every 2 s.
  EXPECT_EQ(BatchWait(milliseconds(100), milliseconds(900)), milliseconds(2000));
  // A configured period longer than that cap is kept.
  EXPECT_EQ(BatchWait(milliseconds(5000), milliseconds(900)), milliseconds(5000));
}

// scheduling.cpuShare sets how many times a pass's CPU the loop waits.
TEST(BatchWaitTest, TheCpuShareSetsTheStretch) {
  EXPECT_EQ(BatchWait(milliseconds(100), milliseconds(12), 1.0 / 41), milliseconds(480));  // 40 times
  EXPECT_EQ(BatchWait(milliseconds(100), milliseconds(12), 0.5), milliseconds(100));       // once: the period stands
  EXPECT_EQ(BatchWait(milliseconds(10), milliseconds(12), 1.0), milliseconds(10));         // no stretch at all
}

// Queue status: every 3 s per queue while busy, and with many queues no more than 50 writes a
// second for all of them together.
TEST(QueueStatusIntervalTest, ThreeSecondsOrFiftyWritesASecondForAllQueues) {
  using std::chrono::seconds;
  EXPECT_EQ(QueueStatusInterval(0), seconds(3));
  EXPECT_EQ(QueueStatusInterval(60), seconds(3));  // Kueue's baseline: 30 ClusterQueues, 30 LocalQueues
  EXPECT_EQ(QueueStatusInterval(150), seconds(3));
  EXPECT_EQ(QueueStatusInterval(300), seconds(6));
  EXPECT_EQ(QueueStatusInterval(2000), seconds(40));  // its large scale: 1,000 of each
}

// While the apiserver is behind on admissions, 25 writes a second for all queues together: a
// small cluster's queues are still written every 3 s.
TEST(QueueStatusIntervalTest, HalfTheWritesWhileTheApiserverIsBehind) {
  using std::chrono::seconds;
  EXPECT_EQ(QueueStatusInterval(60, true), seconds(3));
  EXPECT_EQ(QueueStatusInterval(75, true), seconds(3));
  EXPECT_EQ(QueueStatusInterval(150, true), seconds(6));
  EXPECT_EQ(QueueStatusInterval(2000, true), seconds(80));
}

// The apiserver is behind from the first wait of a second or more for the writer to take a pass's
// admissions, until 30 s have gone by without another.
TEST(ApiserverBehindTest, BehindAfterALongWaitForTheWriterUntil30sWithoutOne) {
  using std::chrono::milliseconds;
  using std::chrono::seconds;
  const std::chrono::steady_clock::time_point t0{seconds(100)};
  ApiserverBehind a;
  EXPECT_FALSE(a.behind());
  EXPECT_FALSE(a.Observe(milliseconds(0), t0));
  EXPECT_FALSE(a.Observe(milliseconds(999), t0 + seconds(1)));  // a pass's worth of writes, sent in time
  EXPECT_TRUE(a.Observe(milliseconds(1000), t0 + seconds(3)));
  EXPECT_TRUE(a.behind());
  EXPECT_TRUE(a.Observe(milliseconds(0), t0 + seconds(32)));     // within 30 s of the long wait
  EXPECT_TRUE(a.Observe(milliseconds(2500), t0 + seconds(40)));  // a long wait again: 30 s more
  EXPECT_TRUE(a.Observe(milliseconds(0), t0 + seconds(69)));
  EXPECT_FALSE(a.Observe(milliseconds(0), t0 + seconds(70)));
  EXPECT_FALSE(a.behind());
}

}  // namespace
}  // namespace rota::controller
