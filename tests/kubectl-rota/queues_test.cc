#include "rota/kubectl/queues.h"

#include <gtest/gtest.h>

#include <sstream>

#include "samples.h"

namespace rota::kubectl {
namespace {

using namespace samples;

QueueSummary Sample() {
  Json cq = ClusterQueueJson("team-llm", "ml", 8);
  cq["spec"]["resourceGroups"][1]["flavors"][0]["resources"][0]["borrowingLimit"] = "4";
  SetQueueStatus(cq, 10, 2, 3, 5);
  return SummarizeQueue(Decode<api::ClusterQueue>(cq));
}

TEST(QueuesTest, SummarizesQuotaAndStatusByFlavorAndResource) {
  const QueueSummary q = Sample();
  EXPECT_EQ(q.name, "team-llm");
  EXPECT_EQ(q.cohort, "ml");
  EXPECT_EQ(q.pending, 3);
  EXPECT_EQ(q.admitted, 5);
  ASSERT_EQ(q.lines.size(), 2u);
  EXPECT_EQ(q.lines[0].resource, "cpu");
  EXPECT_EQ(q.lines[0].nominal, 64000);
  EXPECT_EQ(q.lines[0].in_use, 0);
  const QuotaLine& gpu = q.lines[1];
  EXPECT_EQ(gpu.flavor, "a100");
  EXPECT_EQ(gpu.nominal, 8000);
  EXPECT_EQ(gpu.in_use, 10000);
  EXPECT_EQ(gpu.borrowed, 2000);
  EXPECT_EQ(gpu.reserved, 10000);
  EXPECT_EQ(gpu.borrowing_limit, 4000);
  EXPECT_FALSE(gpu.lending_limit);
}

TEST(QueuesTest, TheTableShowsGpusWithABarThatShowsBorrowing) {
  std::ostringstream out;
  RenderQueues({Sample()}, false, out);
  EXPECT_EQ(
      out.str(),
      "NAME       COHORT   RESOURCE         NOMINAL   BORROWED   IN USE   PENDING   ADMITTED   USAGE\n"
      "team-llm   ml       nvidia.com/gpu   8         2          10       3         5          [##########]+++\n");
}

TEST(QueuesTest, AQueueWithoutGpusShowsItsOtherResources) {
  Json cq = ClusterQueueJson("cpu-only", "", 0);
  cq["spec"]["resourceGroups"].erase(1);
  std::ostringstream out;
  RenderQueues({SummarizeQueue(Decode<api::ClusterQueue>(cq))}, false, out);
  EXPECT_NE(
      out.str().find("cpu-only   <none>   cpu        64        0          0        0         0          [----------]"),
      std::string::npos)
      << out.str();
}

TEST(QueuesTest, WideShowsEveryResourceOfEveryFlavorWithLimits) {
  std::ostringstream out;
  RenderQueues({Sample()}, true, out);
  const std::string text = out.str();
  EXPECT_NE(text.find("NAME       COHORT   FLAVOR   RESOURCE         NOMINAL   BORROWED   IN USE   RESERVED   "
                      "BORROWING LIMIT   LENDING LIMIT   PENDING   ADMITTED   STOP POLICY   USAGE"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("team-llm   ml       cpu      cpu              64        0          0        0          <none>"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("a100     nvidia.com/gpu   8         2          10       10         4                 <none>"),
            std::string::npos)
      << text;
}

TEST(QueuesTest, TheDocumentListsEveryResource) {
  const Json doc = QueuesDocument({Sample()});
  EXPECT_EQ(doc["kind"], "QueueSummaryList");
  const Json& q = doc["items"][0];
  EXPECT_EQ(q["pendingWorkloads"], 3);
  EXPECT_EQ(q["resources"][1], Json::parse(R"({"flavor": "a100", "resource": "nvidia.com/gpu", "nominal": "8",
      "borrowed": "2", "inUse": "10", "reserved": "10", "borrowingLimit": "4"})"));
}

}  // namespace
}  // namespace rota::kubectl
