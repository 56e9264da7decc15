#include "rota/kubectl/output.h"

#include <gtest/gtest.h>

#include <sstream>

namespace rota::kubectl {
namespace {

using Json = nlohmann::json;

TEST(OutputTest, ListDocumentsHaveRotasApiVersion) {
  const Json doc = ListDocument("QueueSummaryList", Json::array({{{"name", "a"}}}));
  EXPECT_EQ(doc["apiVersion"], "rota.dev/v1alpha1");
  EXPECT_EQ(doc["kind"], "QueueSummaryList");
  EXPECT_EQ(doc["items"][0]["name"], "a");
}

TEST(OutputTest, YamlQuotesStringsThatWouldReadAsAnotherType) {
  const Json doc = {{"nominal", "8"},
                    {"ok", "true"},
                    {"none", "null"},
                    {"empty", ""},
                    {"name", "team-a"},
                    {"count", 3},
                    {"share", 0.25},
                    {"flag", false},
                    {"gone", nullptr},
                    {"colon", "a: b"},
                    {"list", {1, "2"}},
                    {"mem", "64Gi"},
                    {"at", "2026-11-01T10:00:00Z"},
                    {"yes", "no"}};
  EXPECT_EQ(ToYaml(doc),
            "at: \"2026-11-01T10:00:00Z\"\n"
            "colon: \"a: b\"\n"
            "count: 3\n"
            "empty: \"\"\n"
            "flag: false\n"
            "gone: null\n"
            "list:\n"
            "  - 1\n"
            "  - \"2\"\n"
            "mem: 64Gi\n"
            "name: team-a\n"
            "nominal: \"8\"\n"
            "none: \"null\"\n"
            "ok: \"true\"\n"
            "share: 0.25\n"
            "\"yes\": \"no\"\n");
}

TEST(OutputTest, JsonIsIndentedFourSpacesAsKubectlDoes) {
  std::ostringstream out;
  WriteDocument({{"a", 1}}, Output::kJson, out);
  EXPECT_EQ(out.str(), "{\n    \"a\": 1\n}\n");
}

}  // namespace
}  // namespace rota::kubectl
