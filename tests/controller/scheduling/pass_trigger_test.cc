#include "scheduling/pass_trigger.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace rota::controller {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Runs PassTrigger::Wait on a thread of its own, on a fake clock.
class PassTriggerTest : public ::testing::Test {
 protected:
  void StartWait(bool last_pass_idle, std::optional<apiclient::Clock::TimePoint> held = std::nullopt) {
    waiter_ = std::thread([=, this] {
      result_ = trigger_.Wait(stop_, last_pass_, last_pass_idle, held);
      returned_ = true;
    });
  }
  // Whether Wait has returned, after giving its thread a moment to act on the last change.
  bool Returned() {
    for (int i = 0; i < 200 && !returned_; ++i) std::this_thread::sleep_for(milliseconds(1));
    return returned_;
  }
  // Moves the fake clock on by `d` in steps no longer than the trigger's stop check.
  void Advance(apiclient::Clock::Duration d) {
    while (d > apiclient::Clock::Duration::zero()) {
      const auto step = std::min<apiclient::Clock::Duration>(d, milliseconds(100));
      // (Wait for the waiter to block on the clock, so that no step is missed.)
      for (int i = 0; i < 1000 && clock_.Waiters() == 0 && !returned_; ++i)
        std::this_thread::sleep_for(milliseconds(1));
      clock_.Advance(step);
      d -= step;
    }
  }
  void TearDown() override {
    stop_ = true;
    clock_.Advance(seconds(10));
    if (waiter_.joinable()) waiter_.join();
  }

  apiclient::FakeClock clock_;
  SchedulingTuning tuning_;
  PassTrigger trigger_{clock_, tuning_};
  apiclient::Clock::TimePoint last_pass_ = clock_.Now();
  std::atomic<bool> stop_{false}, returned_{false};
  std::optional<PassTrigger::Due> result_;
  std::thread waiter_;
};

TEST_F(PassTriggerTest, AnUrgentChangeStartsAPassAtOnce) {
  trigger_.MarkDirty(true);
  StartWait(/*last_pass_idle=*/true);
  ASSERT_TRUE(Returned());
  ASSERT_TRUE(result_.has_value());
  EXPECT_FALSE(result_->idle_wake);
}

TEST_F(PassTriggerTest, AnyChangeStartsAPassAtOnceAfterABusyPass) {
  trigger_.MarkDirty(false);
  StartWait(/*last_pass_idle=*/false);
  EXPECT_TRUE(Returned());
}

// After an idle pass (nothing waits for quota), a workload finishing waits a second for its pass.
TEST_F(PassTriggerTest, AChangeThatCannotDecideWaitsTheIdleIntervalAfterAnIdlePass) {
  trigger_.MarkDirty(false);
  StartWait(/*last_pass_idle=*/true);
  Advance(milliseconds(900));
  EXPECT_FALSE(Returned());
  Advance(milliseconds(100));
  ASSERT_TRUE(Returned());
  EXPECT_TRUE(result_->idle_wake);
}

// An urgent change during the idle wait cuts it short.
TEST_F(PassTriggerTest, AnUrgentChangeCutsTheIdleWaitShort) {
  trigger_.MarkDirty(false);
  StartWait(/*last_pass_idle=*/true);
  Advance(milliseconds(300));
  EXPECT_FALSE(Returned());
  trigger_.MarkDirty(true);
  ASSERT_TRUE(Returned());
  EXPECT_FALSE(result_->idle_wake);
}

// With no change at all, a pass every 5 s retries failed writes.
TEST_F(PassTriggerTest, WithoutChangesAPassComesAfterTheRetryInterval) {
  StartWait(/*last_pass_idle=*/true);
  Advance(milliseconds(4900));
  EXPECT_FALSE(Returned());
  Advance(milliseconds(100));
  EXPECT_TRUE(Returned());
}

// A pending reason due (WakeAt) or a held queue status due (plus its slack) brings the pass forward.
TEST_F(PassTriggerTest, AWakeUpOrAHeldQueueStatusBringsThePassForward) {
  trigger_.WakeAt(last_pass_ + seconds(2));
  StartWait(/*last_pass_idle=*/true, last_pass_ + seconds(3));
  Advance(milliseconds(1900));
  EXPECT_FALSE(Returned());
  Advance(milliseconds(100));
  EXPECT_TRUE(Returned());
}

TEST_F(PassTriggerTest, AHeldQueueStatusComesWithItsSlack) {
  StartWait(/*last_pass_idle=*/true, last_pass_ + seconds(1));
  Advance(milliseconds(1400));
  EXPECT_FALSE(Returned());
  Advance(milliseconds(100));
  EXPECT_TRUE(Returned());
}

TEST_F(PassTriggerTest, StopEndsTheWaitWithoutAPass) {
  StartWait(/*last_pass_idle=*/true);
  stop_ = true;
  Advance(milliseconds(200));  // (the stop flag is looked at every stop check)
  ASSERT_TRUE(Returned());
  EXPECT_FALSE(result_.has_value());
}

}  // namespace
}  // namespace rota::controller
