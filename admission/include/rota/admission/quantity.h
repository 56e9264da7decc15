#pragma once

// Kubernetes resource quantities ("500m", "36Gi", "1e3", "0.5", "nvidia.com/gpu: 4"), held as an
// exact integer number of milli-units so that the engine adds and compares them without rounding.
//
// Parsing follows k8s.io/apimachinery's resource.ParseQuantity: an optionally signed decimal
// number, then a suffix that is binary SI (Ki Mi Gi Ti Pi Ei), decimal SI (n u m "" k M G T P E)
// or a decimal exponent (e3, E-2). The suffix kind is remembered so that ToString() gives the form
// the apiserver canonicalises to (e.g. "1.5" -> "1500m", "1024Mi" -> "1Gi", "1000m" -> "1").
//
// Range and precision: values are stored in milli-units in an int64, so the magnitude is limited
// to 9223372036854775807m (about 9.2e15 units, 8 Pi); larger values are rejected with kOutOfRange.
// Precision finer than a milli-unit ("1n", "0.0001") is rounded up to the next milli-unit, as
// Kubernetes' MilliValue() rounds; such values then print in their rounded form ("1m").

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "rota/admission/status.h"

namespace rota {

class Quantity {
 public:
  // How the quantity was written, which decides how it is printed.
  enum class Format { kDecimalSI, kBinarySI, kDecimalExponent };

  constexpr Quantity() = default;  // zero

  // Parses `text`; the error says what is wrong with it (no object or field names: callers add
  // those with Status::WithContext).
  static Result<Quantity> Parse(std::string_view text);

  static constexpr Quantity FromMilli(int64_t milli, Format format = Format::kDecimalSI) {
    return Quantity(milli, format);
  }
  // Whole units; `units` must be within +-9223372036854775 (checked by the caller's domain).
  static constexpr Quantity FromUnits(int64_t units, Format format = Format::kDecimalSI) {
    return Quantity(units * 1000, format);
  }

  constexpr int64_t milli() const { return milli_; }
  // Whole units, rounded up (away from zero for positive values), like Kubernetes' Value().
  int64_t units_ceil() const;
  constexpr Format format() const { return format_; }
  constexpr bool is_zero() const { return milli_ == 0; }

  // The apiserver's canonical text for this value in this format.
  std::string ToString() const;

  // Checked arithmetic: kOutOfRange on overflow. The result keeps this quantity's format.
  Result<Quantity> Add(Quantity other) const;
  Result<Quantity> Sub(Quantity other) const;
  // Multiplies by a count (pods in a pod set).
  Result<Quantity> Times(int64_t count) const;

  // Compares values only; the format is presentation.
  friend constexpr bool operator==(Quantity a, Quantity b) { return a.milli_ == b.milli_; }
  friend constexpr std::strong_ordering operator<=>(Quantity a, Quantity b) { return a.milli_ <=> b.milli_; }

 private:
  constexpr Quantity(int64_t milli, Format format) : milli_(milli), format_(format) {}

  int64_t milli_ = 0;
  Format format_ = Format::kDecimalSI;
};

}  // namespace rota
