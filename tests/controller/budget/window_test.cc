#include "budget/window.h"

#include <gtest/gtest.h>

#include "rota/api/snapshot.h"

namespace rota::controller::budget {
namespace {

using api::CalendarPeriod;

// Unix ms of an RFC 3339 time; local midnights are written with their offset.
int64_t Ms(const std::string& rfc3339) { return *api::ParseTime(rfc3339) * 1000; }
constexpr int64_t kHour = 3'600'000;

Window At(CalendarPeriod period, const std::string& zone, const std::string& t) {
  Result<Window> w = CalendarWindowAt(period, zone, Ms(t));
  EXPECT_TRUE(w.ok()) << w.status().message();
  return w.ok() ? *w : Window{};
}

TEST(CalendarWindowAt, DailyInUtc) {
  EXPECT_EQ(At(CalendarPeriod::kDaily, "UTC", "2026-11-27T08:30:00Z"),
            (Window{Ms("2026-11-27T00:00:00Z"), Ms("2026-11-28T00:00:00Z")}));
}

TEST(CalendarWindowAt, BoundaryBelongsToTheNextWindow) {
  EXPECT_EQ(At(CalendarPeriod::kMonthly, "UTC", "2026-12-01T00:00:00Z"),
            (Window{Ms("2026-12-01T00:00:00Z"), Ms("2027-01-01T00:00:00Z")}));
  Result<Window> before = CalendarWindowAt(CalendarPeriod::kMonthly, "UTC", Ms("2026-12-01T00:00:00Z") - 1);
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(*before, (Window{Ms("2026-11-01T00:00:00Z"), Ms("2026-12-01T00:00:00Z")}));
}

TEST(CalendarWindowAt, SpringForwardDayInBerlinIs23Hours) {
  const Window w = At(CalendarPeriod::kDaily, "Europe/Berlin", "2026-03-29T12:00:00Z");
  EXPECT_EQ(w, (Window{Ms("2026-03-29T00:00:00+01:00"), Ms("2026-03-30T00:00:00+02:00")}));
  EXPECT_EQ(w.end - w.start, 23 * kHour);
}

TEST(CalendarWindowAt, FallBackDayInNewYorkIs25Hours) {
  const Window w = At(CalendarPeriod::kDaily, "America/New_York", "2026-11-01T12:00:00Z");
  EXPECT_EQ(w, (Window{Ms("2026-11-01T00:00:00-04:00"), Ms("2026-11-02T00:00:00-05:00")}));
  EXPECT_EQ(w.end - w.start, 25 * kHour);
}

TEST(CalendarWindowAt, MonthIsLocal) {
  // 03:59:59Z on November 1st is still October 31st in New York.
  EXPECT_EQ(At(CalendarPeriod::kMonthly, "America/New_York", "2026-11-01T03:59:59Z"),
            (Window{Ms("2026-10-01T00:00:00-04:00"), Ms("2026-11-01T00:00:00-04:00")}));
  EXPECT_EQ(At(CalendarPeriod::kMonthly, "America/New_York", "2026-11-01T04:00:00Z"),
            (Window{Ms("2026-11-01T00:00:00-04:00"), Ms("2026-12-01T00:00:00-05:00")}));
}

TEST(CalendarWindowAt, IsoWeekStartsMonday) {
  // Friday 2026-11-27; Sunday night still belongs to that week; Monday 00:00 starts the next.
  EXPECT_EQ(At(CalendarPeriod::kWeekly, "UTC", "2026-11-27T08:00:00Z"),
            (Window{Ms("2026-11-23T00:00:00Z"), Ms("2026-11-30T00:00:00Z")}));
  EXPECT_EQ(At(CalendarPeriod::kWeekly, "UTC", "2026-11-29T23:59:59Z"),
            (Window{Ms("2026-11-23T00:00:00Z"), Ms("2026-11-30T00:00:00Z")}));
  EXPECT_EQ(At(CalendarPeriod::kWeekly, "UTC", "2026-11-30T00:00:00Z"),
            (Window{Ms("2026-11-30T00:00:00Z"), Ms("2026-12-07T00:00:00Z")}));
  // A week across the new year (Thursday 2026-12-31).
  EXPECT_EQ(At(CalendarPeriod::kWeekly, "UTC", "2026-12-31T12:00:00Z"),
            (Window{Ms("2026-12-28T00:00:00Z"), Ms("2027-01-04T00:00:00Z")}));
}

TEST(CalendarWindowAt, Quarters) {
  EXPECT_EQ(At(CalendarPeriod::kQuarterly, "UTC", "2026-05-15T00:00:00Z"),
            (Window{Ms("2026-04-01T00:00:00Z"), Ms("2026-07-01T00:00:00Z")}));
  EXPECT_EQ(At(CalendarPeriod::kQuarterly, "UTC", "2026-09-30T23:59:59Z"),
            (Window{Ms("2026-07-01T00:00:00Z"), Ms("2026-10-01T00:00:00Z")}));
  // 23:30Z on December 31st is already 2027 in Berlin; the quarter ends in summer time.
  EXPECT_EQ(At(CalendarPeriod::kQuarterly, "Europe/Berlin", "2026-12-31T23:30:00Z"),
            (Window{Ms("2027-01-01T00:00:00+01:00"), Ms("2027-04-01T00:00:00+02:00")}));
}

TEST(CalendarWindowAt, MissingMidnightStartsAfterTheGap) {
  // Santiago skips from 00:00 to 01:00 on 2026-09-06 (at 04:00Z).
  EXPECT_EQ(At(CalendarPeriod::kDaily, "America/Santiago", "2026-09-06T12:00:00Z"),
            (Window{Ms("2026-09-06T04:00:00Z"), Ms("2026-09-07T00:00:00-03:00")}));
  EXPECT_EQ(At(CalendarPeriod::kDaily, "America/Santiago", "2026-09-06T03:59:59Z"),
            (Window{Ms("2026-09-05T00:00:00-04:00"), Ms("2026-09-06T04:00:00Z")}));
}

TEST(CalendarWindowAt, RepeatedMidnightStartsAtItsFirstOccurrence) {
  // Havana turns 01:00 back to 00:00 on 2026-11-01 (at 05:00Z), so that day's midnight is twice.
  const Window day{Ms("2026-11-01T00:00:00-04:00"), Ms("2026-11-02T00:00:00-05:00")};
  EXPECT_EQ(At(CalendarPeriod::kDaily, "America/Havana", "2026-11-01T04:30:00Z"), day);
  EXPECT_EQ(At(CalendarPeriod::kDaily, "America/Havana", "2026-11-01T05:30:00Z"), day);
}

TEST(CalendarWindowAt, UnknownTimeZone) {
  Result<Window> w = CalendarWindowAt(CalendarPeriod::kDaily, "Mars/Olympus", 0);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(), "spec.window.timeZone: unknown time zone \"Mars/Olympus\"");
}

TEST(CheckTimeZone, KnownAndUnknown) {
  EXPECT_TRUE(CheckTimeZone("Europe/Berlin").ok());
  EXPECT_TRUE(CheckTimeZone("UTC").ok());
  const Status s = CheckTimeZone("Europe/Atlantis");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "spec.window.timeZone: unknown time zone \"Europe/Atlantis\"");
}

