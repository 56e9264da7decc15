#include "yaml_json.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <string_view>

namespace rota::yaml {
namespace {

using Json = nlohmann::json;

// Scalars that look like numbers, matched by hand: std::regex recurses once a character, and a long
// scalar would overflow the stack.
size_t Digits(std::string_view v, size_t& i, bool hex = false) {
  const size_t from = i;
  while (i < v.size() &&
         (hex ? std::isxdigit(static_cast<unsigned char>(v[i])) : std::isdigit(static_cast<unsigned char>(v[i]))))
    ++i;
  return i - from;
}
void Sign(std::string_view v, size_t& i) { i += i < v.size() && (v[i] == '+' || v[i] == '-'); }
bool IsInt(std::string_view v) {  // [-+]?[0-9]+
  size_t i = 0;
  Sign(v, i);
  return Digits(v, i) > 0 && i == v.size();
}
bool IsHex(std::string_view v) {  // 0x[0-9a-fA-F]+
  size_t i = 2;
  return v.starts_with("0x") && Digits(v, i, true) > 0 && i == v.size();
}
bool IsFloat(std::string_view v) {  // [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
  size_t i = 0;
  Sign(v, i);
  size_t digits = Digits(v, i);
  if (i < v.size() && v[i] == '.') digits += Digits(v, ++i);
  if (digits == 0) return false;
  if (i < v.size() && (v[i] == 'e' || v[i] == 'E')) {
    Sign(v, ++i);
    if (Digits(v, i) == 0) return false;
  }
  return i == v.size();
}

// The value of a scalar `v` with yaml-cpp's `tag` ("?" when plain, "!" when quoted).
Json Scalar(const std::string& tag, const std::string& v) {
  if (tag == "!" || tag == "tag:yaml.org,2002:str") return Json(v);  // quoted or !!str
  if (v.empty() || v == "~" || v == "null" || v == "Null" || v == "NULL") return Json(nullptr);
  if (v == "true" || v == "True" || v == "TRUE") return Json(true);
  if (v == "false" || v == "False" || v == "FALSE") return Json(false);
  if (IsInt(v)) {
    try {
      size_t used = 0;
      long long n = std::stoll(v, &used);
      if (used == v.size()) return Json(static_cast<int64_t>(n));
    } catch (const std::out_of_range&) {
      // Falls through to a float, as JSON would carry it.
    }
  }
  if (IsHex(v)) {
    try {
      return Json(static_cast<int64_t>(std::stoll(v, nullptr, 16)));
    } catch (const std::out_of_range&) {
      return Json(std::strtod(v.c_str(), nullptr));  // as a decimal too large for an integer
    }
  }
  if (IsFloat(v)) {
    try {
      return Json(std::stod(v));
    } catch (const std::out_of_range&) {
      return Json(v);
    }
  }
  return Json(v);
}

// The code point of the UTF-8 sequence at `i` of `text`, and its length in `n`: 0 when the bytes
// there are not UTF-8 (overlong forms, surrogates and code points past U+10FFFF are not either).
uint32_t DecodeUtf8(std::string_view text, size_t i, size_t& n) {
  const auto c = static_cast<unsigned char>(text[i]);
  n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > text.size()) return n = 0;
  uint32_t cp = n == 1 ? c : c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(text[i + k]);
    if ((b >> 6) != 0x2) return n = 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) n = 0;
  return cp;
}

// Whether YAML allows `cp` in a stream (its c-printable): no control characters but tab, line
// feed, carriage return and next line. (yaml-cpp would read a NUL in a plain scalar as a backslash.)
bool Printable(uint32_t cp) {
  return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0x7E) || cp == 0x85 ||
         (cp >= 0xA0 && cp <= 0xFFFD) || cp >= 0x10000;
}

// Why `text` cannot be YAML, naming the line and byte, or "". (JSON strings must be UTF-8: a value
// that is not could not be printed, in an error message or a write.)
std::string BadCharacter(const std::string& text) {
  for (size_t i = 0, n = 0; i < text.size(); i += n) {
    const uint32_t cp = DecodeUtf8(text, i, n);
    if (n != 0 && Printable(cp)) continue;
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<long>(i), '\n');
    const std::string where = "line " + std::to_string(line) + ": byte " + std::to_string(i);
    if (n == 0) return where + " is not valid UTF-8 (YAML manifests are UTF-8)";
    char code[16];
    std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(cp));
    return where + " is the control character " + code + ", which YAML does not allow";
  }
  return "";
}

// `s` as UTF-8. yaml-cpp writes the escapes \N and \_ as single bytes, 0x85 and 0xA0 (their
// Latin-1 codes), which are not UTF-8: a byte that is not part of a UTF-8 sequence is read as Latin-1.
std::string AsUtf8(const std::string& s) {
  std::string out;
  for (size_t i = 0, n = 0; i < s.size(); i += n) {
    (void)DecodeUtf8(s, i, n);
    if (n != 0) {
      out.append(s, i, n);
      continue;
    }
    const auto c = static_cast<unsigned char>(s[i]);
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
    n = 1;
  }
  return out;
}

// What aliases may add to a file, counting each value they copy (and each anchored value kept to
// be copied) as kBytesPerValue plus the text of its strings and keys. An alias can name a node
// full of aliases, so a short text could otherwise expand past any memory (a "billion laughs");
// the limit is the file's, so that many documents cannot each expand to just under it.
constexpr size_t kMaxCopiedBytes = size_t{64} << 20;
constexpr size_t kBytesPerValue = 64;

