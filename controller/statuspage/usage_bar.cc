#include "usage_bar.h"

#include <algorithm>

#include "html.h"

namespace rota::statuspage {
namespace {

constexpr double kBarHeight = 16, kTrackY = 2, kTrackHeight = 12;

// "a100 nvidia.com/gpu: 10 in use of 8 nominal, 2 borrowed (limit 4)", escaped.
std::string Tooltip(const ResourceUsage& u) {
  const double in_use = std::max(u.in_use, 0.0), nominal = std::max(u.nominal, 0.0);
  std::string text = u.flavor + " " + u.resource + ": " + Amount(in_use, u.unit) + " in use of " +
                     Amount(nominal, u.unit) + " nominal";
  if (in_use > nominal) text += ", " + Amount(in_use - nominal, u.unit) + " borrowed";
  if (u.borrowing_limit) text += " (borrowing limit " + Amount(std::max(*u.borrowing_limit, 0.0), u.unit) + ")";
  return Escape(text);
}

std::string Rect(const char* cls, double x, double width, const char* fill) {
  return "<rect class=\"" + std::string(cls) + "\" x=\"" + Px(x) + "\" y=\"" + Px(kTrackY) + "\" width=\"" + Px(width) +
         "\" height=\"" + Px(kTrackHeight) + "\" fill=\"" + fill + "\"/>";
}

}  // namespace

UsageBarGeometry ComputeUsageBar(const ResourceUsage& usage, double width) {
  const double nominal = std::max(usage.nominal, 0.0), in_use = std::max(usage.in_use, 0.0);
  const double limit = usage.borrowing_limit ? std::max(*usage.borrowing_limit, 0.0) : 0.0;
  const double scale = std::max(nominal + limit, in_use);
  UsageBarGeometry g;
  g.width = width;
  if (scale <= 0) return g;
  const auto x = [&](double amount) { return width * amount / scale; };
  g.nominal_x = x(nominal);
  g.limit_x = x(nominal + limit);
  g.used_width = x(std::min(in_use, nominal));
  g.borrowed_x = g.nominal_x;
  g.borrowed_width = x(std::max(in_use - nominal, 0.0));
  return g;
}

std::string RenderUsageBar(const ResourceUsage& usage) {
  const UsageBarGeometry g = ComputeUsageBar(usage);
  std::string svg = "<svg class=\"usage-bar\" width=\"" + Px(g.width) + "\" height=\"" + Px(kBarHeight) +
                    "\" viewBox=\"0 0 " + Px(g.width) + " " + Px(kBarHeight) + "\" role=\"img\"><title>" +
                    Tooltip(usage) + "</title>";
  svg += Rect("track", 0, g.width, "#e5e7eb");
  svg += Rect("headroom", g.nominal_x, g.limit_x - g.nominal_x, "#fbe3cc");
  svg += Rect("used", 0, g.used_width, kUsedColour);
  svg += Rect("borrowed", g.borrowed_x, g.borrowed_width, kBorrowedColour);
  svg += "<line class=\"nominal\" x1=\"" + Px(g.nominal_x) + "\" x2=\"" + Px(g.nominal_x) + "\" y1=\"0\" y2=\"" +
         Px(kBarHeight) + "\" stroke=\"#374151\" stroke-width=\"1.5\"/>";
  return svg + "</svg>";
}

}  // namespace rota::statuspage
