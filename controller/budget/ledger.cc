#include "budget/ledger.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "rota/api/checkpoint.h"
#include "rota/api/snapshot.h"

namespace rota::controller::budget {
namespace {

constexpr double kMsPerHour = 3'600'000.0;
// Sums of hours are doubles: a limit counts as used up, and a percent as reached, this close.
constexpr double kEpsilonHours = 1e-9;

double Hours(const Quantity& q) { return static_cast<double>(q.milli()) / 1000.0; }

// `t` rounded down to a multiple of `width`.
int64_t FloorTo(int64_t t, int64_t width) {
  const int64_t q = t / width;
  return (t % width < 0 ? q - 1 : q) * width;
}

// RFC 3339 in UTC, with milliseconds only when `ms` is not whole seconds: "2026-11-27T08:00:00.250Z".
std::string FormatMs(int64_t ms) {
  const int64_t seconds = FloorTo(ms, 1000) / 1000;
  std::string text = api::FormatTime(seconds);
  if (const int64_t fraction = ms - seconds * 1000; fraction != 0) {
    char buf[8];
    std::snprintf(buf, sizeof buf, ".%03d", static_cast<int>(fraction));
    text.insert(text.size() - 1, buf);
  }
  return text;
}

// Unix ms of an RFC 3339 time (api::ParseTime, "" is 0); digits after milliseconds are dropped.
// An error names `field`.
Result<int64_t> ParseMs(const std::string& text, const std::string& field) {
  Result<int64_t> seconds = api::ParseTime(text);
  if (!seconds.ok()) return seconds.status().WithContext(field);
  int64_t fraction = 0;
  if (const size_t dot = text.find('.'); dot != std::string::npos) {
    int64_t scale = 100;
    for (size_t i = dot + 1; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && scale > 0; ++i) {
      fraction += (text[i] - '0') * scale;
      scale /= 10;
    }
  }
  return *seconds * 1000 + fraction;
}

// status `used[]` as resource -> hours; errors name `field` and the index.
Result<std::map<std::string, double>> ParseUsage(const std::vector<api::BudgetUsage>& used, const std::string& field) {
  std::map<std::string, double> usage;
  for (size_t i = 0; i < used.size(); ++i) {
    Result<double> hours = api::ParseHours(used[i].hours, field + "[" + std::to_string(i) + "].hours");
    if (!hours.ok()) return hours.status();
    usage[used[i].resource] += *hours;
  }
  return usage;
}

}  // namespace

double ChargeOf(const api::BudgetSpec& spec, const std::string& limit_resource,
                const std::map<std::string, int64_t>& usage_milli) {
  auto units = [&](const std::string& resource) {
    auto it = usage_milli.find(resource);
    return it == usage_milli.end() ? 0.0 : static_cast<double>(it->second) / 1000.0;
  };
  double charge = units(limit_resource);
  if (limit_resource != api::kGpuResource) return charge;
  for (const auto& [resource, weight] : spec.weights) charge += units(resource) * Hours(weight);
  return charge;
}

Result<Ledger> Ledger::Resume(const api::Budget& budget, int64_t now_ms) {
  if (Status s = ValidateBudget(budget.spec); !s.ok()) return s;
  Ledger ledger(budget.spec);
  Result<int64_t> created = ParseMs(budget.metadata.creation_timestamp, "metadata.creationTimestamp");
  if (!created.ok()) return created.status();
  ledger.creation_ms_ = *created;
  ledger.accounted_until_ = *created > 0 && *created <= now_ms ? *created : now_ms;
  if (!budget.spec.window.calendar) {
    ledger.rolling_ms_ = *api::ParseGoDuration(budget.spec.window.rolling);  // validated above
    ledger.bucket_ms_ = RollingBucketWidth(ledger.rolling_ms_);
  }
  if (!budget.status || budget.status->accounted_until.empty()) {
    ledger.window_ = ledger.WindowAt(ledger.accounted_until_);
    return ledger;
  }
  const api::BudgetStatus& status = *budget.status;
  Result<int64_t> until = ParseMs(status.accounted_until, "status.accountedUntil");
  if (!until.ok()) return until.status();
  ledger.accounted_until_ = *until;
  Status s = ledger.rolling_ms_ > 0 ? ledger.ResumeRolling(status) : ledger.ResumeCalendar(status);
  if (!s.ok()) return s;
  return ledger;
}

Status Ledger::ResumeCalendar(const api::BudgetStatus& status) {
  Result<std::map<std::string, double>> used = ParseUsage(status.used, "status.used");
  if (!used.ok()) return used.status();
  Result<int64_t> start = ParseMs(status.window_start, "status.windowStart");
  if (!start.ok()) return start.status();
  Result<int64_t> end = ParseMs(status.window_end, "status.windowEnd");
  if (!end.ok()) return end.status();
  window_ = WindowAt(accounted_until_);
  // A status written for another period, zone or a rolling window: the new window starts at 0.
  const bool same_window = window_ == Window{*start, *end} && status.buckets.empty();
  if (same_window) used_ = std::move(*used);
  return Status::Ok();
}

Status Ledger::ResumeRolling(const api::BudgetStatus& status) {
  for (size_t i = 0; i < status.buckets.size(); ++i) {
    const std::string at = "status.buckets[" + std::to_string(i) + "]";
    Result<int64_t> start = ParseMs(status.buckets[i].start, at + ".start");
    if (!start.ok()) return start.status();
    Result<std::map<std::string, double>> used = ParseUsage(status.buckets[i].used, at + ".used");
    if (!used.ok()) return used.status();
    // Re-aligned in case the window's length, and so the bucket width, changed.
    Usage& bucket = buckets_[FloorTo(*start, bucket_ms_)];
    for (const auto& [resource, hours] : *used) bucket[resource] += hours;
  }
  std::erase_if(buckets_, [&](const auto& b) { return Expired(b.first, accounted_until_); });
  return Status::Ok();
}

void Ledger::ChargeUntil(const std::vector<Hold>& holds, int64_t until_ms) {
  if (until_ms <= accounted_until_) return;
  if (rolling_ms_ > 0) {
    ChargeRolling(holds, until_ms);
  } else {
    ChargeCalendar(holds, until_ms);
  }
  accounted_until_ = until_ms;
}

void Ledger::ChargeCalendar(const std::vector<Hold>& holds, int64_t until_ms) {
  int64_t from = accounted_until_;
  if (until_ms >= window_.end) {
    // Only the part of [from, until) in the window at `until` counts.
    window_ = WindowAt(until_ms);
    used_.clear();
    from = std::max(from, window_.start);
  }
  Charge(holds, from, until_ms, used_);
}

void Ledger::ChargeRolling(const std::vector<Hold>& holds, int64_t until_ms) {
  // Time in buckets that will have expired by `until` is skipped rather than charged and dropped.
  int64_t from = std::max(accounted_until_, FloorTo(until_ms - rolling_ms_, bucket_ms_));
  while (from < until_ms) {
    const int64_t bucket = FloorTo(from, bucket_ms_);
    const int64_t to = std::min(until_ms, bucket + bucket_ms_);
    Usage charged;
    Charge(holds, from, to, charged);
    for (const auto& [resource, hours] : charged) buckets_[bucket][resource] += hours;
    from = to;
  }
  std::erase_if(buckets_, [&](const auto& b) { return Expired(b.first, until_ms); });
}

void Ledger::Charge(const std::vector<Hold>& holds, int64_t from, int64_t to, Usage& usage) const {
  for (const Hold& hold : holds) {
    if (hold.start < creation_ms_) continue;  // admitted before the budget existed
    const int64_t held_ms = std::min(to, hold.end) - std::max(from, hold.start);
    if (held_ms <= 0) continue;
    for (const api::BudgetLimit& limit : spec_.limits) {
      const double per_hour = ChargeOf(spec_, limit.resource, hold.usage_milli);
      if (per_hour > 0) usage[limit.resource] += per_hour * static_cast<double>(held_ms) / kMsPerHour;
    }
  }
}

Window Ledger::WindowAt(int64_t t_ms) const {
  if (rolling_ms_ > 0) return Window{t_ms - rolling_ms_, t_ms};
  Result<Window> w = CalendarWindowAt(*spec_.window.calendar, spec_.window.time_zone, t_ms);
  return w.ok() ? *w : Window{t_ms, t_ms + 1};  // the zone was checked in Resume
}

bool Ledger::Expired(int64_t bucket_start, int64_t as_of) const {
  return bucket_start + bucket_ms_ <= as_of - rolling_ms_;
}

std::map<std::string, double> Ledger::Used() const {
  Usage used;
  for (const api::BudgetLimit& limit : spec_.limits) used[limit.resource] = 0;
  const auto add = [&used](const Usage& usage) {
    for (const auto& [resource, hours] : usage) {
      if (auto it = used.find(resource); it != used.end()) it->second += hours;
    }
  };
  if (rolling_ms_ == 0) {
    add(used_);
    return used;
  }
  for (const auto& [start, usage] : buckets_) {
    if (!Expired(start, accounted_until_)) add(usage);
  }
  return used;
}

Window Ledger::CurrentWindow() const {
  if (rolling_ms_ == 0) return window_;
  Window w{accounted_until_ - rolling_ms_, accounted_until_ + rolling_ms_};
  for (const auto& [start, usage] : buckets_) {
    const bool charged = std::any_of(usage.begin(), usage.end(), [](const auto& u) { return u.second > 0; });
    if (charged && !Expired(start, accounted_until_)) {
      w.end = start + bucket_ms_ + rolling_ms_;
      break;
    }
  }
  return w;
}

bool Ledger::Exhausted() const {
  const Usage used = Used();
  return std::any_of(spec_.limits.begin(), spec_.limits.end(), [&](const api::BudgetLimit& limit) {
    return used.at(limit.resource) + kEpsilonHours >= Hours(limit.hours);
  });
}

int Ledger::PercentUsed() const {
  const Usage used = Used();
  int percent = 0;
  for (const api::BudgetLimit& limit : spec_.limits) {
    const double fraction = (used.at(limit.resource) + kEpsilonHours) / Hours(limit.hours);
    percent = std::max(percent, static_cast<int>(std::floor(fraction * 100)));
  }
  return percent;
}

std::map<std::string, double> Ledger::Remaining() const {
  Usage remaining = Used();
  for (const api::BudgetLimit& limit : spec_.limits) {
    double& r = remaining[limit.resource];
    r = std::max(0.0, Hours(limit.hours) - r);
  }
  return remaining;
}

api::BudgetStatus Ledger::ToStatus(const api::BudgetStatus& previous) const {
  // `usage` as used[] in the order of the limits; without zeros when `nonzero_only`.
  const auto usages = [this](const Usage& usage, bool nonzero_only) {
    std::vector<api::BudgetUsage> out;
    for (const api::BudgetLimit& limit : spec_.limits) {
      auto it = usage.find(limit.resource);
      api::BudgetUsage u;
      u.resource = limit.resource;
      u.hours = api::FormatHours(it == usage.end() ? 0 : it->second);
      if (!nonzero_only || u.hours != "0") out.push_back(std::move(u));
    }
    return out;
  };
  api::BudgetStatus status = previous;
  const Window w = CurrentWindow();
  status.window_start = FormatMs(w.start);
  status.window_end = FormatMs(w.end);
  status.accounted_until = FormatMs(accounted_until_);
  status.used = usages(Used(), false);
  status.percent_used = PercentUsed();
  status.buckets.clear();
  for (const auto& [start, usage] : buckets_) {
    api::UsageBucket bucket;
    bucket.start = FormatMs(start);
    bucket.used = usages(usage, true);
    if (!bucket.used.empty() && !Expired(start, accounted_until_)) status.buckets.push_back(std::move(bucket));
  }
  return status;
}

}  // namespace rota::controller::budget
