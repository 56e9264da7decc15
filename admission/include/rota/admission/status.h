#pragma once

// Errors as values at library boundaries (in the manner of abseil's Status and LevelDB's Status).
// A Status is either OK or carries a code and a message written for a person: it names the
// object, the field and what was wrong, e.g.
//   ClusterQueue "team-a": spec.resourceGroups[0].flavors[0].resources[0].nominalQuota:
//   "4x" is not a valid quantity: unknown suffix "x"

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace rota {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // the input is wrong; retrying the same input will not help
  kOutOfRange,       // a number does not fit (quantity overflow, count too large)
  kNotFound,
  kInternal,
};

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns this error with `context` put in front ("context: message"); OK stays OK.
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_);
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string message) { return Status(StatusCode::kInvalidArgument, std::move(message)); }
inline Status OutOfRange(std::string message) { return Status(StatusCode::kOutOfRange, std::move(message)); }

// A value or the error `E` that prevented it. Access value() only when ok(), error() only when
// not. Both convert implicitly, so a function returns either one.
template <typename T, typename E>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Expected(E error) : v_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(v_); }
  const E& error() const { return std::get<E>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<T, E> v_;
};

// A value or the Status (never OK) that prevented it.
template <typename T>
class [[nodiscard]] Result : public Expected<T, Status> {
 public:
  using Expected<T, Status>::Expected;
  // OK when there is a value.
  const Status& status() const {
    static const Status kOk;
    return this->ok() ? kOk : this->error();
  }
};

}  // namespace rota
