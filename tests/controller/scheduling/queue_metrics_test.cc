#include "scheduling/queue_metrics.h"

#include <gtest/gtest.h>

#include "small_cluster.h"

namespace rota::controller {
namespace {

using testing::GpuWorkload;
using testing::SmallCluster;

constexpr double kNow = 1793527200;  // 2026-11-01T10:00:00Z

bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

class QueueMetricsTest : public ::testing::Test {
 protected:
  QueueMetricsTest() { state_.cluster_queues[0].metadata.generation = 1; }

  // One pass over the cluster with `workloads`, recorded; returns /metrics.
  std::string Pass(std::vector<std::shared_ptr<const api::Workload>> workloads) {
    state_.workloads = std::move(workloads);
    const admission::Decisions d = testing::ScheduleAndApply(state_, builder_, workspace_);
    const QueueTally::Result tally = tally_.Count(builder_, d);
    recorder_.Record(state_, builder_, d, {}, tally.cluster_queues, 0.001, kNow);
    return metrics_.Render();
  }

  Metrics metrics_;
  QueueMetrics recorder_{metrics_};
  SchedulingTuning tuning_;
  QueueTally tally_{tuning_};
  api::ClusterState state_ = SmallCluster();
  api::SnapshotBuilder builder_;
  admission::Workspace workspace_;
};

TEST_F(QueueMetricsTest, GaugesFollowTheQueuesCountsPassByPass) {
  auto a = GpuWorkload("a", "2026-11-01T09:59:00Z"), b = GpuWorkload("b", "2026-11-01T09:59:30Z");
  std::string text = Pass({a, b});
  EXPECT_TRUE(Has(text, R"(kueue_pending_workloads{cluster_queue="team",status="active"} 1)")) << text;
  EXPECT_TRUE(Has(text, R"(kueue_admitted_active_workloads{cluster_queue="team"} 1)")) << text;
  EXPECT_TRUE(
      Has(text, R"(kueue_cluster_queue_resource_usage{cluster_queue="team",flavor="gpu",resource="nvidia.com/gpu"} 1)"))
      << text;
  EXPECT_TRUE(
      Has(text, R"(kueue_cluster_queue_nominal_quota{cluster_queue="team",flavor="gpu",resource="nvidia.com/gpu"} 1)"))
      << text;
  EXPECT_TRUE(Has(text, R"(kueue_cluster_queue_status{cluster_queue="team",status="active"} 1)")) << text;
  EXPECT_TRUE(Has(text, R"(kueue_admitted_workloads_total{cluster_queue="team"} 1)")) << text;
  // "a" waited 60 s since its creation.
  EXPECT_TRUE(Has(text, R"(kueue_admission_wait_time_seconds_sum{cluster_queue="team"} 60)")) << text;

  // The next pass: "a" finished (gone from the snapshot), "b" admitted; the spec's generation is
  // the same, so the series that follow the counts are set where they are.
  text = Pass({b});
  EXPECT_TRUE(Has(text, R"(kueue_pending_workloads{cluster_queue="team",status="active"} 0)")) << text;
  EXPECT_TRUE(Has(text, R"(kueue_admitted_active_workloads{cluster_queue="team"} 1)")) << text;
  EXPECT_TRUE(Has(text, R"(kueue_admitted_workloads_total{cluster_queue="team"} 2)")) << text;
  text = Pass({});
  EXPECT_TRUE(Has(text, R"(kueue_admitted_active_workloads{cluster_queue="team"} 0)")) << text;
  EXPECT_TRUE(
      Has(text, R"(kueue_cluster_queue_resource_usage{cluster_queue="team",flavor="gpu",resource="nvidia.com/gpu"} 0)"))
      << text;
}

TEST_F(QueueMetricsTest, AQueueGoneTakesItsGaugesWithIt) {
  std::string text = Pass({});
  ASSERT_NE(text.find(R"(kueue_cluster_queue_status{cluster_queue="team")"), std::string::npos) << text;
  state_.cluster_queues.clear();
  text = Pass({});
  EXPECT_EQ(text.find(R"(kueue_pending_workloads{cluster_queue="team")"), std::string::npos) << text;
  EXPECT_EQ(text.find(R"(kueue_cluster_queue_status{cluster_queue="team")"), std::string::npos) << text;
}

TEST_F(QueueMetricsTest, AStoppedQueueShowsInItsStatusGauge) {
  state_.cluster_queues[0].spec.stop_policy = api::StopPolicy::kHold;
  const std::string text = Pass({});
  EXPECT_TRUE(Has(text, R"(kueue_cluster_queue_status{cluster_queue="team",status="active"} 0)")) << text;
  EXPECT_TRUE(Has(text, R"(kueue_cluster_queue_status{cluster_queue="team",status="pending"} 1)")) << text;
}

TEST_F(QueueMetricsTest, AQueueNamingAMissingFlavorIsPendingUntilTheFlavorComes) {
  const api::ResourceFlavor gpu = state_.flavors.at(0);
  state_.flavors.clear();
  std::string text = Pass({});
  EXPECT_TRUE(Has(text, R"(kueue_cluster_queue_status{cluster_queue="team",status="pending"} 1)")) << text;
  state_.flavors.push_back(gpu);  // (the queue's spec, and so its generation, unchanged)
  text = Pass({});
  EXPECT_TRUE(Has(text, R"(kueue_cluster_queue_status{cluster_queue="team",status="active"} 1)")) << text;
  EXPECT_TRUE(Has(text, R"(kueue_cluster_queue_status{cluster_queue="team",status="pending"} 0)")) << text;
}

}  // namespace
}  // namespace rota::controller
