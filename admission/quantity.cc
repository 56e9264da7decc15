#include "rota/admission/quantity.h"

#include <array>
#include <cctype>
#include <limits>
#include <optional>

namespace rota {
namespace {

__extension__ typedef __int128 int128;  // GCC/Clang extension; exact 128-bit arithmetic
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

struct Suffix {
  std::string_view text;
  Quantity::Format format;
  int power;  // of 10 for decimal suffixes, of 2 for binary ones
};

constexpr std::array<Suffix, 16> kSuffixes{{
    {"", Quantity::Format::kDecimalSI, 0},
    {"n", Quantity::Format::kDecimalSI, -9},
    {"u", Quantity::Format::kDecimalSI, -6},
    {"m", Quantity::Format::kDecimalSI, -3},
    {"k", Quantity::Format::kDecimalSI, 3},
    {"M", Quantity::Format::kDecimalSI, 6},
    {"G", Quantity::Format::kDecimalSI, 9},
    {"T", Quantity::Format::kDecimalSI, 12},
    {"P", Quantity::Format::kDecimalSI, 15},
    {"E", Quantity::Format::kDecimalSI, 18},
    {"Ki", Quantity::Format::kBinarySI, 10},
    {"Mi", Quantity::Format::kBinarySI, 20},
    {"Gi", Quantity::Format::kBinarySI, 30},
    {"Ti", Quantity::Format::kBinarySI, 40},
    {"Pi", Quantity::Format::kBinarySI, 50},
    {"Ei", Quantity::Format::kBinarySI, 60},
}};

std::string Quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

Status Invalid(std::string_view text, std::string_view why) {
  return InvalidArgument(Quoted(text) + " is not a valid quantity: " + std::string(why));
}

Status TooLarge(std::string_view text) {
  return OutOfRange(Quoted(text) +
                    " is too large: rota holds quantities up to 9223372036854775807m "
                    "(about 9.2e15 units)");
}

// 10^n for 0 <= n <= 38, as a 128-bit integer.
int128 Pow10(int n) {
  int128 r = 1;
  for (int i = 0; i < n; ++i) r *= 10;
  return r;
}

}  // namespace

Result<Quantity> Quantity::Parse(std::string_view text) {
  if (text.empty()) return Invalid(text, "it is empty");
  size_t i = 0;
  bool negative = false;
  if (text[i] == '+' || text[i] == '-') {
    negative = text[i] == '-';
    ++i;
  }
  std::string digits;  // integer and fraction digits, without the point
  int scale = 0;       // the value is digits * 10^scale
  bool any_digit = false;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    digits.push_back(text[i++]);
    any_digit = true;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      digits.push_back(text[i++]);
      --scale;
      any_digit = true;
    }
  }
  if (!any_digit) return Invalid(text, "it must start with a number, such as 4, 0.5 or 500m");

  const std::string_view suffix = text.substr(i);
  Format format = Format::kDecimalSI;
  int pow10 = 0;
  int pow2 = 0;
  bool known = false;
  for (const Suffix& s : kSuffixes) {
    if (s.text == suffix) {
      format = s.format;
      (s.format == Format::kBinarySI ? pow2 : pow10) = s.power;
      known = true;
      break;
    }
  }
  if (!known) {
    // A decimal exponent: e or E followed by an optionally signed integer.
    bool exponent = suffix.size() > 1 && (suffix[0] == 'e' || suffix[0] == 'E');
    size_t j = 1;
    bool exp_negative = false;
    if (exponent && (suffix[j] == '+' || suffix[j] == '-')) exp_negative = suffix[j++] == '-';
    exponent = exponent && j < suffix.size();
    int exp = 0;
    for (; exponent && j < suffix.size(); ++j) {
      if (!std::isdigit(static_cast<unsigned char>(suffix[j]))) {
        exponent = false;
        break;
      }
      exp = exp * 10 + (suffix[j] - '0');
      if (exp > 1000) return Invalid(text, "its exponent is out of range");
    }
    if (!exponent) {
      return Invalid(text, "unknown suffix " + Quoted(suffix) +
                               " (use one of n u m k M G T P E, Ki Mi Gi Ti Pi Ei, or an "
                               "exponent such as e3)");
    }
    format = Format::kDecimalExponent;
    pow10 = exp_negative ? -exp : exp;
  }

  // Normalise the digits: no leading zeros, trailing zeros moved into the scale.
  size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return Quantity(0, format);
  digits.erase(0, first);
  while (digits.back() == '0') {
    digits.pop_back();
    ++scale;
  }
  // milli = digits * 10^exp10 * 2^pow2. Digits below 10^-19 cannot matter once rounded up to a
  // whole milli-unit (2^pow2 < 10^19), so drop them and remember that the value was not exact.
  int exp10 = scale + pow10 + 3;
  bool inexact = false;
  if (exp10 < -19) {
    const size_t drop = static_cast<size_t>(-19 - exp10);
    digits.resize(drop >= digits.size() ? 0 : digits.size() - drop);
    inexact = true;  // trailing zeros are gone, so a dropped digit was not zero
    exp10 = -19;
  }
  if (static_cast<int>(digits.size()) + exp10 > 19) return TooLarge(text);
  int128 mantissa = 0;
  for (char c : digits) mantissa = mantissa * 10 + (c - '0');

  const int128 limit = static_cast<int128>(kMax) + (negative ? 1 : 0);
  const int128 den = exp10 < 0 ? Pow10(-exp10) : 1;
  int128 whole = exp10 >= 0 ? mantissa * Pow10(exp10) : mantissa / den;
  const int128 frac = exp10 >= 0 ? 0 : mantissa % den;
  if (whole > limit) return TooLarge(text);
  whole <<= pow2;  // < 2^124
  const int128 frac_scaled = frac << pow2;
  whole += frac_scaled / den;
  inexact = inexact || frac_scaled % den != 0;
  // Round up: away from zero for positive values, toward zero for negative ones (a ceiling).
  if (inexact && !negative) ++whole;
  if (whole > limit) return TooLarge(text);
  const int128 milli = whole;
  int64_t value = negative ? static_cast<int64_t>(-milli) : static_cast<int64_t>(milli);
  return Quantity(value, format);
}

