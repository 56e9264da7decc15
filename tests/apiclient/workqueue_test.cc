// The work queue and backoff on a fake clock: no sleeps.

#include "rota/apiclient/workqueue.h"

#include <gtest/gtest.h>

#include <future>
#include <thread>

namespace rota::apiclient {
namespace {

using namespace std::chrono_literals;

// Waits (in real time, briefly) until `n` threads are waiting on the fake clock.
void AwaitWaiters(FakeClock& clock, int n) {
  for (int i = 0; i < 2000 && clock.Waiters() < n; ++i) std::this_thread::sleep_for(1ms);
  ASSERT_GE(clock.Waiters(), n);
}

TEST(WorkQueueTest, DeduplicatesWaitingItems) {
  FakeClock clock;
  WorkQueue q(clock);
  q.Add("a");
  q.Add("b");
  q.Add("a");
  EXPECT_EQ(q.Len(), 2u);
  EXPECT_EQ(*q.Get(), "a");
  EXPECT_EQ(*q.Get(), "b");
  EXPECT_EQ(q.Len(), 0u);
}

TEST(WorkQueueTest, AnItemAddedWhileProcessingRunsOnceMoreAfterDone) {
  FakeClock clock;
  WorkQueue q(clock);
  q.Add("a");
  ASSERT_EQ(*q.Get(), "a");
  q.Add("a");  // while processing: not handed out twice at once
  q.Add("a");
  EXPECT_EQ(q.Len(), 0u);
  q.Done("a");
  EXPECT_EQ(q.Len(), 1u);
  EXPECT_EQ(*q.Get(), "a");
  q.Done("a");
  EXPECT_EQ(q.Len(), 0u);
}

TEST(WorkQueueTest, DelayedAddsBecomeReadyWhenTheClockPasses) {
  FakeClock clock;
  WorkQueue q(clock);
  q.AddAfter("later", 10s);
  auto got = std::async(std::launch::async, [&] { return q.Get(); });
  AwaitWaiters(clock, 1);
  clock.Advance(9s);
  EXPECT_EQ(got.wait_for(50ms), std::future_status::timeout);
  clock.Advance(1s);
  ASSERT_EQ(got.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(*got.get(), "later");
}

TEST(WorkQueueTest, RateLimitedRetriesBackOffExponentiallyUntilForgotten) {
  FakeClock clock;
  WorkQueue q(clock, RateLimit{100ms, 1s, 1000, 1000});
  const std::chrono::milliseconds expected[] = {100ms, 200ms, 400ms, 800ms, 1000ms, 1000ms};
  for (auto delay : expected) {
    q.AddRateLimited("x");
    auto got = std::async(std::launch::async, [&] { return q.Get(); });
    AwaitWaiters(clock, 1);
    clock.Advance(delay - 1ms);
    EXPECT_EQ(got.wait_for(50ms), std::future_status::timeout) << delay.count();
    clock.Advance(1ms);
    ASSERT_EQ(got.wait_for(5s), std::future_status::ready) << delay.count();
    q.Done(*got.get());
  }
  EXPECT_EQ(q.NumRequeues("x"), 6);
  q.Forget("x");
  EXPECT_EQ(q.NumRequeues("x"), 0);
}

TEST(WorkQueueTest, OverallBucketLimitsRetriesAcrossItems) {
  FakeClock clock;
  WorkQueue q(clock, RateLimit{1ms, 1s, /*qps=*/10, /*burst=*/2});
  q.AddRateLimited("a");
  q.AddRateLimited("b");
  q.AddRateLimited("c");  // the bucket is empty: 100 ms for the next token
  clock.Advance(1ms);
  EXPECT_EQ(*q.Get(), "a");
  EXPECT_EQ(*q.Get(), "b");
  auto got = std::async(std::launch::async, [&] { return q.Get(); });
  AwaitWaiters(clock, 1);
  clock.Advance(90ms);
  EXPECT_EQ(got.wait_for(50ms), std::future_status::timeout);
  clock.Advance(10ms);
  ASSERT_EQ(got.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(*got.get(), "c");
}

TEST(WorkQueueTest, ShutDownReleasesWaitingWorkersAndDrainWaitsForProcessing) {
  FakeClock clock;
  WorkQueue q(clock);
  auto idle = std::async(std::launch::async, [&] { return q.Get(); });
  std::this_thread::sleep_for(20ms);
  q.Add("busy");
  ASSERT_EQ(idle.wait_for(5s), std::future_status::ready);
  ASSERT_EQ(*idle.get(), "busy");
  auto drained = std::async(std::launch::async, [&] { q.ShutDownWithDrain(); });
  EXPECT_EQ(drained.wait_for(50ms), std::future_status::timeout);  // "busy" is still processing
  EXPECT_FALSE(q.Get().has_value());
  q.Done("busy");
  EXPECT_EQ(drained.wait_for(5s), std::future_status::ready);
  q.Add("late");
  EXPECT_FALSE(q.Get().has_value());
}

TEST(BackoffTest, DoublesUpToTheCapWithJitterAndResets) {
  Backoff b(std::chrono::milliseconds(800), std::chrono::seconds(30), 0.5, 7);
  std::chrono::milliseconds prev{0};
  for (int i = 0; i < 10; ++i) {
    auto d = b.Next();
    const long long base = std::min<long long>(800LL << i, 30000);
    EXPECT_GE(d.count(), base) << i;
    EXPECT_LE(d.count(), base * 3 / 2) << i;
    prev = d;
  }
  b.Reset();
  EXPECT_LE(b.Next().count(), 1200);
}

}  // namespace
}  // namespace rota::apiclient
