#pragma once

// JSON (de)serialisation of rota's typed API objects, driven by one field list per type.
//
// Each type lists its fields once, in a static template `Fields(Self& self, V& v)`:
//
//   template <class Self, class V> static void Fields(Self& s, V& v) {
//     v.Required("name", s.name);
//     v.Optional("borrowingLimit", s.borrowing_limit);
//   }
//
// and keeps every JSON key it does not type in `Extra extra`, so an object read and written back
// loses nothing (fields of newer Kueue versions, annotations rota ignores, managedFields, ...).
//
// Decoding errors name the field path and what was wrong; DecodeObject() puts the kind and name of
// the object in front: `ClusterQueue "team-a": spec.resourceGroups[0].flavors[0].resources[0]
// .nominalQuota: "4x" is not a valid quantity: unknown suffix "x"`.

#include <concepts>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "rota/admission/quantity.h"
#include "rota/admission/status.h"

namespace rota::api {

using Json = nlohmann::json;
// JSON keys a type does not model, kept as they came (an object, possibly empty).
using Extra = Json;

// A JSON value held read-only and shared: copies of the object holding it share one value, and a
// JsonInterner makes equal values share one copy (a cache of many Workloads with the same pod
// template keeps the template once). Null when empty.
class SharedJson {
 public:
  SharedJson() = default;
  explicit SharedJson(Json value) : value_(std::make_shared<const Json>(std::move(value))) {}
  explicit SharedJson(std::shared_ptr<const Json> value) : value_(std::move(value)) {}
  const Json& get() const;
  const std::shared_ptr<const Json>& shared() const { return value_; }

