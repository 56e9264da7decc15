#include "rota/kubectl/bar.h"

#include <gtest/gtest.h>

namespace rota::kubectl {
namespace {

TEST(UsageBarTest, DrawsUseAgainstTheNominalQuota) {
  struct Case {
    int64_t in_use, nominal;
    const char* bar;
  } cases[] = {
      {0, 10, "[----------]"},
      {6, 10, "[######----]"},
      {10, 10, "[##########]"},
      {1, 1000, "[#---------]"},    // any use shows
      {999, 1000, "[#########-]"},  // full only when all of it is used
      {12, 10, "[##########]++"},   // borrowed beyond the quota
      {11, 10, "[##########]+"},
      {20, 10, "[##########]++++++++++"},
      {21, 10, "[##########]++++++++++>"},  // more than the bar can show
      {0, 0, "[          ]"},
      {4, 0, "[          ]++++++++++"},  // no quota: all of it borrowed
  };
  for (const Case& c : cases) EXPECT_EQ(UsageBar(c.in_use, c.nominal), c.bar) << c.in_use << " of " << c.nominal;
}

TEST(UsageBarTest, TakesItsWidth) { EXPECT_EQ(UsageBar(2, 4, 4), "[##--]"); }

}  // namespace
}  // namespace rota::kubectl
