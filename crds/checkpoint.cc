#include "rota/api/checkpoint.h"

#include <cmath>

namespace rota::api {

Result<int64_t> ParseGoDuration(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("\"" + std::string(text) + "\" is not a duration such as 90s, 10m or 1h30m: " + why);
  };
  if (text.empty()) return bad("it is empty");
  if (text == "0") return int64_t{0};
  constexpr double kMax = 100.0 * 365 * 24 * 3600 * 1000;
  double total = 0;
  size_t i = 0;
  while (i < text.size()) {
    const size_t start = i;
    while (i < text.size() && ((text[i] >= '0' && text[i] <= '9') || text[i] == '.')) ++i;
    const std::string_view number = text.substr(start, i - start);
    if (number.empty() || number == "." || number.find('.') != number.rfind('.')) return bad("a number is missing");
    const size_t unit_start = i;
    while (i < text.size() && ((text[i] >= 'a' && text[i] <= 'z'))) ++i;
    const std::string_view unit = text.substr(unit_start, i - unit_start);
    const double scale = unit == "ms" ? 1 : unit == "s" ? 1000 : unit == "m" ? 60000 : unit == "h" ? 3600000 : 0;
    if (scale == 0) return bad(unit.empty() ? "a unit (ms, s, m, h) is missing" : "unknown unit " + std::string(unit));
    total += std::stod(std::string(number)) * scale;
    if (total > kMax) return bad("longer than 100 years");
  }
  return static_cast<int64_t>(std::llround(total));
}

bool Checkpointable(const std::map<std::string, std::string>& annotations) {
  return AnnotationOr(annotations, kCheckpointAnnotation) == "true";
}

std::string AnnotationOr(const std::map<std::string, std::string>& annotations, std::string_view key) {
  auto it = annotations.find(std::string(key));
  return it == annotations.end() ? "" : it->second;
}

}  // namespace rota::api
