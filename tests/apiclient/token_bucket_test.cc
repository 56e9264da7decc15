// The token bucket behind the client's and the Event recorder's rate limits, on a fake clock.

#include <gtest/gtest.h>

#include "rota/apiclient/clock.h"

namespace rota::apiclient {
namespace {

using namespace std::chrono_literals;

TEST(TokenBucketTest, SpendsTheBurstThenWaitsOneTokenAtATime) {
  FakeClock clock;
  TokenBucket bucket(clock, 10, 2);
  EXPECT_EQ(bucket.Reserve(), 0ns);
  EXPECT_EQ(bucket.Reserve(), 0ns);
  EXPECT_EQ(bucket.Reserve(), 100ms);
  EXPECT_EQ(bucket.Reserve(), 200ms);  // reserved behind the one before
  clock.Advance(1s);                   // pays both back, and saves up to the burst only
  EXPECT_EQ(bucket.Reserve(), 0ns);
  EXPECT_EQ(bucket.Reserve(), 0ns);
  EXPECT_EQ(bucket.Reserve(), 100ms);
}

TEST(TokenBucketTest, ANewRateAppliesFromWhenItIsSet) {
  FakeClock clock;
  TokenBucket bucket(clock, 10, 1);
  EXPECT_EQ(bucket.Reserve(), 0ns);
  bucket.SetRate(1);
  EXPECT_EQ(bucket.rate(), 1);
  EXPECT_EQ(bucket.Reserve(), 1s);  // one a second now, not one every 100 ms
  clock.Advance(1s);
  bucket.SetRate(10);  // the second before it refilled at one a second: still one token short
  EXPECT_EQ(bucket.Reserve(), 100ms);
  clock.Advance(200ms);
  EXPECT_EQ(bucket.Reserve(), 0ns);
}

TEST(TokenBucketTest, ZeroMeansNoLimitAndALimitSetLaterStartsWithAFullBurst) {
  FakeClock clock;
  TokenBucket bucket(clock, 0, 2);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(bucket.Reserve(), 0ns);
  bucket.SetRate(5);
  EXPECT_EQ(bucket.Reserve(), 0ns);
  EXPECT_EQ(bucket.Reserve(), 0ns);
  EXPECT_EQ(bucket.Reserve(), 200ms);
}

}  // namespace
}  // namespace rota::apiclient
