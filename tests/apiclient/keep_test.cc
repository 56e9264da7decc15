// What ParseKeeping keeps of the objects in a response: the informers' caches and the status
// writer's replies rely on it leaving out exactly metadata.managedFields (or all but metadata).

#include <gtest/gtest.h>

#include "rota/apiclient/client.h"

namespace rota::apiclient {
namespace {

// A Workload as the apiserver sends it, with fields named like the ones that are left out in
// places where they must be kept (a label and a spec field called managedFields).
const char* kWorkload = R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload",
  "metadata":{"name":"w","namespace":"team-a","resourceVersion":"42",
              "labels":{"managedFields":"label value"},
              "managedFields":[{"manager":"rota","operation":"Apply","fieldsV1":{"f:status":{}}}]},
  "spec":{"queueName":"q","managedFields":{"kept":true}},
  "status":{"conditions":[{"type":"QuotaReserved","status":"True"}]}})";

TEST(ParseKeepingTest, AllButManagedFieldsLeavesOutOnlyTheMetadataField) {
  const Json all = Json::parse(kWorkload);
  const Json kept = ParseKeeping(kWorkload, 1, Keep::kAllButManagedFields);
  ASSERT_TRUE(kept.is_object());
  EXPECT_FALSE(kept["metadata"].contains("managedFields"));
  Json expected = all;
  expected["metadata"].erase("managedFields");
  EXPECT_EQ(kept, expected);  // the label and spec field of that name included
  EXPECT_EQ(ParseKeeping(kWorkload, 1, Keep::kAll), all);
}

TEST(ParseKeepingTest, MetadataKeepsIdentityAndResourceVersionOnly) {
  const Json kept = ParseKeeping(kWorkload, 1, Keep::kMetadata);
  EXPECT_EQ(kept.value("kind", ""), "Workload");
  EXPECT_EQ(kept.value("apiVersion", ""), "kueue.x-k8s.io/v1beta2");
  EXPECT_EQ(kept["metadata"].value("resourceVersion", ""), "42");
  EXPECT_EQ(kept["metadata"]["labels"].value("managedFields", ""), "label value");
  EXPECT_FALSE(kept["metadata"].contains("managedFields"));
  EXPECT_FALSE(kept.contains("spec"));
  EXPECT_FALSE(kept.contains("status"));
}

TEST(ParseKeepingTest, FindsTheObjectsOfWatchEventsAndListsAtTheirDepth) {
  const std::string event = std::string(R"({"type":"MODIFIED","object":)") + kWorkload + "}";
  const Json e = ParseKeeping(event, 2, Keep::kAllButManagedFields);
  EXPECT_EQ(e.value("type", ""), "MODIFIED");
  EXPECT_FALSE(e["object"]["metadata"].contains("managedFields"));
  EXPECT_EQ(e["object"]["metadata"].value("name", ""), "w");
  EXPECT_TRUE(e["object"]["spec"].contains("managedFields"));

  const std::string list = std::string(R"({"kind":"WorkloadList","metadata":{"resourceVersion":"43"},"items":[)") +
                           kWorkload + "," + kWorkload + "]}";
  const Json l = ParseKeeping(list, 3, Keep::kAllButManagedFields);
  EXPECT_EQ(l["metadata"].value("resourceVersion", ""), "43");
  ASSERT_EQ(l["items"].size(), 2u);
  for (const Json& item : l["items"]) {
    EXPECT_FALSE(item["metadata"].contains("managedFields"));
    EXPECT_EQ(item["status"]["conditions"][0].value("type", ""), "QuotaReserved");
  }
}

TEST(ParseKeepingTest, TextThatIsNotJsonIsDiscardedNotThrown) {
  EXPECT_TRUE(ParseKeeping(R"({"metadata":{"managedFields":[)", 1, Keep::kAllButManagedFields).is_discarded());
  EXPECT_TRUE(ParseKeeping("not json", 1, Keep::kMetadata).is_discarded());
}

}  // namespace
}  // namespace rota::apiclient
