#include "rota/admission/quantity.h"

#include <gtest/gtest.h>

#include <cctype>
#include <string>

namespace rota {
namespace {

struct CanonicalCase {
  const char* input;
  int64_t milli;
  const char* canonical;  // what the apiserver stores for `input`
};

// Canonical forms as kube-apiserver writes them back (k8s.io/apimachinery resource.Quantity).
class QuantityCanonicalTest : public ::testing::TestWithParam<CanonicalCase> {};

TEST_P(QuantityCanonicalTest, ParsesAndCanonicalises) {
  const CanonicalCase& c = GetParam();
  Result<Quantity> q = Quantity::Parse(c.input);
  ASSERT_TRUE(q.ok()) << c.input << ": " << q.status().message();
  EXPECT_EQ(q->milli(), c.milli) << c.input;
  EXPECT_EQ(q->ToString(), c.canonical) << c.input;
  // The canonical form is a fixed point.
  Result<Quantity> again = Quantity::Parse(q->ToString());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->milli(), c.milli);
  EXPECT_EQ(again->ToString(), c.canonical);
}

INSTANTIATE_TEST_SUITE_P(
    Table, QuantityCanonicalTest,
    ::testing::Values(
        CanonicalCase{"0", 0, "0"}, CanonicalCase{"0Gi", 0, "0"}, CanonicalCase{"0.0", 0, "0"},
        CanonicalCase{"-0", 0, "0"}, CanonicalCase{"1", 1000, "1"}, CanonicalCase{"+1", 1000, "1"},
        CanonicalCase{"4", 4000, "4"}, CanonicalCase{"500m", 500, "500m"}, CanonicalCase{"0.5", 500, "500m"},
        CanonicalCase{".5", 500, "500m"}, CanonicalCase{"5.", 5000, "5"}, CanonicalCase{"1.5", 1500, "1500m"},
        CanonicalCase{"1000m", 1000, "1"}, CanonicalCase{"0.1", 100, "100m"}, CanonicalCase{"100m", 100, "100m"},
        CanonicalCase{"1000", 1000000, "1k"}, CanonicalCase{"1200", 1200000, "1200"},
        CanonicalCase{"12000", 12000000, "12k"}, CanonicalCase{"1.5k", 1500000, "1500"},
        CanonicalCase{"100M", 100000000000, "100M"}, CanonicalCase{"2G", 2000000000000, "2G"},
        CanonicalCase{"1e3", 1000000, "1e3"}, CanonicalCase{"1E3", 1000000, "1e3"},
        CanonicalCase{"1.5e3", 1500000, "1500"}, CanonicalCase{"1e-3", 1, "1e-3"},
        CanonicalCase{"10e2", 1000000, "1e3"}, CanonicalCase{"1e0", 1000, "1"}, CanonicalCase{"1Ki", 1024000, "1Ki"},
        CanonicalCase{"1024Ki", 1048576000, "1Mi"}, CanonicalCase{"1536Mi", 1610612736000, "1536Mi"},
        CanonicalCase{"1.5Gi", 1610612736000, "1536Mi"}, CanonicalCase{"0.5Gi", 536870912000, "512Mi"},
        CanonicalCase{"36Gi", 38654705664000, "36Gi"}, CanonicalCase{"0.5Ki", 512000, "512"},
        CanonicalCase{"1.5Ki", 1536000, "1536"}, CanonicalCase{"1.1Ki", 1126400, "1126400m"},
        CanonicalCase{"80Gi", 85899345920000, "80Gi"}, CanonicalCase{"1Ti", 1099511627776000, "1Ti"},
        CanonicalCase{"-1", -1000, "-1"}, CanonicalCase{"-500m", -500, "-500m"},
        CanonicalCase{"-2Gi", -2147483648000, "-2Gi"},
        // Finer than a milli-unit: rounded up to the next milli-unit, as MilliValue() rounds.
        CanonicalCase{"1n", 1, "1m"}, CanonicalCase{"1u", 1, "1m"}, CanonicalCase{"2000u", 2, "2m"},
        CanonicalCase{"1500u", 2, "2m"}, CanonicalCase{"1001u", 2, "2m"}, CanonicalCase{"2500000n", 3, "3m"},
        CanonicalCase{"0.0001", 1, "1m"}, CanonicalCase{"1e-30", 1, "1e-3"},
        CanonicalCase{"9223372036854775807m", INT64_MAX, "9223372036854775807m"},
        CanonicalCase{"8Pi", 9007199254740992000, "8Pi"}),
    [](const ::testing::TestParamInfo<CanonicalCase>& info) {
      // A readable test name from the input: "1.5Gi" -> "i7_1p5Gi".
      std::string name = "i" + std::to_string(info.index) + "_";
      for (const char* c = info.param.input; *c; ++c) {
        if (std::isalnum(static_cast<unsigned char>(*c)))
          name.push_back(*c);
        else if (*c == '.')
          name.push_back('p');
        else if (*c == '-')
          name.push_back('n');
      }
      return name;
    });

TEST(QuantityTest, RejectsGarbageWithAReason) {
  struct Case {
    const char* input;
    const char* message;
  };
  for (const Case& c : {
           Case{"", "\"\" is not a valid quantity: it is empty"},
           Case{"x", "\"x\" is not a valid quantity: it must start with a number"},
           Case{"4x", "\"4x\" is not a valid quantity: unknown suffix \"x\""},
           Case{"1K", "unknown suffix \"K\""},
           Case{"1 Gi", "unknown suffix \" Gi\""},
           Case{" 1", "it must start with a number"},
           Case{"1.2.3", "unknown suffix \".3\""},
           Case{"1e", "unknown suffix \"e\""},
           Case{"1e+", "unknown suffix \"e+\""},
           Case{"1e3x", "unknown suffix \"e3x\""},
           Case{"Gi", "it must start with a number"},
           Case{"--1", "it must start with a number"},
           Case{"1e99999", "its exponent is out of range"},
       }) {
    Result<Quantity> q = Quantity::Parse(c.input);
    ASSERT_FALSE(q.ok()) << c.input;
    EXPECT_EQ(q.status().code(), StatusCode::kInvalidArgument) << c.input;
    EXPECT_NE(q.status().message().find(c.message), std::string::npos) << c.input << " gave: " << q.status().message();
  }
}

TEST(QuantityTest, RejectsOverflowClearly) {
  for (const char* input : {"9223372036854775808m", "9Pi", "10P", "1E", "1Ei", "1e16", "100000000000000000000000"}) {
    Result<Quantity> q = Quantity::Parse(input);
    ASSERT_FALSE(q.ok()) << input;
    EXPECT_EQ(q.status().code(), StatusCode::kOutOfRange) << input;
    EXPECT_NE(q.status().message().find("is too large"), std::string::npos) << q.status().message();
  }
  Result<Quantity> min = Quantity::Parse("-9223372036854775808m");
  ASSERT_TRUE(min.ok());
  EXPECT_EQ(min->milli(), INT64_MIN);
  EXPECT_EQ(min->ToString(), "-9223372036854775808m");
}

TEST(QuantityTest, ComparesByValueNotFormat) {
  EXPECT_EQ(*Quantity::Parse("1Gi"), *Quantity::Parse("1073741824"));
  EXPECT_LT(*Quantity::Parse("999m"), *Quantity::Parse("1"));
  EXPECT_GT(*Quantity::Parse("1Ki"), *Quantity::Parse("1k"));
}

TEST(QuantityTest, CheckedArithmetic) {
  Quantity gpu4 = Quantity::FromUnits(4);
  Result<Quantity> sum = gpu4.Add(Quantity::FromMilli(500));
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(sum->ToString(), "4500m");
  Result<Quantity> times = Quantity::Parse("36Gi")->Times(8);
  ASSERT_TRUE(times.ok());
  EXPECT_EQ(times->ToString(), "288Gi");
  EXPECT_EQ(Quantity::FromUnits(2).Sub(Quantity::FromUnits(3))->ToString(), "-1");
  EXPECT_FALSE(Quantity::FromMilli(INT64_MAX).Add(Quantity::FromMilli(1)).ok());
  EXPECT_FALSE(Quantity::FromMilli(INT64_MIN).Sub(Quantity::FromMilli(1)).ok());
  EXPECT_FALSE(Quantity::FromUnits(1000000000000).Times(10000000).ok());
}

TEST(QuantityTest, UnitsRoundUp) {
  EXPECT_EQ(Quantity::Parse("1500m")->units_ceil(), 2);
  EXPECT_EQ(Quantity::Parse("2")->units_ceil(), 2);
  EXPECT_EQ(Quantity::Parse("1m")->units_ceil(), 1);
  EXPECT_EQ(Quantity::Parse("0")->units_ceil(), 0);
}

}  // namespace
}  // namespace rota
