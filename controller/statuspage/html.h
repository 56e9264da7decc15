#pragma once
// Text helpers of the status page: escaping and number formats (rota replay's report escapes
// with them too).

#include <cstddef>
#include <string>
#include <string_view>

namespace rota::statuspage {

// `s` safe inside HTML text and double- or single-quoted attribute values.
std::string Escape(std::string_view s);

// An amount for a person: at most two decimals, trailing zeros dropped, then `unit`
// (already display text, escaped by the caller): 6 -> "6", 2.5 + "Gi" -> "2.5Gi".
std::string Amount(double value, std::string_view unit = "");

// A count with thousands separators: 12000 -> "12,000".
std::string Count(size_t n);

// A pixel coordinate or length for SVG attributes: at most two decimals, no exponent.
std::string Px(double v);

}  // namespace rota::statuspage
