#pragma once

// Times as kubectl shows them.

#include <cstdint>
#include <string>

namespace rota::kubectl {

// An age in kubectl's short form (apimachinery's HumanDuration): "45s", "3m20s", "42m", "5h12m",
// "30h", "3d4h", "12d", "2y30d". Negative ages (clock skew) print as "0s".
std::string HumanDuration(int64_t seconds);

// The age of an RFC 3339 time at `now`, or "<unknown>" when `rfc3339` is empty or malformed.
std::string AgeOf(const std::string& rfc3339, int64_t now);

}  // namespace rota::kubectl
