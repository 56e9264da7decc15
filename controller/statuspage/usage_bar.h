#pragma once
// The usage bar of one resource of a ClusterQueue: in use against nominal quota, the part
// borrowed beyond nominal in another colour, drawn as inline SVG.

#include <string>

#include "status_page.h"

namespace rota::statuspage {

// Colours the bar paints (the in-Chromium test looks for them in a screenshot).
inline constexpr const char* kUsedColour = "#1f77b4";      // in use within nominal
inline constexpr const char* kBorrowedColour = "#ff7f0e";  // in use beyond nominal
inline constexpr double kUsageBarWidth = 160;

// Where the bar's parts lie, in px from its left edge. The bar's full width stands for
// max(nominal + borrowing limit, in use) (the limit counted as 0 when absent), so without a
// borrowing limit and within quota the used part is width * in_use / nominal. All zero but
// `width` when there is neither quota nor usage. Negative amounts count as 0.
struct UsageBarGeometry {
  double width = 0;
  double nominal_x = 0;       // the nominal quota's end, marked by a line
  double limit_x = 0;         // nominal + borrowing limit's end (== nominal_x without a limit)
  double used_width = 0;      // in use up to nominal, from x = 0
  double borrowed_x = 0;      // == nominal_x
  double borrowed_width = 0;  // in use beyond nominal
};

UsageBarGeometry ComputeUsageBar(const ResourceUsage& usage, double width = kUsageBarWidth);

// <svg class="usage-bar"> with a <title> tooltip saying the amounts; every string escaped.
std::string RenderUsageBar(const ResourceUsage& usage);

}  // namespace rota::statuspage
