// The usage bar's geometry: in use against nominal, borrowed beyond it, on one scale.
#include "usage_bar.h"

#include <gtest/gtest.h>

#include <ostream>
#include <regex>
#include <string>

namespace rota::statuspage {
namespace {

struct BarCase {
  const char* name;
  ResourceUsage usage;
  UsageBarGeometry want;
};

// Test names show the case, not its bytes.
void PrintTo(const BarCase& c, std::ostream* os) { *os << c.name; }

class UsageBarGeometryTest : public ::testing::TestWithParam<BarCase> {};

TEST_P(UsageBarGeometryTest, Computes) {
  const BarCase& c = GetParam();
  const UsageBarGeometry g = ComputeUsageBar(c.usage, 160);
  EXPECT_DOUBLE_EQ(g.width, c.want.width);
  EXPECT_DOUBLE_EQ(g.nominal_x, c.want.nominal_x);
  EXPECT_DOUBLE_EQ(g.limit_x, c.want.limit_x);
  EXPECT_DOUBLE_EQ(g.used_width, c.want.used_width);
  EXPECT_DOUBLE_EQ(g.borrowed_x, c.want.borrowed_x);
  EXPECT_DOUBLE_EQ(g.borrowed_width, c.want.borrowed_width);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, UsageBarGeometryTest,
    ::testing::Values(
        // Without a borrowing limit and within quota the used part is width * in_use / nominal.
        BarCase{"within_nominal", {"f", "gpu", "", 8, std::nullopt, 6}, {160, 160, 160, 120, 160, 0}},
        BarCase{"idle", {"f", "gpu", "", 8, std::nullopt, 0}, {160, 160, 160, 0, 160, 0}},
        BarCase{"full", {"f", "gpu", "", 8, std::nullopt, 8}, {160, 160, 160, 160, 160, 0}},
        // The scale stretches to what is in use: 10 of 8 puts nominal at 8/10 of the width.
        BarCase{"borrowing_unlimited", {"f", "gpu", "", 8, std::nullopt, 10}, {160, 128, 128, 128, 128, 32}},
        // A borrowing limit is part of the scale: nominal 8 + limit 8 = 16.
        BarCase{"limit_headroom", {"f", "gpu", "", 8, 8.0, 6}, {160, 80, 160, 60, 80, 0}},
        BarCase{"borrowing_within_limit", {"f", "gpu", "", 8, 8.0, 12}, {160, 80, 160, 80, 80, 40}},
        // Over nominal + limit (quota shrank under admitted work): the scale is what is in use.
        BarCase{"over_limit", {"f", "gpu", "", 8, 2.0, 20}, {160, 64, 80, 64, 64, 96}},
        // A queue with no nominal quota of its own: everything it uses is borrowed.
        BarCase{"zero_nominal", {"f", "gpu", "", 0, std::nullopt, 4}, {160, 0, 0, 0, 0, 160}},
        BarCase{"nothing", {"f", "gpu", "", 0, std::nullopt, 0}, {160, 0, 0, 0, 0, 0}},
        BarCase{"negative_is_zero", {"f", "gpu", "", -3, -1.0, -2}, {160, 0, 0, 0, 0, 0}}),
    [](const ::testing::TestParamInfo<BarCase>& info) { return std::string(info.param.name); });

// The numeric attribute `attr` of <rect class="cls"> in `svg`; -1 when absent.
double RectAttr(const std::string& svg, const std::string& cls, const std::string& attr) {
  const std::regex rect("<rect class=\"" + cls + "\"[^>]*?\\b" + attr + "=\"([0-9.]+)\"");
  std::smatch m;
  return std::regex_search(svg, m, rect) ? std::stod(m[1]) : -1;
}

TEST(UsageBarSvg, DrawsTheGeometryInItsColours) {
  const std::string svg = RenderUsageBar({"a100", "nvidia.com/gpu", "", 8, 8.0, 12});
  EXPECT_EQ(svg.rfind("<svg class=\"usage-bar\" width=\"160\"", 0), 0u);
  EXPECT_DOUBLE_EQ(RectAttr(svg, "track", "width"), 160);
  EXPECT_DOUBLE_EQ(RectAttr(svg, "used", "x"), 0);
  EXPECT_DOUBLE_EQ(RectAttr(svg, "used", "width"), 80);
  EXPECT_DOUBLE_EQ(RectAttr(svg, "borrowed", "x"), 80);
  EXPECT_DOUBLE_EQ(RectAttr(svg, "borrowed", "width"), 40);
  EXPECT_DOUBLE_EQ(RectAttr(svg, "headroom", "x"), 80);
  EXPECT_DOUBLE_EQ(RectAttr(svg, "headroom", "width"), 80);
  EXPECT_NE(svg.find("class=\"used\" x=\"0\" y=\"2\" width=\"80\" height=\"12\" fill=\"#1f77b4\""), std::string::npos);
  EXPECT_NE(svg.find("fill=\"#ff7f0e\""), std::string::npos);
  EXPECT_NE(svg.find("<line class=\"nominal\" x1=\"80\" x2=\"80\""), std::string::npos);
}

TEST(UsageBarSvg, TooltipSaysTheAmounts) {
  const std::string svg = RenderUsageBar({"a100", "memory", "Gi", 640, std::nullopt, 720.5});
  EXPECT_NE(svg.find("<title>a100 memory: 720.5Gi in use of 640Gi nominal, 80.5Gi borrowed</title>"),
            std::string::npos);
  EXPECT_NE(RenderUsageBar({"a100", "gpu", "", 8, 4.0, 2})
                .find("<title>a100 gpu: 2 in use of 8 nominal "
                      "(borrowing limit 4)</title>"),
            std::string::npos);
}

TEST(UsageBarSvg, FractionsAreShortNumbers) {
  const std::string svg = RenderUsageBar({"f", "gpu", "", 3, std::nullopt, 1});
  EXPECT_DOUBLE_EQ(RectAttr(svg, "used", "width"), 53.33);
}

}  // namespace
}  // namespace rota::statuspage
