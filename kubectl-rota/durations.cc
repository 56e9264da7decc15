#include "rota/kubectl/durations.h"

#include "rota/api/snapshot.h"

namespace rota::kubectl {

std::string HumanDuration(int64_t seconds) {
  auto s = [](int64_t n) { return std::to_string(n); };
  if (seconds < 0) return "0s";
  if (seconds < 2 * 60) return s(seconds) + "s";
  const int64_t minutes = seconds / 60, hours = seconds / 3600, days = hours / 24;
  if (minutes < 10) return s(minutes) + "m" + (seconds % 60 ? s(seconds % 60) + "s" : "");
  if (minutes < 3 * 60) return s(minutes) + "m";
  if (hours < 8) return s(hours) + "h" + (minutes % 60 ? s(minutes % 60) + "m" : "");
  if (hours < 48) return s(hours) + "h";
  if (hours < 8 * 24) return s(days) + "d" + (hours % 24 ? s(hours % 24) + "h" : "");
  if (days < 2 * 365) return s(days) + "d";
  return s(days / 365) + "y" + (days % 365 ? s(days % 365) + "d" : "");
}

std::string AgeOf(const std::string& rfc3339, int64_t now) {
  auto t = api::ParseTime(rfc3339);
  if (rfc3339.empty() || !t.ok()) return "<unknown>";
  return HumanDuration(now - *t);
}

}  // namespace rota::kubectl