 private:
  std::shared_ptr<const Json> value_;
};

// An optional value held on the heap: std::optional's interface (what rota uses of it), with
// value semantics (a copy copies the value), in the size of a pointer. For a large part of an
// object that many objects lack (a Workload waiting for admission has no status, and a cache of
// thousands of them would otherwise hold room for one in each).
template <typename T>
class Boxed {
 public:
  using value_type = T;
  Boxed() = default;
  Boxed(std::nullopt_t) {}                                           // NOLINT: as std::optional converts
  Boxed(T value) : value_(std::make_unique<T>(std::move(value))) {}  // NOLINT: as std::optional converts
  Boxed(const Boxed& o) : value_(o.value_ ? std::make_unique<T>(*o.value_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& o) {
    if (this != &o) value_ = o.value_ ? std::make_unique<T>(*o.value_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  Boxed& operator=(std::nullopt_t) {
    value_.reset();
    return *this;
  }

  bool has_value() const { return value_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return value_.get(); }
  const T* operator->() const { return value_.get(); }
  T& value() {
    if (!value_) throw std::bad_optional_access();
    return *value_;
  }
  const T& value() const {
    if (!value_) throw std::bad_optional_access();
    return *value_;
  }
  T value_or(T fallback) const { return value_ ? *value_ : std::move(fallback); }
  template <typename... Args>
  T& emplace(Args&&... args) {
    value_ = std::make_unique<T>(std::forward<Args>(args)...);
    return *value_;
  }
  void reset() { value_.reset(); }

 private:
  std::unique_ptr<T> value_;
};

// Hands out one shared copy per distinct JSON value (by its serialisation) for as long as some
// holder keeps it. Thread-safe.
class JsonInterner {
 public:
  SharedJson Intern(const SharedJson& value);
  size_t size() const;  // distinct values held somewhere

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::weak_ptr<const Json>> by_text_;
  size_t sweep_at_ = 1024;  // forget values nobody holds when this many are remembered
};

// Enums are mapped to and from their API strings by a specialisation of EnumNames<E> with
// `static constexpr std::pair<E, std::string_view> kValues[]`.
template <typename E>
struct EnumNames;

template <typename E>
concept ApiEnum = std::is_enum_v<E> && requires {
  EnumNames<E>::kValues;
};

template <typename E>
requires ApiEnum<E> std::string_view EnumName(E value) {
  for (const auto& [v, name] : EnumNames<E>::kValues) {
    if (v == value) return name;
  }
  return "";
}

class Decoder;
class Encoder;

template <typename T>
concept HasFields = requires(T& t, Decoder& d) {
  T::Fields(t, d);
};

namespace codec_internal {
std::string TypeName(const Json& j);
std::string Quote(std::string_view s);

// Where a value sits in the document being decoded, for error messages: a chain of parts that
// lives on the decoder's stack and becomes text ("spec.podSets[0].template") only when a message
// names it. Building that text for every field read would cost a decode an allocation or more
// per field.
class Path {
 public:
  explicit Path(const std::string& root) : root_(&root) {}
  Path(const Path& parent, const char* key) : parent_(&parent), key_(key), kind_(Kind::kKey) {}
  Path(const Path& parent, size_t index) : parent_(&parent), index_(index), kind_(Kind::kIndex) {}
  Path(const Path& parent, const std::string& map_key) : parent_(&parent), map_key_(&map_key), kind_(Kind::kMapKey) {}
  Path(const Path&) = delete;
  Path& operator=(const Path&) = delete;

  std::string str() const;
  friend std::string operator+(const Path& p, std::string_view s) { return p.str().append(s); }

 private:
  enum class Kind { kRoot, kKey, kIndex, kMapKey };
  const Path* parent_ = nullptr;
  const std::string* root_ = nullptr;
  const char* key_ = nullptr;
  size_t index_ = 0;
  const std::string* map_key_ = nullptr;
  Kind kind_ = Kind::kRoot;
};

template <typename T>
Status DecodeAt(const Json& j, const Path& path, T& out);
}  // namespace codec_internal

// Reads one JSON value into T; the error message starts with `path`.
template <typename T>
Status DecodeValue(const Json& j, const std::string& path, T& out);

// Writes T as JSON; `omit` tells whether an optional field with this value is left out.
template <typename T>
Json EncodeValue(const T& value);
template <typename T>
bool IsEmptyValue(const T& value);

// Decodes the fields of one JSON object into a type with Fields().
class Decoder {
 public:
  Decoder(const Json& object, const codec_internal::Path& path) : object_(object), path_(path) {}

  template <typename T>
  void Required(const char* key, T& out) {
    Visit(key, out, /*required=*/true);
  }
  template <typename T>
  void Optional(const char* key, T& out) {
    Visit(key, out, /*required=*/false);
  }

  // Called after Fields(): returns the first error, and moves unknown keys into `extra`.
  // `extra` stays null when there are none (no allocation for the common case). When as many of
  // the object's keys were found as it has, none is unknown and the keys are not compared at all
  // (a Fields() asks for each key once).
  Status Finish(Extra& extra) {
    extra = Json();
    if (!status_.ok()) return status_;
    if (found_ == object_.size()) return status_;
    for (const auto& [key, value] : object_.items()) {
      bool is_known = false;
      for (size_t i = 0; i < known_count_ && !is_known; ++i) is_known = key == Known(i);
      if (!is_known) extra[key] = value;
    }
    return status_;
  }

 private:
  template <typename T>
  void Visit(const char* key, T& out, bool required) {
    if (known_count_ < kInlineKeys)
      known_[known_count_] = key;
    else
      more_known_.push_back(key);
    ++known_count_;
    if (!status_.ok()) return;
    auto it = object_.find(key);
    if (it == object_.end()) {
      if (required) status_ = InvalidArgument(codec_internal::Path(path_, key) + ": is required");
      return;
    }
    ++found_;  // (a null value is a key of the object all the same)
    if (it->is_null()) {
      if (required) status_ = InvalidArgument(codec_internal::Path(path_, key) + ": is required");
      return;
    }
    status_ = codec_internal::DecodeAt(*it, codec_internal::Path(path_, key), out);
  }
  const char* Known(size_t i) const { return i < kInlineKeys ? known_[i] : more_known_[i - kInlineKeys]; }

  static constexpr size_t kInlineKeys = 24;  // more than any kind's fields at one level
  const Json& object_;
  const codec_internal::Path& path_;
  const char* known_[kInlineKeys] = {};
  size_t known_count_ = 0;
  std::vector<const char*> more_known_;
  size_t found_ = 0;  // keys of the object that Fields() asked for
  Status status_;
};

// Encodes the fields of a type with Fields() into a JSON object that starts from its Extra.
class Encoder {
 public:
  explicit Encoder(const Extra& extra) : out_(extra.is_object() ? extra : Json::object()) {}

  // Required fields are always written; optional ones only when they hold something.
  template <typename T>
  void Required(const char* key, const T& value) {
    out_[key] = EncodeValue(value);
  }
  template <typename T>
  void Optional(const char* key, const T& value) {
    if (IsEmptyValue(value)) {
      out_.erase(key);
    } else {
      out_[key] = EncodeValue(value);
    }
  }

  Json Take() && { return std::move(out_); }

 private:
  Json out_;
};

// ---- value codecs --------------------------------------------------------------------------

template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <typename T>
struct IsOptional<Boxed<T>> : std::true_type {};
template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};
template <typename T>
struct IsStringMap : std::false_type {};
template <typename T>
struct IsStringMap<std::map<std::string, T>> : std::true_type {};

template <typename T>
Status DecodeValue(const Json& j, const std::string& path, T& out) {
  return codec_internal::DecodeAt(j, codec_internal::Path(path), out);
}

template <typename T>
Status codec_internal::DecodeAt(const Json& j, const Path& path, T& out) {
  if constexpr (std::is_same_v<T, Json>) {
    out = j;
    return Status::Ok();
  } else if constexpr (std::is_same_v<T, SharedJson>) {
    out = SharedJson(j);
    return Status::Ok();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!j.is_string()) return InvalidArgument(path + ": must be a string, not " + TypeName(j));
    out = j.get<std::string>();
    return Status::Ok();
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!j.is_boolean()) return InvalidArgument(path + ": must be true or false, not " + TypeName(j));
    out = j.get<bool>();
    return Status::Ok();
  } else if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
    if (!j.is_number_integer()) {
      return InvalidArgument(path + ": must be an integer, not " + TypeName(j));
    }
    if constexpr (std::is_same_v<T, int32_t>) {
      if (j.is_number_unsigned() ? j.get<uint64_t>() > INT32_MAX
                                 : (j.get<int64_t>() > INT32_MAX || j.get<int64_t>() < INT32_MIN)) {
        return OutOfRange(path + ": " + j.dump() + " does not fit in a 32-bit integer");
      }
    } else if (j.is_number_unsigned() && j.get<uint64_t>() > INT64_MAX) {
      return OutOfRange(path + ": " + j.dump() + " does not fit in a 64-bit integer");
    }
    out = static_cast<T>(j.get<int64_t>());
    return Status::Ok();
  } else if constexpr (std::is_same_v<T, Quantity>) {
    std::string text;
    if (j.is_string()) {
      text = j.get<std::string>();
    } else if (j.is_number()) {
      text = j.dump();  // 8 -> "8", 0.5 -> "0.5", 1e3 -> "1000.0"
    } else {
      return InvalidArgument(path + ": must be a quantity such as 4, 500m or 80Gi, not " + TypeName(j));
    }
    Result<Quantity> q = Quantity::Parse(text);
    if (!q.ok()) return q.status().WithContext(path.str());
    out = *q;
    return Status::Ok();
  } else if constexpr (ApiEnum<T>) {
    if (!j.is_string()) return InvalidArgument(path + ": must be a string, not " + TypeName(j));
    const std::string s = j.get<std::string>();
    std::string allowed;
    for (const auto& [v, name] : EnumNames<T>::kValues) {
      if (s == name) {
        out = v;
        return Status::Ok();
      }
      allowed += (allowed.empty() ? "" : ", ") + std::string(name);
    }
    return InvalidArgument(path + ": unsupported value " + Quote(s) + ": use one of " + allowed);
  } else if constexpr (IsOptional<T>::value) {
    typename T::value_type v{};
    Status s = DecodeAt(j, path, v);
    if (s.ok()) out = std::move(v);
    return s;
  } else if constexpr (IsVector<T>::value) {
    if (!j.is_array()) return InvalidArgument(path + ": must be a list, not " + TypeName(j));
    out.clear();
    out.reserve(j.size());
    for (size_t i = 0; i < j.size(); ++i) {
      typename T::value_type v{};
      Status s = DecodeAt(j[i], Path(path, i), v);
      if (!s.ok()) return s;
      out.push_back(std::move(v));
    }
    return Status::Ok();
  } else if constexpr (IsStringMap<T>::value) {
    if (!j.is_object()) return InvalidArgument(path + ": must be a map, not " + TypeName(j));
    out.clear();
    for (const auto& [key, value] : j.items()) {
      typename T::mapped_type v{};
      Status s = DecodeAt(value, Path(path, key), v);
      if (!s.ok()) return s;
      out.emplace(key, std::move(v));
    }
    return Status::Ok();
  } else if constexpr (HasFields<T>) {
    if (!j.is_object()) return InvalidArgument(path + ": must be an object, not " + TypeName(j));
    Decoder d(j, path);
    T::Fields(out, d);
    return d.Finish(out.extra);
  } else {
    static_assert(sizeof(T) == 0, "no JSON codec for this type");
  }
}

