#include <algorithm>

#include "rota/api/codec.h"
#include "rota/api/kueue.h"
#include "rota/api/meta.h"

namespace rota::api {

const Json& SharedJson::get() const {
  static const Json kNull;
  return value_ ? *value_ : kNull;
}

SharedJson JsonInterner::Intern(const SharedJson& value) {
  if (!value.shared()) return value;
  std::string text = value.get().dump();
  std::lock_guard<std::mutex> l(mu_);
  auto [it, fresh] = by_text_.try_emplace(std::move(text));
  if (!fresh) {
    if (auto held = it->second.lock()) return SharedJson(std::move(held));
  }
  it->second = value.shared();
  if (by_text_.size() >= sweep_at_) {
    std::erase_if(by_text_, [](const auto& entry) { return entry.second.expired(); });
    sweep_at_ = std::max<size_t>(1024, 2 * by_text_.size());
  }
  return value;
}

size_t JsonInterner::size() const {
  std::lock_guard<std::mutex> l(mu_);
  size_t n = 0;
  for (const auto& [text, held] : by_text_) n += held.expired() ? 0 : 1;
  return n;
}

namespace codec_internal {

std::string TypeName(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "a boolean (" + j.dump() + ")";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return "a number (" + j.dump() + ")";
    case Json::value_t::string:
      return "a string (" + j.dump() + ")";
    case Json::value_t::array:
      return "a list";
    case Json::value_t::object:
      return "an object";
    default:
      return "an unsupported JSON value";
  }
}

std::string Quote(std::string_view s) {
  // (Text that is not UTF-8 is printed with replacement characters rather than throwing.)
  return Json(std::string(s)).dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string Path::str() const {
  switch (kind_) {
    case Kind::kRoot:
      return *root_;
    case Kind::kKey: {
      std::string parent = parent_->str();
      return parent.empty() ? std::string(key_) : parent + "." + key_;
    }
    case Kind::kIndex:
      return parent_->str() + "[" + std::to_string(index_) + "]";
    case Kind::kMapKey:
      return parent_->str() + "[" + Quote(*map_key_) + "]";
  }
  return "";
}

}  // namespace codec_internal

const Condition* FindCondition(const std::vector<Condition>& conditions, std::string_view type) {
  for (const Condition& c : conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

bool LabelSelector::Matches(const std::map<std::string, std::string>& labels) const {
  for (const auto& [key, value] : match_labels) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  for (const LabelSelectorRequirement& r : match_expressions) {
    auto it = labels.find(r.key);
    const bool has = it != labels.end();
    const bool in_values = has && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end();
    switch (r.op) {
      case SelectorOperator::kIn:
        if (!in_values) return false;
        break;
      case SelectorOperator::kNotIn:
        if (in_values) return false;
        break;
      case SelectorOperator::kExists:
        if (!has) return false;
        break;
      case SelectorOperator::kDoesNotExist:
        if (has) return false;
        break;
    }
  }
  return true;
}

bool Toleration::Tolerates(const Taint& taint) const {
  if (effect.has_value() && *effect != taint.effect) return false;
  const TolerationOperator o = op.value_or(TolerationOperator::kEqual);
  if (key.empty()) return o == TolerationOperator::kExists;  // tolerates everything
  if (key != taint.key) return false;
  return o == TolerationOperator::kExists || value == taint.value;
}

bool WorkloadPriorityClass::preemptible() const {
  auto it = metadata.annotations.find(std::string(kPreemptibleAnnotation));
  return it == metadata.annotations.end() || it->second != "false";
}

std::string DescribeObject(std::string_view kind, const Json& object) {
  std::string name = "<unnamed>";
  std::string ns;
  if (object.is_object()) {
    auto meta = object.find("metadata");
    if (meta != object.end() && meta->is_object()) {
      auto n = meta->find("name");
      if (n != meta->end() && n->is_string()) name = n->get<std::string>();
      auto s = meta->find("namespace");
      if (s != meta->end() && s->is_string()) ns = s->get<std::string>();
    }
  }
  return std::string(kind) + " \"" + (ns.empty() ? name : ns + "/" + name) + "\"";
}

}  // namespace rota::api
