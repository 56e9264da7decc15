#include "rota/apiclient/lru.h"

#include <gtest/gtest.h>

#include <string>

namespace rota::apiclient {
namespace {

TEST(LruMapTest, ForgetsTheLeastRecentlyUsedBeyondItsCapacity) {
  LruMap<std::string, int> m(2);
  m.Put("a", 1);
  m.Put("b", 2);
  ASSERT_NE(m.Find("a"), nullptr);  // "a" is now more recent than "b"
  m.Put("c", 3);
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m.Find("b"), nullptr);
  EXPECT_EQ(*m.Find("a"), 1);
  EXPECT_EQ(*m.Find("c"), 3);
  // Setting a key again replaces its value and makes it the most recent.
  m.Put("a", 10);
  m.Put("d", 4);
  EXPECT_EQ(m.Find("c"), nullptr);
  EXPECT_EQ(*m.Find("a"), 10);
  m.EraseIf([](const std::string&, int v) { return v > 5; });
  EXPECT_EQ(m.Find("a"), nullptr);
  EXPECT_EQ(m.size(), 1u);
  m.Put("e", 5);
  m.Put("f", 6);  // room was made by EraseIf: "d" goes only now
  EXPECT_EQ(m.Find("d"), nullptr);
  EXPECT_EQ(m.size(), 2u);
}

}  // namespace
}  // namespace rota::apiclient
