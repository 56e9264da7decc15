#include "cache/cluster_cache.h"

#include <gtest/gtest.h>

namespace rota::controller {
namespace {

TEST(DecodeCachedClusterQueueTest, AQueueRotaCannotReadIsKeptWithTheReason) {
  auto q = DecodeCachedClusterQueue(api::Json::parse(R"({"metadata": {"name": "big", "resourceVersion": "7"},
      "spec": {"resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": [{"name": "a100",
      "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "10P"}]}]}]}})"));
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(q->metadata.name, "big");
  EXPECT_EQ(q->metadata.resource_version, "7");
  EXPECT_TRUE(q->spec.resource_groups.empty());
  EXPECT_NE(q->unusable.find("spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: \"10P\" is too large"),
            std::string::npos)
      << q->unusable;
}

TEST(DecodeCachedClusterQueueTest, AReadableQueueIsUsableAndANamelessOneAnError) {
  auto ok = DecodeCachedClusterQueue(api::Json::parse(R"({"metadata": {"name": "team"}, "spec": {}})"));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->unusable, "");
  EXPECT_FALSE(DecodeCachedClusterQueue(api::Json::parse(R"({"spec": {"cohortName": 5}})")).ok());
}

}  // namespace
}  // namespace rota::controller
