#pragma once

// A usage bar in plain ASCII, so that it shows in any terminal and log:
//   [######----]        6 of 10 in use
//   [##########]++      12 of 10: the 2 beyond the nominal quota are borrowed, drawn as '+'
//   [##########]++++++++++>   more than twice the nominal quota (the '+' stop at `width`)
// `width` cells stand for the nominal quota; any use shows at least one '#', and a bar is full
// only when the use reaches the quota. With no nominal quota, all use is borrowed: `width` '+'.

#include <cstdint>
#include <string>

namespace rota::kubectl {

std::string UsageBar(int64_t in_use, int64_t nominal, int width = 10);

}  // namespace rota::kubectl