template <typename T>
Json EncodeValue(const T& value) {
  if constexpr (std::is_same_v<T, Json>) {
    return value;
  } else if constexpr (std::is_same_v<T, SharedJson>) {
    return value.get();
  } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, bool> || std::is_same_v<T, int32_t> ||
                       std::is_same_v<T, int64_t>) {
    return Json(value);
  } else if constexpr (std::is_same_v<T, Quantity>) {
    return Json(value.ToString());
  } else if constexpr (ApiEnum<T>) {
    return Json(std::string(EnumName(value)));
  } else if constexpr (IsOptional<T>::value) {
    return value ? EncodeValue(*value) : Json(nullptr);
  } else if constexpr (IsVector<T>::value) {
    Json out = Json::array();
    for (const auto& v : value) out.push_back(EncodeValue(v));
    return out;
  } else if constexpr (IsStringMap<T>::value) {
    Json out = Json::object();
    for (const auto& [k, v] : value) out[k] = EncodeValue(v);
    return out;
  } else if constexpr (HasFields<T>) {
    Encoder e(value.extra);
    T::Fields(value, e);
    return std::move(e).Take();
  } else {
    static_assert(sizeof(T) == 0, "no JSON codec for this type");
  }
}

template <typename T>
bool IsEmptyValue(const T& value) {
  if constexpr (IsOptional<T>::value) {
    return !value.has_value();
  } else if constexpr (std::is_same_v<T, std::string> || IsVector<T>::value || IsStringMap<T>::value) {
    return value.empty();
  } else if constexpr (std::is_same_v<T, Json>) {
    return value.is_null();
  } else if constexpr (std::is_same_v<T, SharedJson>) {
    return value.get().is_null();
  } else {
    return false;
  }
}

}  // namespace rota::api
