#include "budget/ledger.h"

#include <gtest/gtest.h>

#include <functional>
#include <limits>

#include "rota/api/snapshot.h"

namespace rota::controller::budget {
namespace {

using api::CalendarPeriod;

constexpr char kGpu[] = "nvidia.com/gpu";
constexpr char kMig[] = "nvidia.com/mig-1g.10gb";
constexpr int64_t kMinute = 60'000, kHour = 3'600'000;

int64_t Ms(const std::string& rfc3339) { return *api::ParseTime(rfc3339) * 1000; }

api::BudgetLimit Limit(const std::string& resource, int64_t hours) {
  api::BudgetLimit limit;
  limit.resource = resource;
  limit.hours = Quantity::FromUnits(hours);
  return limit;
}

// ClusterQueue team-a's budget, created at `created`: a calendar period in UTC, or a rolling
// window when `rolling` is given.
api::Budget MakeBudget(const std::string& created, std::vector<api::BudgetLimit> limits,
                       CalendarPeriod period = CalendarPeriod::kMonthly, const std::string& rolling = "") {
  api::Budget b;
  b.metadata.name = "team-a-gpu";
  b.metadata.creation_timestamp = created;
  b.spec.cluster_queue = "team-a";
  if (rolling.empty()) b.spec.window.calendar = period;
  b.spec.window.rolling = rolling;
  b.spec.limits = std::move(limits);
  return b;
}

Hold Gpus(int64_t gpus, int64_t start, int64_t end = std::numeric_limits<int64_t>::max()) {
  return Hold{"ml/train", "team-a", {{kGpu, gpus * 1000}}, start, end};
}

Ledger Resumed(const api::Budget& budget, int64_t now) {
  Result<Ledger> ledger = Ledger::Resume(budget, now);
  EXPECT_TRUE(ledger.ok()) << ledger.status().message();
  return std::move(ledger).value();
}

TEST(Ledger, TwoGpusForNinetyMinutesAreThreeGpuHours) {
  Ledger ledger = Resumed(MakeBudget("2026-11-01T00:00:00Z", {Limit(kGpu, 10)}), Ms("2026-11-01T10:00:00Z"));
  EXPECT_EQ(ledger.accounted_until(), Ms("2026-11-01T00:00:00Z"));
  ledger.ChargeUntil({Gpus(2, Ms("2026-11-01T10:00:00Z"))}, Ms("2026-11-01T11:30:00Z"));
  EXPECT_DOUBLE_EQ(ledger.Used().at(kGpu), 3.0);
  EXPECT_EQ(ledger.accounted_until(), Ms("2026-11-01T11:30:00Z"));
  EXPECT_EQ(ledger.CurrentWindow(), (Window{Ms("2026-11-01T00:00:00Z"), Ms("2026-12-01T00:00:00Z")}));
}

TEST(Ledger, AHoldThatEndedIsChargedUntilItsEnd) {
  Ledger ledger = Resumed(MakeBudget("2026-11-01T00:00:00Z", {Limit(kGpu, 10)}), 0);
  ledger.ChargeUntil({Gpus(2, Ms("2026-11-01T10:00:00Z"), Ms("2026-11-01T10:30:00Z"))}, Ms("2026-11-01T12:00:00Z"));
  EXPECT_DOUBLE_EQ(ledger.Used().at(kGpu), 1.0);
}

TEST(ChargeOf, WeightsCountTowardTheGpuLimitOnly) {
  api::BudgetSpec spec = MakeBudget("", {Limit(kGpu, 10), Limit("cpu", 100)}).spec;
  spec.weights[kMig] = *Quantity::Parse("0.143");
  const std::map<std::string, int64_t> usage{{kGpu, 1000}, {kMig, 7000}, {"cpu", 4000}};
  EXPECT_NEAR(ChargeOf(spec, kGpu, usage), 1 + 7 * 0.143, 1e-12);
  EXPECT_DOUBLE_EQ(ChargeOf(spec, "cpu", usage), 4.0);
  EXPECT_DOUBLE_EQ(ChargeOf(spec, "memory", usage), 0.0);
}

TEST(Ledger, WeightedUsageIsChargedPerLimit) {
  api::Budget budget = MakeBudget("2026-11-01T00:00:00Z", {Limit(kGpu, 10), Limit("cpu", 100)});
  budget.spec.weights[kMig] = *Quantity::Parse("0.143");
  Ledger ledger = Resumed(budget, 0);
  const Hold mig{"ml/infer", "team-a", {{kMig, 7000}, {"cpu", 4000}}, Ms("2026-11-01T10:00:00Z")};
  ledger.ChargeUntil({mig}, Ms("2026-11-01T11:00:00Z"));
  EXPECT_NEAR(ledger.Used().at(kGpu), 1.001, 1e-12);
  EXPECT_DOUBLE_EQ(ledger.Used().at("cpu"), 4.0);
}

TEST(Ledger, OnlyTheNewMonthCountsAfterTheBoundary) {
  const api::Budget budget = MakeBudget("2026-10-01T00:00:00Z", {Limit(kGpu, 10)});
  const std::vector<Hold> holds{Gpus(2, Ms("2026-10-31T22:00:00Z"))};
  Ledger ledger = Resumed(budget, 0);
  ledger.ChargeUntil(holds, Ms("2026-10-31T23:00:00Z"));
  EXPECT_DOUBLE_EQ(ledger.Used().at(kGpu), 2.0);
  EXPECT_EQ(ledger.CurrentWindow(), (Window{Ms("2026-10-01T00:00:00Z"), Ms("2026-11-01T00:00:00Z")}));
  ledger.ChargeUntil(holds, Ms("2026-11-01T01:00:00Z"));
  EXPECT_DOUBLE_EQ(ledger.Used().at(kGpu), 2.0);  // 00:00 to 01:00 only
  const api::BudgetStatus status = ledger.ToStatus({});
  EXPECT_EQ(status.window_start, "2026-11-01T00:00:00Z");
  EXPECT_EQ(status.window_end, "2026-12-01T00:00:00Z");

  // The same in one step.
  Ledger once = Resumed(budget, 0);
  once.ChargeUntil(holds, Ms("2026-11-01T01:00:00Z"));
  EXPECT_DOUBLE_EQ(once.Used().at(kGpu), 2.0);
  // Exactly at the boundary the new month has used nothing.
  Ledger at_boundary = Resumed(budget, 0);
  at_boundary.ChargeUntil(holds, Ms("2026-11-01T00:00:00Z"));
  EXPECT_DOUBLE_EQ(at_boundary.Used().at(kGpu), 0.0);
  EXPECT_EQ(at_boundary.CurrentWindow().start, Ms("2026-11-01T00:00:00Z"));
}

TEST(Ledger, RollingUsageExpires) {
  const int64_t t0 = Ms("2026-11-01T10:00:00Z");
  Ledger ledger = Resumed(MakeBudget("2026-11-01T09:00:00Z", {Limit(kGpu, 1)}, {}, "2m"), t0);
  const std::vector<Hold> holds{Gpus(1, t0, t0 + kMinute)};
  ledger.ChargeUntil(holds, t0 + kMinute);
  EXPECT_NEAR(ledger.Used().at(kGpu), 1.0 / 60, 1e-12);
  // The oldest usage, bucket [t0, t0+2s), leaves the window at t0+2s+2m.
  EXPECT_EQ(ledger.CurrentWindow(), (Window{t0 - kMinute, t0 + 2'000 + 2 * kMinute}));
  ledger.ChargeUntil(holds, t0 + 2 * kMinute);
  EXPECT_NEAR(ledger.Used().at(kGpu), 1.0 / 60, 1e-12);
  ledger.ChargeUntil(holds, t0 + 150'000);  // [t0, t0+30s) has left the window
  EXPECT_NEAR(ledger.Used().at(kGpu), 1.0 / 120, 1e-12);
  EXPECT_EQ(ledger.CurrentWindow(), (Window{t0 + 30'000, t0 + 32'000 + 2 * kMinute}));
  ledger.ChargeUntil(holds, t0 + 3 * kMinute);
  EXPECT_DOUBLE_EQ(ledger.Used().at(kGpu), 0.0);
  EXPECT_EQ(ledger.CurrentWindow(), (Window{t0 + kMinute, t0 + 5 * kMinute}));
  EXPECT_TRUE(ledger.ToStatus({}).buckets.empty());
}

TEST(Ledger, HoldsAdmittedBeforeTheBudgetAreNotCharged) {
  Ledger ledger = Resumed(MakeBudget("2026-11-01T10:00:00Z", {Limit(kGpu, 10)}), Ms("2026-11-01T12:00:00Z"));
  EXPECT_EQ(ledger.accounted_until(), Ms("2026-11-01T10:00:00Z"));
  ledger.ChargeUntil({Gpus(4, Ms("2026-11-01T09:00:00Z")), Gpus(1, Ms("2026-11-01T10:30:00Z"))},
                     Ms("2026-11-01T12:00:00Z"));
  EXPECT_DOUBLE_EQ(ledger.Used().at(kGpu), 1.5);
}

TEST(Ledger, ChargingUpToAnEarlierTimeDoesNothing) {
  Ledger ledger = Resumed(MakeBudget("2026-11-01T00:00:00Z", {Limit(kGpu, 10)}), 0);
  const std::vector<Hold> holds{Gpus(2, Ms("2026-11-01T10:00:00Z"))};
  ledger.ChargeUntil(holds, Ms("2026-11-01T11:00:00Z"));
  ledger.ChargeUntil(holds, Ms("2026-11-01T10:30:00Z"));
  ledger.ChargeUntil(holds, Ms("2026-11-01T11:00:00Z"));
  EXPECT_DOUBLE_EQ(ledger.Used().at(kGpu), 2.0);
  EXPECT_EQ(ledger.accounted_until(), Ms("2026-11-01T11:00:00Z"));
}

TEST(Ledger, FreshStart) {
  const int64_t now = Ms("2026-11-01T12:00:00Z");
  EXPECT_EQ(Resumed(MakeBudget("2026-11-01T10:00:00Z", {Limit(kGpu, 1)}), now).accounted_until(),
            Ms("2026-11-01T10:00:00Z"));
  EXPECT_EQ(Resumed(MakeBudget("", {Limit(kGpu, 1)}), now).accounted_until(), now);
  EXPECT_EQ(Resumed(MakeBudget("2026-11-01T13:00:00Z", {Limit(kGpu, 1)}), now).accounted_until(), now);
  // A status with conditions only, no accounting yet.
  api::Budget conditions_only = MakeBudget("2026-11-01T10:00:00Z", {Limit(kGpu, 1)});
  conditions_only.status.emplace().conditions.resize(1);
  EXPECT_EQ(Resumed(conditions_only, now).accounted_until(), Ms("2026-11-01T10:00:00Z"));
}

TEST(Ledger, ResumeFromStatusDoesNotCountTwice) {
  api::Budget budget = MakeBudget("2026-11-01T00:00:00Z", {Limit(kGpu, 10)});
  // Whole hours in the end, but accounted to the millisecond.
  const std::vector<Hold> holds{Gpus(2, Ms("2026-11-01T10:00:00Z") + 250)};
  const int64_t until = Ms("2026-11-01T11:30:00Z") + 250;
  Ledger first = Resumed(budget, 0);
  first.ChargeUntil(holds, until);
  budget.status = first.ToStatus({});
  EXPECT_EQ(budget.status->accounted_until, "2026-11-01T11:30:00.250Z");
  ASSERT_EQ(budget.status->used.size(), 1u);
  EXPECT_EQ(budget.status->used[0].hours, "3");

  Ledger second = Resumed(budget, until + kHour);
  EXPECT_EQ(second.accounted_until(), until);
  EXPECT_EQ(second.Used(), first.Used());
  EXPECT_EQ(second.CurrentWindow(), first.CurrentWindow());
  second.ChargeUntil(holds, until);
  EXPECT_DOUBLE_EQ(second.Used().at(kGpu), 3.0);
  second.ChargeUntil(holds, until + 30 * kMinute);
  EXPECT_DOUBLE_EQ(second.Used().at(kGpu), 4.0);
}

TEST(Ledger, ResumeRollingFromStatusDoesNotCountTwice) {
  api::Budget budget = MakeBudget("2026-11-01T00:00:00Z", {Limit(kGpu, 100)}, {}, "168h");
  const std::vector<Hold> holds{Gpus(2, Ms("2026-11-01T10:00:00Z"))};
  const int64_t until = Ms("2026-11-01T11:30:00Z");
  Ledger first = Resumed(budget, 0);
  first.ChargeUntil(holds, until);
  budget.status = first.ToStatus({});
  ASSERT_EQ(budget.status->buckets.size(), 2u);
  EXPECT_EQ(budget.status->buckets[0].start, "2026-11-01T10:00:00Z");
  ASSERT_EQ(budget.status->buckets[0].used.size(), 1u);
  EXPECT_EQ(budget.status->buckets[0].used[0].hours, "2");
  EXPECT_EQ(budget.status->buckets[1].start, "2026-11-01T11:00:00Z");
  EXPECT_EQ(budget.status->buckets[1].used[0].hours, "1");
  EXPECT_EQ(budget.status->window_start, "2026-10-25T11:30:00Z");
  EXPECT_EQ(budget.status->window_end, "2026-11-08T11:00:00Z");

  Ledger second = Resumed(budget, until);
  EXPECT_EQ(second.Used(), first.Used());
  EXPECT_EQ(second.CurrentWindow(), first.CurrentWindow());
  second.ChargeUntil(holds, until);
  EXPECT_DOUBLE_EQ(second.Used().at(kGpu), 3.0);
  second.ChargeUntil(holds, until + 30 * kMinute);
  EXPECT_DOUBLE_EQ(second.Used().at(kGpu), 4.0);
}

TEST(Ledger, ChangedPeriodStartsTheNewWindowAtZero) {
  api::Budget budget = MakeBudget("2026-11-01T00:00:00Z", {Limit(kGpu, 10)});
  Ledger monthly = Resumed(budget, 0);
  monthly.ChargeUntil({Gpus(2, Ms("2026-11-20T10:00:00Z"))}, Ms("2026-11-20T12:00:00Z"));
  budget.status = monthly.ToStatus({});
  budget.spec.window.calendar = CalendarPeriod::kWeekly;
  Ledger weekly = Resumed(budget, Ms("2026-11-20T12:00:00Z"));
  EXPECT_DOUBLE_EQ(weekly.Used().at(kGpu), 0.0);
  EXPECT_EQ(weekly.CurrentWindow(), (Window{Ms("2026-11-16T00:00:00Z"), Ms("2026-11-23T00:00:00Z")}));
  EXPECT_EQ(weekly.accounted_until(), Ms("2026-11-20T12:00:00Z"));
}

TEST(Ledger, GarbageInTheStatusNamesTheField) {
  struct Case {
    std::string name;
    std::function<void(api::Budget&)> spoil;
    std::string error;
  };
  const std::vector<Case> cases{
      {"used hours", [](api::Budget& b) { b.status->used[0].hours = "x"; },
       "status.used[0].hours: \"x\" is not a number of hours"},
      {"accountedUntil", [](api::Budget& b) { b.status->accounted_until = "yesterday"; },
       "status.accountedUntil: \"yesterday\" is not an RFC 3339 time such as 2026-11-01T10:00:00Z"},
      {"windowEnd", [](api::Budget& b) { b.status->window_end = "2026-13"; },
       "status.windowEnd: \"2026-13\" is not an RFC 3339 time such as 2026-11-01T10:00:00Z"},
      {"creationTimestamp", [](api::Budget& b) { b.metadata.creation_timestamp = "then"; },
       "metadata.creationTimestamp: \"then\" is not an RFC 3339 time such as 2026-11-01T10:00:00Z"},
      {"time zone", [](api::Budget& b) { b.spec.window.time_zone = "Mars/Olympus"; },
       "spec.window.timeZone: unknown time zone \"Mars/Olympus\""},
  };
  for (const Case& c : cases) {
    api::Budget budget = MakeBudget("2026-11-01T00:00:00Z", {Limit(kGpu, 10)});
    budget.status = Resumed(budget, 0).ToStatus({});
    c.spoil(budget);
    Result<Ledger> ledger = Ledger::Resume(budget, 0);
    ASSERT_FALSE(ledger.ok()) << c.name;
    EXPECT_EQ(ledger.status().message(), c.error) << c.name;
  }
}

TEST(Ledger, GarbageInRollingBucketsNamesTheField) {
  api::Budget budget = MakeBudget("2026-11-01T00:00:00Z", {Limit(kGpu, 100)}, {}, "168h");
  Ledger ledger = Resumed(budget, 0);
  ledger.ChargeUntil({Gpus(2, Ms("2026-11-01T10:00:00Z"))}, Ms("2026-11-01T11:30:00Z"));
  budget.status = ledger.ToStatus({});
  budget.status->buckets[1].start = "soon";
  EXPECT_EQ(Ledger::Resume(budget, 0).status().message(),
            "status.buckets[1].start: \"soon\" is not an RFC 3339 time such as 2026-11-01T10:00:00Z");
  budget.status = ledger.ToStatus({});
  budget.status->buckets[0].used[0].hours = "-1";
  EXPECT_EQ(Ledger::Resume(budget, 0).status().message(),
            "status.buckets[0].used[0].hours: \"-1\" is not a number of hours");
}

TEST(Ledger, ExhaustedPercentUsedAndRemaining) {
  Ledger ledger = Resumed(MakeBudget("2026-11-01T00:00:00Z", {Limit(kGpu, 4), Limit("cpu", 100)}), 0);
  const int64_t t0 = Ms("2026-11-01T10:00:00Z");
  const std::vector<Hold> holds{Hold{"ml/train", "team-a", {{kGpu, 2000}, {"cpu", 8000}}, t0}};
  ledger.ChargeUntil(holds, t0 + kHour);
  EXPECT_FALSE(ledger.Exhausted());
  EXPECT_EQ(ledger.PercentUsed(), 50);
  EXPECT_EQ(ledger.Remaining(), (std::map<std::string, double>{{kGpu, 2.0}, {"cpu", 92.0}}));
  ledger.ChargeUntil(holds, t0 + kHour + 59 * kMinute);
  EXPECT_FALSE(ledger.Exhausted());
  EXPECT_EQ(ledger.PercentUsed(), 99);  // 3.9667 of 4
  ledger.ChargeUntil(holds, t0 + 2 * kHour);
  EXPECT_TRUE(ledger.Exhausted());
  EXPECT_EQ(ledger.PercentUsed(), 100);
  ledger.ChargeUntil(holds, t0 + 3 * kHour);
  EXPECT_EQ(ledger.PercentUsed(), 150);
  EXPECT_DOUBLE_EQ(ledger.Remaining().at(kGpu), 0.0);
  EXPECT_NEAR(ledger.Remaining().at("cpu"), 76.0, 1e-9);
}

TEST(Ledger, ToStatusKeepsConditionsAndOrdersUsedByLimits) {
  Ledger ledger = Resumed(MakeBudget("2026-11-01T00:00:00Z", {Limit(kGpu, 10), Limit("cpu", 100)}), 0);
  ledger.ChargeUntil({Gpus(2, Ms("2026-11-01T10:00:00Z"))}, Ms("2026-11-01T11:30:00Z"));
  api::BudgetStatus previous;
  previous.conditions.resize(1);
  previous.conditions[0].type = "Warning";
  previous.buckets.resize(3);
  const api::BudgetStatus status = ledger.ToStatus(previous);
  ASSERT_EQ(status.conditions.size(), 1u);
  EXPECT_EQ(status.conditions[0].type, "Warning");
  ASSERT_EQ(status.used.size(), 2u);
  EXPECT_EQ(status.used[0].resource, kGpu);
  EXPECT_EQ(status.used[0].hours, "3");
  EXPECT_EQ(status.used[1].resource, "cpu");
  EXPECT_EQ(status.used[1].hours, "0");
  EXPECT_EQ(status.percent_used, 30);
  EXPECT_TRUE(status.buckets.empty());
  EXPECT_EQ(status.accounted_until, "2026-11-01T11:30:00Z");
  EXPECT_EQ(status.window_start, "2026-11-01T00:00:00Z");
  EXPECT_EQ(status.window_end, "2026-12-01T00:00:00Z");
}

}  // namespace
}  // namespace rota::controller::budget
