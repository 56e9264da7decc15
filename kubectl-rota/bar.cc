#include "rota/kubectl/bar.h"

#include <algorithm>
#include <cmath>

namespace rota::kubectl {
namespace {

// Cells of `width` that `part` of `whole` fills, rounded, at least 1 for any part and `width` only
// for the whole.
int Cells(int64_t part, int64_t whole, int width) {
  if (part <= 0) return 0;
  if (part >= whole) return width;
  const int cells = static_cast<int>(std::lround(static_cast<double>(part) * width / static_cast<double>(whole)));
  return std::clamp(cells, 1, width - 1);
}

}  // namespace

std::string UsageBar(int64_t in_use, int64_t nominal, int width) {
  if (nominal <= 0) return "[" + std::string(width, ' ') + "]" + (in_use > 0 ? std::string(width, '+') : "");
  const int used = Cells(std::min(in_use, nominal), nominal, width);
  std::string bar = "[" + std::string(used, '#') + std::string(width - used, '-') + "]";
  const int64_t beyond = in_use - nominal;
  if (beyond <= 0) return bar;
  const int64_t cells =
      std::max<int64_t>(1, std::llround(static_cast<double>(beyond) * width / static_cast<double>(nominal)));
  bar += std::string(static_cast<size_t>(std::min<int64_t>(cells, width)), '+');
  if (cells > width) bar += '>';
  return bar;
}

}  // namespace rota::kubectl