// Builds each document's JSON from yaml-cpp's parse events. (Not YAML::LoadAll: on a token no node
// can start with, such as a ',' outside [] or {}, yaml-cpp 0.7 makes an empty document without
// moving past it, and LoadAll asks for documents without end.)
class JsonBuilder : public YAML::EventHandler {
 public:
  explicit JsonBuilder(const std::string& text) : text_(text) {}
  std::vector<Json>& documents() { return documents_; }

  void OnDocumentStart(const YAML::Mark& mark) override;
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    static const std::string kNull = "null";  // as a key, as yaml-cpp reads it
    Finish(Json(nullptr), &kNull, mark, anchor, kBytesPerValue);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    const std::string text = AsUtf8(value);
    Finish(Scalar(tag, text), &text, mark, anchor, kBytesPerValue + text.size());
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override;
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(Json::array(), mark, anchor);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(Json::object(), mark, anchor);
  }
  void OnMapEnd() override { Close(); }
  void OnAnchor(const YAML::Mark&, const std::string& name) override { anchor_name_ = name; }

 private:
  // A sequence or map being built; a map holds its next key until the value comes.
  struct Building {
    Json value;
    YAML::Mark mark;
    YAML::anchor_t anchor;
    std::string anchor_name;
    size_t bytes = kBytesPerValue;  // what it would cost to copy
    std::optional<std::string> key;
  };
  // A finished anchored node, kept for its aliases.
  struct Anchored {
    Json value;
    std::optional<std::string> scalar;  // its text when a scalar, for an alias used as a key
    size_t bytes;
  };

  void Open(Json value, const YAML::Mark& mark, YAML::anchor_t anchor);
  void Close();
  void Finish(Json value, const std::string* scalar, const YAML::Mark& mark, YAML::anchor_t anchor, size_t bytes);
  void Charge(size_t bytes, const YAML::Mark& mark);

  const std::string& text_;
  std::vector<Json> documents_;
  std::vector<Building> open_;
  std::map<YAML::anchor_t, Anchored> anchored_;
  std::string anchor_name_;  // from OnAnchor, for the node event that follows
  std::optional<size_t> last_start_;
  size_t copied_ = 0;
};

void JsonBuilder::OnDocumentStart(const YAML::Mark& mark) {
  if (last_start_ == static_cast<size_t>(mark.pos)) {
    const size_t at = static_cast<size_t>(mark.pos);
    throw YAML::ParserException(mark,
                                at < text_.size() ? "unexpected '" + text_.substr(at, 1) + "'" : "unexpected end");
  }
  last_start_ = static_cast<size_t>(mark.pos);
  anchored_.clear();  // (anchors are the document's)
}

void JsonBuilder::OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) {
  auto it = anchored_.find(anchor);
  if (it == anchored_.end()) {
    // yaml-cpp has refused names it has not seen: this one names a node still open, one the alias is in.
    auto in = std::find_if(open_.begin(), open_.end(), [&](const Building& b) { return b.anchor == anchor; });
    throw YAML::ParserException(mark,
                                "*" + (in == open_.end() ? "" : in->anchor_name) + " is inside the node it names");
  }
  const Anchored& a = it->second;
  Charge(a.bytes, mark);
  Finish(a.value, a.scalar ? &*a.scalar : nullptr, mark, YAML::NullAnchor, a.bytes);
}

void JsonBuilder::Open(Json value, const YAML::Mark& mark, YAML::anchor_t anchor) {
  open_.push_back(Building{std::move(value), mark, anchor, anchor != YAML::NullAnchor ? anchor_name_ : ""});
}

void JsonBuilder::Close() {
  Building done = std::move(open_.back());
  open_.pop_back();
  Finish(std::move(done.value), nullptr, done.mark, done.anchor, done.bytes);
}

// Puts a finished node where it goes: in the open sequence or map, or as the document.
void JsonBuilder::Finish(Json value, const std::string* scalar, const YAML::Mark& mark, YAML::anchor_t anchor,
                         size_t bytes) {
  if (anchor != YAML::NullAnchor) {
    Charge(bytes, mark);
    anchored_[anchor] = Anchored{value, scalar ? std::optional<std::string>(*scalar) : std::nullopt, bytes};
  }
  if (open_.empty()) {
    documents_.push_back(std::move(value));
    return;
  }
  Building& in = open_.back();
  in.bytes += bytes;
  if (in.value.is_array()) {
    in.value.push_back(std::move(value));
  } else if (!in.key) {
    if (!scalar) throw YAML::ParserException(mark, "a map key must be a scalar, not a list or a map");
    in.key = *scalar;
  } else {
    in.value[*in.key] = std::move(value);  // (a key given twice: the last value counts)
    in.key.reset();
  }
}

void JsonBuilder::Charge(size_t bytes, const YAML::Mark& mark) {
  copied_ += bytes;
  if (copied_ > kMaxCopiedBytes) {
    throw YAML::ParserException(mark, "aliases expand to more than " + std::to_string(kMaxCopiedBytes >> 20) +
                                          " MiB (aliases of aliases without end?)");
  }
}

}  // namespace

Result<std::vector<Json>> ParseDocuments(const std::string& text) {
  if (std::string bad = BadCharacter(text); !bad.empty()) return InvalidArgument(bad);
  std::istringstream in(text);
  JsonBuilder builder(text);
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(builder)) {
    }
  } catch (const YAML::Exception& e) {
    // (yaml-cpp says "bad file" when nodes nest deeper than it recurses.)
    const bool deep = dynamic_cast<const YAML::DeepRecursion*>(&e) != nullptr;
    return InvalidArgument("line " + std::to_string(e.mark.line + 1) + ", column " + std::to_string(e.mark.column + 1) +
                           ": " + (deep ? "lists and maps nested too deep" : e.msg));
  }
  return std::move(builder.documents());
}

}  // namespace rota::yaml
