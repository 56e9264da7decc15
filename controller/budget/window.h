#pragma once

// A Budget's window in time (issue 39): the calendar period that contains an instant in a time
// zone, and the bucket width of a rolling window. Pure functions; times are Unix milliseconds.
// Calendar math and the time zone database are Howard Hinnant's date library (the OS tzdb).

#include <cstdint>
#include <string>

#include "rota/admission/status.h"
#include "rota/api/budget.h"

namespace rota::controller::budget {

// [start, end) in Unix milliseconds.
struct Window {
  int64_t start = 0;
  int64_t end = 0;

  friend bool operator==(const Window&, const Window&) = default;
};

// OK when `name` is an IANA time zone in the system database; otherwise
// `spec.window.timeZone: unknown time zone "X"`.
Status CheckTimeZone(const std::string& name);

// api::ValidateBudgetSpec, and for a calendar window that its time zone exists.
Status ValidateBudget(const api::BudgetSpec& spec);

// The calendar period of `time_zone` that contains `t_ms`. Periods start at local midnight:
// Daily every day (a DST day is 23 or 25 hours long), Weekly on Monday (ISO weeks), Monthly on
// the 1st, Quarterly on January, April, July and October 1st. A local midnight that does not
// exist (a DST gap at midnight) starts at the first instant after the gap; one that occurs twice
// starts at the first occurrence. An unknown zone is an error as in CheckTimeZone.
Result<Window> CalendarWindowAt(api::CalendarPeriod period, const std::string& time_zone, int64_t t_ms);

// The width of a rolling window's buckets: a sixtieth of the window, at most an hour, rounded
// down to whole seconds and at least one second (168h -> 1h, 2m -> 2s).
int64_t RollingBucketWidth(int64_t rolling_ms);

// The window in words for messages: "today", "this week", "this month", "this quarter", or for a
// rolling window "in the last " and its duration as written ("in the last 168h").
std::string DescribePeriod(const api::BudgetWindow& w);

}  // namespace rota::controller::budget
