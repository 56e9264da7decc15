// Admission fair sharing's decay: Kueue's rule, new = old x (1 - a) + now x a with
// a = 1 - 0.5^(elapsed / half-life).

#include "fairsharing/admission_usage.h"

#include <gtest/gtest.h>

namespace rota::controller {
namespace {

TEST(DecayedUsageTest, HalvesTheOldUsageEveryHalfLife) {
  api::LocalQueueUsage old{{{"nvidia.com/gpu", 8}}, 1000};
  // One half-life later, holding 2 GPUs: half of 8 plus half of 2.
  api::LocalQueueUsage u = DecayedUsage(old, {{"nvidia.com/gpu", 2}}, 1600, 600);
  EXPECT_DOUBLE_EQ(u.consumed["nvidia.com/gpu"], 5);
  EXPECT_EQ(u.last_update, 1600);
  // Two half-lives, a new resource: a quarter of the old, three quarters of the new.
  u = DecayedUsage(old, {{"cpu", 4}}, 2200, 600);
  EXPECT_DOUBLE_EQ(u.consumed["nvidia.com/gpu"], 2);
  EXPECT_DOUBLE_EQ(u.consumed["cpu"], 3);
  // No time passed: nothing changes; a clock that went back counts as none.
  EXPECT_DOUBLE_EQ(DecayedUsage(old, {{"nvidia.com/gpu", 2}}, 900, 600).consumed["nvidia.com/gpu"], 8);
  // A half-life of 0 keeps no usage.
  EXPECT_TRUE(DecayedUsage(old, {{"nvidia.com/gpu", 2}}, 1600, 0).consumed.empty());
}

}  // namespace
}  // namespace rota::controller
