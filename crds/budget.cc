#include "rota/api/budget.h"

#include <cmath>
#include <cstdio>
#include <set>

#include "rota/api/checkpoint.h"

namespace rota::api {
namespace {

using codec_internal::Quote;

Status ValidateScope(const BudgetSpec& spec) {
  if (spec.cluster_queue.empty() == spec.cohort.empty()) {
    return InvalidArgument("spec: name exactly one of clusterQueue and cohort");
  }
  return Status::Ok();
}

Status ValidateWindow(const BudgetWindow& w) {
  if (w.calendar.has_value() == !w.rolling.empty()) {
    return InvalidArgument("spec.window: give exactly one of calendar and rolling");
  }
  if (w.calendar) {
    if (w.time_zone.empty()) return InvalidArgument("spec.window.timeZone: must not be empty");
    return Status::Ok();
  }
  Result<int64_t> ms = ParseGoDuration(w.rolling);
  if (!ms.ok()) return ms.status().WithContext("spec.window.rolling");
  if (*ms < 60'000) return InvalidArgument("spec.window.rolling: " + Quote(w.rolling) + " is shorter than 1m");
  return Status::Ok();
}

Status ValidateLimits(const BudgetSpec& spec) {
  if (spec.limits.empty()) return InvalidArgument("spec.limits: name at least one resource");
  std::set<std::string> seen;
  for (size_t i = 0; i < spec.limits.size(); ++i) {
    const BudgetLimit& l = spec.limits[i];
    const std::string at = "spec.limits[" + std::to_string(i) + "]";
    if (l.resource.empty()) return InvalidArgument(at + ".resource: must not be empty");
    if (!seen.insert(l.resource).second)
      return InvalidArgument(at + ".resource: " + Quote(l.resource) + " is listed twice");
    if (l.hours.milli() <= 0) return InvalidArgument(at + ".hours: must be more than 0");
  }
  for (const auto& [resource, weight] : spec.weights) {
    const std::string at = "spec.weights[" + Quote(resource) + "]";
    if (resource == kGpuResource) return InvalidArgument(at + ": nvidia.com/gpu counts 1 by definition");
    if (weight.milli() < 0) return InvalidArgument(at + ": must not be negative");
  }
  return Status::Ok();
}

}  // namespace

Status ValidateBudgetSpec(const BudgetSpec& spec) {
  if (Status s = ValidateScope(spec); !s.ok()) return s;
  if (Status s = ValidateWindow(spec.window); !s.ok()) return s;
  if (Status s = ValidateLimits(spec); !s.ok()) return s;
  if (spec.warn_at < 1 || spec.warn_at > 100) {
    return InvalidArgument("spec.warnAt: " + std::to_string(spec.warn_at) + " is not a percentage from 1 to 100");
  }
  return Status::Ok();
}

std::string FormatHours(double hours) {
  if (!(hours > 0.00005)) return "0";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f", hours);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

Result<double> ParseHours(const std::string& text, const std::string& field) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || v < 0) {
    return InvalidArgument(field + ": " + Quote(text) + " is not a number of hours");
  }
  return v;
}

}  // namespace rota::api
