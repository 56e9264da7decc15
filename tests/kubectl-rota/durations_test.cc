#include "rota/kubectl/durations.h"

#include <gtest/gtest.h>

namespace rota::kubectl {
namespace {

TEST(DurationsTest, HumanDurationIsKubectls) {
  const std::pair<int64_t, const char*> cases[] = {{-5, "0s"},
                                                   {45, "45s"},
                                                   {119, "119s"},
                                                   {200, "3m20s"},
                                                   {180, "3m"},
                                                   {42 * 60, "42m"},
                                                   {5 * 3600 + 720, "5h12m"},
                                                   {30 * 3600, "30h"},
                                                   {76 * 3600, "3d4h"},
                                                   {12 * 86400, "12d"},
                                                   {760 * 86400, "2y30d"}};
  for (const auto& [seconds, text] : cases) EXPECT_EQ(HumanDuration(seconds), text) << seconds;
}

TEST(DurationsTest, AgeOfATime) {
  EXPECT_EQ(AgeOf("2026-11-01T10:00:00Z", 1793527200 + 90), "90s");
  EXPECT_EQ(AgeOf("", 0), "<unknown>");
  EXPECT_EQ(AgeOf("yesterday", 0), "<unknown>");
}

}  // namespace
}  // namespace rota::kubectl