api::BudgetSpec Spec() {
  api::BudgetSpec spec;
  spec.cluster_queue = "team-a";
  spec.window.calendar = CalendarPeriod::kMonthly;
  api::BudgetLimit limit;
  limit.resource = "nvidia.com/gpu";
  limit.hours = Quantity::FromUnits(100);
  spec.limits.push_back(limit);
  return spec;
}

TEST(ValidateBudget, ChecksTheSpecAndTheTimeZone) {
  EXPECT_TRUE(ValidateBudget(Spec()).ok());
  api::BudgetSpec zone = Spec();
  zone.window.time_zone = "Nowhere";
  EXPECT_EQ(ValidateBudget(zone).message(), "spec.window.timeZone: unknown time zone \"Nowhere\"");
  api::BudgetSpec rolling = Spec();
  rolling.window.calendar.reset();
  rolling.window.rolling = "30s";
  EXPECT_EQ(ValidateBudget(rolling).message(), "spec.window.rolling: \"30s\" is shorter than 1m");
  rolling.window.rolling = "2m";
  rolling.window.time_zone = "Nowhere";  // not used by a rolling window
  EXPECT_TRUE(ValidateBudget(rolling).ok());
}

TEST(RollingBucketWidth, SixtiethOfTheWindowInWholeSecondsAtMostAnHour) {
  EXPECT_EQ(RollingBucketWidth(168 * kHour), kHour);
  EXPECT_EQ(RollingBucketWidth(60 * kHour), kHour);
  EXPECT_EQ(RollingBucketWidth(30 * kHour), 30 * 60'000);
  EXPECT_EQ(RollingBucketWidth(120'000), 2'000);  // 2m
  EXPECT_EQ(RollingBucketWidth(150'000), 2'000);  // 2.5 s rounded down
  EXPECT_EQ(RollingBucketWidth(60'000), 1'000);   // 1m
  EXPECT_EQ(RollingBucketWidth(30'000), 1'000);   // at least a second
}

TEST(DescribePeriod, Words) {
  api::BudgetWindow w;
  w.calendar = CalendarPeriod::kMonthly;
  EXPECT_EQ(DescribePeriod(w), "this month");
  w.calendar = CalendarPeriod::kQuarterly;
  EXPECT_EQ(DescribePeriod(w), "this quarter");
  w.calendar = CalendarPeriod::kWeekly;
  EXPECT_EQ(DescribePeriod(w), "this week");
  w.calendar = CalendarPeriod::kDaily;
  EXPECT_EQ(DescribePeriod(w), "today");
  w.calendar.reset();
  w.rolling = "2m";
  EXPECT_EQ(DescribePeriod(w), "in the last 2m");
}

}  // namespace
}  // namespace rota::controller::budget
