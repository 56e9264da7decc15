#pragma once

// The CSV reading the trace files and the node lists share (neither quotes its fields).

#include <charconv>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace rota::replay {

// One record's fields.
inline std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

// A whole field as an integer.
inline bool ParseInt(const std::string& text, int64_t& out) {
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && p == end;
}

}  // namespace rota::replay
