#include "soak/fault_schedule.h"

#include <gtest/gtest.h>

#include <set>

namespace rota::soak {
namespace {

using std::chrono::seconds;

TEST(FaultScheduleTest, EveryKindComesFirstOnceThenRandomOnesFillTheDuration) {
  ScheduleOptions o;
  o.duration = seconds(600);
  const std::vector<Fault> s = MakeSchedule(42, o);
  const size_t kinds = std::size(kAllFaultKinds);
  ASSERT_GT(s.size(), kinds);
  std::set<FaultKind> first;
  for (size_t i = 0; i < kinds; ++i) first.insert(s[i].kind);
  EXPECT_EQ(first.size(), kinds) << "the first faults are one of each kind";
  seconds planned{0};
  for (const Fault& f : s) {
    EXPECT_GE(f.gap, o.gap_min);
    EXPECT_LE(f.gap, o.gap_max);
    if (f.kind == FaultKind::kStallProxy) {
      EXPECT_GE(f.length, o.stall_min);
      EXPECT_LE(f.length, o.stall_max);
    } else if (f.kind == FaultKind::kStopLeader) {
      EXPECT_EQ(f.length, o.stop_length);
    } else {
      EXPECT_EQ(f.length, seconds(0));
    }
    planned += f.gap + f.length + o.expected_recovery;
  }
  EXPECT_LE(planned, o.duration);
}

TEST(FaultScheduleTest, ASeedReplaysItsScheduleAndAnotherDiffers) {
  ScheduleOptions o;
  o.duration = seconds(900);
  auto describe = [&](uint64_t seed) {
    std::string out;
    for (const Fault& f : MakeSchedule(seed, o))
      out += ToString(f.kind) + "/" + std::to_string(f.gap.count()) + "/" + std::to_string(f.length.count()) + " ";
    return out;
  };
  EXPECT_EQ(describe(7), describe(7));
  EXPECT_NE(describe(7), describe(8));
}

TEST(FaultScheduleTest, AShortDurationStillTriesEveryKind) {
  ScheduleOptions o;
  o.duration = seconds(30);
  EXPECT_EQ(MakeSchedule(1, o).size(), std::size(kAllFaultKinds));
}

}  // namespace
}  // namespace rota::soak