int64_t Quantity::units_ceil() const {
  int64_t q = milli_ / 1000;
  return (milli_ % 1000 > 0) ? q + 1 : q;
}

std::string Quantity::ToString() const {
  if (milli_ == 0) return "0";
  const bool negative = milli_ < 0;
  // Work on the magnitude in 128 bits so that INT64_MIN has one.
  int128 magnitude = negative ? -static_cast<int128>(milli_) : static_cast<int128>(milli_);
  auto digits_of = [](int128 v) {
    std::string s;
    do {
      s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
      v /= 10;
    } while (v != 0);
    return s;
  };
  const std::string sign = negative ? "-" : "";

  Format format = format_;
  if (format == Format::kBinarySI) {
    // Below 1024, or not a whole number of units, the apiserver prints decimal SI.
    if (magnitude < 1024 * 1000 || magnitude % 1000 != 0) format = Format::kDecimalSI;
  }
  if (format == Format::kBinarySI) {
    static constexpr std::array<std::string_view, 7> kBinary{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    int128 units = magnitude / 1000;
    size_t power = 0;
    while (power + 1 < kBinary.size() && units % 1024 == 0) {
      units /= 1024;
      ++power;
    }
    return sign + digits_of(units) + std::string(kBinary[power]);
  }

  // Decimal: strip factors of ten into the exponent, then lower the exponent to a multiple of 3.
  int exponent = -3;
  while (magnitude % 10 == 0) {
    magnitude /= 10;
    ++exponent;
  }
  int rem = ((exponent % 3) + 3) % 3;
  for (int k = 0; k < rem; ++k) {
    magnitude *= 10;
    --exponent;
  }
  std::string suffix;
  if (format == Format::kDecimalExponent) {
    if (exponent != 0) suffix = "e" + std::to_string(exponent);
  } else {
    switch (exponent) {
      case -3:
        suffix = "m";
        break;
      case 0:
        break;
      case 3:
        suffix = "k";
        break;
      case 6:
        suffix = "M";
        break;
      case 9:
        suffix = "G";
        break;
      case 12:
        suffix = "T";
        break;
      case 15:
        suffix = "P";
        break;
      default:
        suffix = "e" + std::to_string(exponent);
        break;  // not reachable in int64 milli
    }
  }
  return sign + digits_of(magnitude) + suffix;
}

Result<Quantity> Quantity::Add(Quantity other) const {
  int64_t out;
  if (__builtin_add_overflow(milli_, other.milli_, &out)) {
    return OutOfRange("sum of " + ToString() + " and " + other.ToString() + " overflows");
  }
  return Quantity(out, format_);
}

Result<Quantity> Quantity::Sub(Quantity other) const {
  int64_t out;
  if (__builtin_sub_overflow(milli_, other.milli_, &out)) {
    return OutOfRange("difference of " + ToString() + " and " + other.ToString() + " overflows");
  }
  return Quantity(out, format_);
}

Result<Quantity> Quantity::Times(int64_t count) const {
  int64_t out;
  if (__builtin_mul_overflow(milli_, count, &out)) {
    return OutOfRange(ToString() + " times " + std::to_string(count) + " overflows");
  }
  return Quantity(out, format_);
}

}  // namespace rota
