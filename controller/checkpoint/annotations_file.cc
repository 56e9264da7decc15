#include "checkpoint/annotations_file.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

namespace rota::checkpoint {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The value of `digits` characters of `text` from `at` in base 16, or -1 when they are not.
int64_t HexValue(std::string_view text, size_t at, size_t digits) {
  if (at + digits > text.size()) return -1;
  int64_t v = 0;
  for (size_t i = at; i < at + digits; ++i) {
    const int d = HexDigit(text[i]);
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

void AppendUtf8(uint32_t rune, std::string& out) {
  if (rune < 0x80) {
    out += static_cast<char>(rune);
  } else if (rune < 0x800) {
    out += static_cast<char>(0xC0 | (rune >> 6));
    out += static_cast<char>(0x80 | (rune & 0x3F));
  } else if (rune < 0x10000) {
    out += static_cast<char>(0xE0 | (rune >> 12));
    out += static_cast<char>(0x80 | ((rune >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (rune & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (rune >> 18));
    out += static_cast<char>(0x80 | ((rune >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((rune >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (rune & 0x3F));
  }
}

// Decodes the escape whose letter is body[i] (the one after the backslash) into `out`: the index
// of the first character after it, or 0 when it is not a valid escape.
size_t Unescape(std::string_view body, size_t i, std::string& out) {
  static constexpr std::string_view kLetters = "abfnrtv\\\"", kMeanings = "\a\b\f\n\r\t\v\\\"";
  if (i >= body.size()) return 0;
  const char c = body[i];
  if (const size_t k = kLetters.find(c); k != std::string_view::npos) {
    out += kMeanings[k];
    return i + 1;
  }
  if (c == 'x') {
    const int64_t v = HexValue(body, i + 1, 2);
    if (v < 0) return 0;
    out += static_cast<char>(v);
    return i + 3;
  }
  if (c == 'u' || c == 'U') {
    const size_t digits = c == 'u' ? 4 : 8;
    const int64_t v = HexValue(body, i + 1, digits);
    if (v < 0 || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    AppendUtf8(static_cast<uint32_t>(v), out);
    return i + 1 + digits;
  }
  // \ooo: three octal digits, at most 377.
  if (i + 3 > body.size()) return 0;
  int v = 0;
  for (size_t k = i; k < i + 3; ++k) {
    if (body[k] < '0' || body[k] > '7') return 0;
    v = v * 8 + (body[k] - '0');
  }
  if (v > 255) return 0;
  out += static_cast<char>(v);
  return i + 3;
}

}  // namespace

Result<std::string> UnquoteGo(std::string_view quoted) {
  if (quoted.size() < 2 || quoted.front() != '"' || quoted.back() != '"')
    return InvalidArgument("the value is not a double-quoted string");
  const std::string_view body = quoted.substr(1, quoted.size() - 2);
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size();) {
    if (body[i] == '"') return InvalidArgument("an unescaped \" inside the value");
    if (body[i] != '\\') {
      out += body[i++];
      continue;
    }
    const size_t next = Unescape(body, i + 1, out);
    if (next == 0) return InvalidArgument("a bad escape at offset " + std::to_string(i + 1) + " of the value");
    i = next;
  }
  return out;
}

Result<Annotations> ParseAnnotations(std::string_view text) {
  Annotations out;
  int number = 0;
  while (!text.empty()) {
    ++number;
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.empty()) continue;
    // (An annotation's key has no '=' in it, so the first one ends the key.)
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos || eq == 0)
      return InvalidArgument("line " + std::to_string(number) + ": not key=\"value\"");
    auto value = UnquoteGo(line.substr(eq + 1));
    if (!value.ok()) return value.status().WithContext("line " + std::to_string(number));
    out[std::string(line.substr(0, eq))] = std::move(*value);
  }
  return out;
}

Result<Annotations> ReadAnnotationsFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    return Status(err == ENOENT ? StatusCode::kNotFound : StatusCode::kInvalidArgument,
                  path + ": cannot be read: " + std::strerror(err));
  }
  std::ostringstream text;
  text << in.rdbuf();
  auto parsed = ParseAnnotations(text.str());
  if (!parsed.ok()) return parsed.status().WithContext(path);
  return parsed;
}

}  // namespace rota::checkpoint
