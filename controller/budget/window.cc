#include "budget/window.h"

#include <date/tz.h>

#include <algorithm>
#include <chrono>
#include <exception>

namespace rota::controller::budget {
namespace {

using api::CalendarPeriod;
using std::chrono::milliseconds;

// The zone named `name`, or the error CheckTimeZone describes.
Result<const date::time_zone*> LocateZone(const std::string& name) {
  try {
    return date::locate_zone(name);
  } catch (const std::exception&) {  // std::runtime_error for an unknown name
    return InvalidArgument("spec.window.timeZone: unknown time zone \"" + name + "\"");
  }
}

// The first day of the period that contains `day`.
date::local_days PeriodStart(CalendarPeriod period, date::local_days day) {
  const date::year_month_day ymd{day};
  switch (period) {
    case CalendarPeriod::kDaily:
      return day;
    case CalendarPeriod::kWeekly:
      return day - (date::weekday{day} - date::Monday);
    case CalendarPeriod::kMonthly:
      return date::local_days{ymd.year() / ymd.month() / 1};
    case CalendarPeriod::kQuarterly:
      return date::local_days{ymd.year() / date::month{(unsigned{ymd.month()} - 1) / 3 * 3 + 1} / 1};
  }
  return day;
}

// The first day of the period after the one that starts on `start`.
date::local_days NextPeriodStart(CalendarPeriod period, date::local_days start) {
  const date::year_month ym{date::year_month_day{start}.year(), date::year_month_day{start}.month()};
  switch (period) {
    case CalendarPeriod::kDaily:
      return start + date::days{1};
    case CalendarPeriod::kWeekly:
      return start + date::days{7};
    case CalendarPeriod::kMonthly:
      return date::local_days{(ym + date::months{1}) / 1};
    case CalendarPeriod::kQuarterly:
      return date::local_days{(ym + date::months{3}) / 1};
  }
  return start + date::days{1};
}

// Local midnight at the start of `day` in Unix ms: after a gap when it does not exist, its first
// occurrence when it occurs twice.
int64_t MidnightMs(const date::time_zone* tz, date::local_days day) {
  const auto instant = tz->to_sys(day, date::choose::earliest);
  return std::chrono::duration_cast<milliseconds>(instant.time_since_epoch()).count();
}

}  // namespace

Status CheckTimeZone(const std::string& name) {
  Result<const date::time_zone*> tz = LocateZone(name);
  return tz.status();
}

Status ValidateBudget(const api::BudgetSpec& spec) {
  if (Status s = api::ValidateBudgetSpec(spec); !s.ok()) return s;
  if (spec.window.calendar) return CheckTimeZone(spec.window.time_zone);
  return Status::Ok();
}

Result<Window> CalendarWindowAt(CalendarPeriod period, const std::string& time_zone, int64_t t_ms) {
  Result<const date::time_zone*> tz = LocateZone(time_zone);
  if (!tz.ok()) return tz.status();
  const date::local_time<milliseconds> local = (*tz)->to_local(date::sys_time<milliseconds>{milliseconds{t_ms}});
  const date::local_days start = PeriodStart(period, date::floor<date::days>(local));
  const date::local_days next = NextPeriodStart(period, start);
  Window w{MidnightMs(*tz, start), MidnightMs(*tz, next)};
  if (w.end <= t_ms) {
    // `t` is in a repeated local hour just before a midnight that begins the next period.
    w = Window{w.end, MidnightMs(*tz, NextPeriodStart(period, next))};
  }
  return w;
}

int64_t RollingBucketWidth(int64_t rolling_ms) {
  constexpr int64_t kSecond = 1000, kHour = 3'600'000;
  const int64_t width = std::min(kHour, rolling_ms / 60) / kSecond * kSecond;
  return std::max(kSecond, width);
}

std::string DescribePeriod(const api::BudgetWindow& w) {
  if (!w.calendar) return "in the last " + w.rolling;
  switch (*w.calendar) {
    case CalendarPeriod::kDaily:
      return "today";
    case CalendarPeriod::kWeekly:
      return "this week";
    case CalendarPeriod::kMonthly:
      return "this month";
    case CalendarPeriod::kQuarterly:
      return "this quarter";
  }
  return "in this window";
}

}  // namespace rota::controller::budget
