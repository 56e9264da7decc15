#include "rota/kubectl/table.h"

#include <gtest/gtest.h>

#include <sstream>

namespace rota::kubectl {
namespace {

TEST(TableTest, AlignsColumnsThreeSpacesApartWithoutTrailingBlanks) {
  Table t({"NAME", "COHORT", "USAGE"});
  t.AddRow({"team-llm", "ml", "[##--]"});
  t.AddRow({"a", "", ""});
  std::ostringstream out;
  t.Render(out);
  EXPECT_EQ(out.str(),
            "NAME       COHORT   USAGE\n"
            "team-llm   ml       [##--]\n"
            "a\n");
}

TEST(TableTest, PadsShortRowsAndDropsExtraCells) {
  Table t({"A", "B"});
  t.AddRow({"1"});
  t.AddRow({"1", "2", "3"});
  std::ostringstream out;
  t.Render(out);
  EXPECT_EQ(out.str(), "A   B\n1\n1   2\n");
}

}  // namespace
}  // namespace rota::kubectl
