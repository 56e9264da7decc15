#include "yaml_json.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <regex>

namespace rota::yaml {
namespace {

using Json = nlohmann::json;

Json Scalar(const YAML::Node& node) {
  const std::string& v = node.Scalar();
  const std::string& tag = node.Tag();
  if (tag == "!" || tag == "tag:yaml.org,2002:str") return Json(v);  // quoted or !!str
  static const std::regex kInt(R"([-+]?[0-9]+)");
  static const std::regex kHex(R"(0x[0-9a-fA-F]+)");
  static const std::regex kFloat(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
  if (v.empty() || v == "~" || v == "null" || v == "Null" || v == "NULL") return Json(nullptr);
  if (v == "true" || v == "True" || v == "TRUE") return Json(true);
  if (v == "false" || v == "False" || v == "FALSE") return Json(false);
  if (std::regex_match(v, kInt)) {
    try {
      size_t used = 0;
      long long n = std::stoll(v, &used);
      if (used == v.size()) return Json(static_cast<int64_t>(n));
    } catch (const std::out_of_range&) {
      // Falls through to a float, as JSON would carry it.
    }
  }
  if (std::regex_match(v, kHex)) {
    try {
      return Json(static_cast<int64_t>(std::stoll(v, nullptr, 16)));
    } catch (const std::out_of_range&) {
      return Json(std::strtod(v.c_str(), nullptr));  // as a decimal too large for an integer
    }
  }
  if (std::regex_match(v, kFloat)) {
    try {
      return Json(std::stod(v));
    } catch (const std::out_of_range&) {
      return Json(v);
    }
  }
  return Json(v);
}

// More values than a document may expand to: aliases can make a short text expand without end
// (a "billion laughs"), and no Kubernetes object has anywhere near this many.
constexpr size_t kMaxValues = 1'000'000;

struct TooManyValues {};

// `budget` counts down the values a document may still hold; throws TooManyValues past it.
Json Convert(const YAML::Node& node, size_t& budget) {
  if (budget == 0) throw TooManyValues{};
  --budget;
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return Json(nullptr);
    case YAML::NodeType::Scalar:
      return Scalar(node);
    case YAML::NodeType::Sequence: {
      Json out = Json::array();
      for (const auto& item : node) out.push_back(Convert(item, budget));
      return out;
    }
    case YAML::NodeType::Map: {
      Json out = Json::object();
      for (const auto& kv : node) out[kv.first.as<std::string>()] = Convert(kv.second, budget);
      return out;
    }
  }
  return Json(nullptr);
}

// The offset of the first byte of `text` that is not part of valid UTF-8, or npos. (JSON strings
// must be UTF-8: a value that is not could not be printed, in an error message or a write.)
size_t InvalidUtf8At(const std::string& text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > text.size()) return i;
    uint32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (size_t k = 1; k < n; ++k) {
      const auto b = static_cast<unsigned char>(text[i + k]);
      if ((b >> 6) != 0x2) return i;
      cp = (cp << 6) | (b & 0x3F);
    }
    // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8 either.
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return i;
    i += n;
  }
  return std::string::npos;
}

}  // namespace

Result<std::vector<Json>> ParseDocuments(const std::string& text) {
  std::vector<Json> out;
  if (const size_t at = InvalidUtf8At(text); at != std::string::npos) {
    const size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
    return InvalidArgument("line " + std::to_string(line) + ": byte " + std::to_string(at) +
                           " is not valid UTF-8 (YAML manifests are UTF-8)");
  }
  try {
    for (const YAML::Node& doc : YAML::LoadAll(text)) {
      size_t budget = kMaxValues;
      out.push_back(Convert(doc, budget));
    }
  } catch (const TooManyValues&) {
    return InvalidArgument("document " + std::to_string(out.size() + 1) + ": more than " + std::to_string(kMaxValues) +
                           " values (aliases that expand without end?)");
  } catch (const YAML::Exception& e) {
    return InvalidArgument("line " + std::to_string(e.mark.line + 1) + ", column " + std::to_string(e.mark.column + 1) +
                           ": " + e.msg);
  }
  return out;
}

}  // namespace rota::yaml
