#include "html.h"

#include <gtest/gtest.h>

namespace rota::statuspage {
namespace {

TEST(StatusPageHtml, Escape) {
  EXPECT_EQ(Escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(Escape("plain-name.v1"), "plain-name.v1");
  EXPECT_EQ(Escape("ünïcode"), "ünïcode");
}

TEST(StatusPageHtml, Count) {
  EXPECT_EQ(Count(0), "0");
  EXPECT_EQ(Count(999), "999");
  EXPECT_EQ(Count(1000), "1,000");
  EXPECT_EQ(Count(12000), "12,000");
  EXPECT_EQ(Count(1234567), "1,234,567");
}

TEST(StatusPageHtml, Amount) {
  EXPECT_EQ(Amount(6), "6");
  EXPECT_EQ(Amount(40, "Gi"), "40Gi");
  EXPECT_EQ(Amount(2.5, "Gi"), "2.5Gi");
  EXPECT_EQ(Amount(1.0 / 3), "0.33");
  EXPECT_EQ(Amount(-0.0001), "0");
  EXPECT_EQ(Px(53.3333), "53.33");
}

}  // namespace
}  // namespace rota::statuspage
