#pragma once

// kubectl's plain table: upper-case headers, left-aligned columns three spaces apart, no trailing
// blanks.

#include <ostream>
#include <string>
#include <vector>

namespace rota::kubectl {

class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  // A row has as many cells as there are headers (missing cells print empty, extra ones are
  // dropped).
  void AddRow(std::vector<std::string> cells);
  bool empty() const { return rows_.empty(); }
  void Render(std::ostream& out) const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace rota::kubectl
