// What ParseKeeping keeps of the objects in a response: the informers' caches and the status
// writer's replies rely on it leaving out exactly metadata.managedFields (or all but metadata).

#include <gtest/gtest.h>

#include <string>
#include <vector>

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

TEST(ParseKeepingTest, MetadataEqualsTheFullParseCutToItsThreeFields) {
  // Arrays and objects inside metadata, values of every JSON type, a nested managedFields key.
  const std::string text = R"({"apiVersion":"v1","kind":"Workload","metadata":{"name":"w",
    "finalizers":["a","b"],"ownerReferences":[{"kind":"Job","controller":true,"uid":"u"}],
    "generation":3,"deletionGracePeriodSeconds":null,"weight":1.5,"annotations":{"x":"managedFields"},
    "managedFields":[{"manager":"m","fieldsV1":{"f:spec":{"f:a":{}}}}],"resourceVersion":"7"},
    "spec":{"podSets":[{"count":2}]}})";
  Json expected = Json::parse(text);
  expected.erase("spec");
  expected["metadata"].erase("managedFields");
  EXPECT_EQ(ParseKeeping(text, 1, Keep::kMetadata), expected);
}

TEST(ParseKeepingTest, MetadataStopsReadingAtTheEndOfTheMetadata) {
  // What follows the metadata is never read: here it is cut off mid-way, as if unread.
  const std::string text =
      R"({"apiVersion":"v1","kind":"Workload","metadata":{"name":"w","resourceVersion":"9"},"spec":{"podSets":[)";
  const Json kept = ParseKeeping(text, 1, Keep::kMetadata);
  ASSERT_FALSE(kept.is_discarded());
  EXPECT_EQ(kept["metadata"].value("resourceVersion", ""), "9");
  // The same text is not JSON to a reader that wants the rest.
  EXPECT_TRUE(ParseKeeping(text, 1, Keep::kAllButManagedFields).is_discarded());
}

TEST(ParseKeepingTest, MetadataFindsFieldsInAnyOrder) {
  const Json kept = ParseKeeping(R"({"metadata":{"resourceVersion":"5","managedFields":[]},"status":{"a":[1,{"b":2}]},
                                     "kind":"Workload","spec":{},"apiVersion":"v1"})",
                                 1, Keep::kMetadata);
  EXPECT_EQ(kept, Json::parse(R"({"apiVersion":"v1","kind":"Workload","metadata":{"resourceVersion":"5"}})"));
  // Without apiVersion or kind the whole text is read; what is there is kept.
  EXPECT_EQ(ParseKeeping(R"({"metadata":{"name":"n"},"spec":{"x":1}})", 1, Keep::kMetadata),
            Json::parse(R"({"metadata":{"name":"n"}})"));
  // A document that is not an object is kept as it is.
  EXPECT_EQ(ParseKeeping("[1,2]", 1, Keep::kMetadata), Json::parse("[1,2]"));
}

// Every JSON value reads back as nlohmann's own parser reads it, whichever way ParseKeeping
// takes (simdjson for what it accepts, nlohmann's reader for the rest).
TEST(ParseKeepingTest, ValuesReadAsNlohmannReadsThem) {
  const std::vector<std::string> values = {"0",
                                           "7",
                                           "-7",
                                           "9223372036854775807",
                                           "-9223372036854775808",
                                           "18446744073709551615",
                                           "18446744073709551616",  // beyond 64 bits: a double to nlohmann
                                           "1.5",
                                           "-0.25",
                                           "1e300",
                                           "2E-3",
                                           "true",
                                           "false",
                                           "null",
                                           R"("")",
                                           R"("a\"b\\c\n\u00e9\ud83d\ude00")",
                                           R"("ü")",
                                           "[]",
                                           "{}",
                                           R"([1,[2,[3,{}]]])",
                                           R"({"a":1,"a":2})"};
  for (const std::string& v : values) {
    const std::string text =
        R"({"apiVersion":"v1","kind":"K","metadata":{"name":"n","x":)" + v + R"(},"spec":{"y":)" + v + "}}";
    const Json want = Json::parse(text);
    for (Keep keep : {Keep::kAll, Keep::kAllButManagedFields}) {
      const Json got = ParseKeeping(text, 1, keep);
      EXPECT_EQ(got, want) << v;
      // The same kinds of number, not only equal ones (nlohmann tells signed from unsigned).
      EXPECT_EQ(got["spec"]["y"].type(), want["spec"]["y"].type()) << v;
    }
    Json meta = want;
    meta.erase("spec");
    EXPECT_EQ(ParseKeeping(text, 1, Keep::kMetadata), meta) << v;
  }
}

TEST(ParseKeepingTest, ALargeListIsReadWholeAndSmallTextsAfterIt) {
  // A list page larger than what a thread's parser keeps between texts.
  std::string list = R"({"kind":"WorkloadList","metadata":{"resourceVersion":"43"},"items":[)";
  constexpr int kItems = 700;
  for (int i = 0; i < kItems; ++i) list += std::string(i ? "," : "") + kWorkload;
  list += "]}";
  ASSERT_GT(list.size(), 256u * 1024);
  const Json l = ParseKeeping(list, 3, Keep::kAllButManagedFields);
  ASSERT_EQ(l["items"].size(), static_cast<size_t>(kItems));
  EXPECT_FALSE(l["items"][kItems - 1]["metadata"].contains("managedFields"));
  EXPECT_EQ(ParseKeeping(kWorkload, 1, Keep::kMetadata)["metadata"].value("resourceVersion", ""), "42");
}

TEST(ParseKeepingTest, DeepNestingIsReadWithoutRecursingThatDeep) {
  // Deeper than simdjson reads: the slow way reads it, and nothing overflows the stack.
  constexpr int kDepth = 20000;
  const std::string text = std::string(kDepth, '[') + std::string(kDepth, ']');
  const Json got = ParseKeeping(text, 1, Keep::kAllButManagedFields);
  ASSERT_FALSE(got.is_discarded());
  EXPECT_EQ(got, Json::parse(text));
}

TEST(ParseKeepingTest, TextThatIsNotJsonIsDiscardedNotThrown) {
  EXPECT_TRUE(ParseKeeping(R"({"metadata":{"managedFields":[)", 1, Keep::kAllButManagedFields).is_discarded());
  EXPECT_TRUE(ParseKeeping("not json", 1, Keep::kMetadata).is_discarded());
  EXPECT_TRUE(ParseKeeping(R"({"apiVersion":"v1","kind":"K","metadata":{"name":)", 1, Keep::kMetadata).is_discarded());
}

}  // namespace
}  // namespace rota::apiclient
