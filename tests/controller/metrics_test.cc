#include "metrics.h"

#include <gtest/gtest.h>

#include <string>

namespace rota::controller {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

// A pass replaces the gauges of the ClusterQueues that changed and drops those of a queue gone;
// every other queue's series stay as they were.
TEST(MetricsTest, ReplacingSomeQueuesGaugesLeavesTheOthers) {
  Metrics m;
  const Labels one = {{"cluster_queue", "cq-1"}, {"status", "active"}};
  const Labels ten = {{"cluster_queue", "cq-10"}, {"status", "active"}};  // "cq-1" is a prefix of its name
  const Labels usage = {{"cluster_queue", "cq-1"}, {"flavor", "a100"}, {"resource", "nvidia.com/gpu"}};
  const std::vector<std::string> gauges = {"kueue_pending_workloads", "kueue_cluster_queue_resource_usage"};
  m.ReplaceGaugeSeries(
      gauges, "cluster_queue", {"cq-1", "cq-10"},
      {{"kueue_pending_workloads", {{one, 3}, {ten, 5}}}, {"kueue_cluster_queue_resource_usage", {{usage, 2}}}});
  std::string text = m.Render();
  ASSERT_TRUE(Has(text, R"(kueue_pending_workloads{cluster_queue="cq-1",status="active"} 3)")) << text;
  ASSERT_TRUE(Has(
      text, R"(kueue_cluster_queue_resource_usage{cluster_queue="cq-1",flavor="a100",resource="nvidia.com/gpu"} 2)"));

  // cq-1 changed: its new series replace all of its old ones (usage it no longer has is gone).
  m.ReplaceGaugeSeries(gauges, "cluster_queue", {"cq-1"}, {{"kueue_pending_workloads", {{one, 4}}}});
  text = m.Render();
  EXPECT_TRUE(Has(text, R"(kueue_pending_workloads{cluster_queue="cq-1",status="active"} 4)")) << text;
  EXPECT_TRUE(Has(text, R"(kueue_pending_workloads{cluster_queue="cq-10",status="active"} 5)")) << text;
  EXPECT_EQ(text.find(R"(kueue_cluster_queue_resource_usage{cluster_queue="cq-1")"), std::string::npos) << text;

  // cq-10 is gone: nothing of it is left, and cq-1 is untouched.
  m.ReplaceGaugeSeries(gauges, "cluster_queue", {"cq-10"}, {});
  text = m.Render();
  EXPECT_EQ(text.find(R"(cluster_queue="cq-10")"), std::string::npos) << text;
  EXPECT_TRUE(Has(text, R"(kueue_pending_workloads{cluster_queue="cq-1",status="active"} 4)")) << text;
}

// A queue whose spec is unchanged has its counts set through the slots of its series: the value
// shows in the next scrape, and replacing another queue's series leaves the slots valid.
TEST(MetricsTest, GaugeSlotsSetTheirSeriesUntilReplaced) {
  Metrics m;
  const Labels one = {{"cluster_queue", "cq-1"}, {"status", "active"}};
  const Labels two = {{"cluster_queue", "cq-2"}, {"status", "active"}};
  const std::vector<std::string> gauges = {"kueue_pending_workloads"};
  m.ReplaceGaugeSeries(gauges, "cluster_queue", {"cq-1", "cq-2"}, {{"kueue_pending_workloads", {{one, 3}, {two, 5}}}});
  const std::vector<Metrics::GaugeSlot> slots =
      m.GaugeSlots({{"kueue_pending_workloads", one}, {"kueue_pending_workloads", {{"cluster_queue", "cq-3"}}}});
  ASSERT_EQ(slots.size(), 2u);
  ASSERT_NE(slots[0], nullptr);
  EXPECT_EQ(slots[1], nullptr);  // no such series

  m.ReplaceGaugeSeries(gauges, "cluster_queue", {"cq-2"}, {{"kueue_pending_workloads", {{two, 6}}}});
  m.SetGaugeValues({{slots[0], 7}, {slots[1], 9}});  // (a null slot is skipped)
  const std::string text = m.Render();
  EXPECT_TRUE(Has(text, R"(kueue_pending_workloads{cluster_queue="cq-1",status="active"} 7)")) << text;
  EXPECT_TRUE(Has(text, R"(kueue_pending_workloads{cluster_queue="cq-2",status="active"} 6)")) << text;
  EXPECT_EQ(text.find(R"(cluster_queue="cq-3")"), std::string::npos) << text;
}

// A pass observes its admissions' waits per queue at once; the histogram counts each one, as
// observing them one by one does.
TEST(MetricsTest, ObservingManyAtOnceCountsEach) {
  Metrics one_by_one, at_once;
  const Labels cq = {{"cluster_queue", "cq-1"}};
  const std::vector<double> waits = {0.5, 3, 3, 700};
  for (double w : waits) one_by_one.Observe("kueue_admission_wait_time_seconds", cq, w);
  at_once.Observe("kueue_admission_wait_time_seconds", cq, waits);
  const std::string text = at_once.Render();
  EXPECT_EQ(text, one_by_one.Render());
  EXPECT_TRUE(Has(text, R"(kueue_admission_wait_time_seconds_count{cluster_queue="cq-1"} 4)")) << text;
  EXPECT_TRUE(Has(text, R"(kueue_admission_wait_time_seconds_sum{cluster_queue="cq-1"} 706.5)")) << text;
}

}  // namespace
}  // namespace rota::controller
