#include "scheduling/preemption_hold.h"

#include <gtest/gtest.h>

#include "small_cluster.h"

namespace rota::controller {
namespace {

using api::Json;
using std::chrono::seconds;

// ClusterQueue "team": 2 GPUs, preempting lower priorities. ml/low holds both; ml/high (priority
// 10) and ml/other (priority 5) want one each.
api::ClusterState Preempting() {
  api::ClusterState state = testing::SmallCluster();
  state.cluster_queues[0] = *api::DecodeObject<api::ClusterQueue>(Json::parse(R"({
    "metadata": {"name": "team"},
    "spec": {"namespaceSelector": {}, "preemption": {"withinClusterQueue": "LowerPriority"},
      "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"],
      "flavors": [{"name": "gpu", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 2}]}]}]}})"));
  auto workload = [](const std::string& name, int priority, int gpus, bool admitted) {
    Json w =
        Json::parse(R"({"metadata": {"name": ")" + name +
                    R"(", "namespace": "ml", "creationTimestamp": "2026-11-01T09:00:00Z"}, "spec": {"queueName": "gpu",
        "podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": [{"name": "c",
        "resources": {"requests": {"nvidia.com/gpu": )" +
                    std::to_string(gpus) + "}}}]}}}]}}");
    w["spec"]["priority"] = priority;
    if (admitted) {
      w["status"] = Json::parse(R"({"admission": {"clusterQueue": "team", "podSetAssignments": [{"name": "main",
          "flavors": {"nvidia.com/gpu": "gpu"}, "resourceUsage": {"nvidia.com/gpu": "2"}, "count": 1}]},
          "conditions": [{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": "",
          "lastTransitionTime": "2026-11-01T10:00:00Z"}, {"type": "Admitted", "status": "True",
          "reason": "Admitted", "message": "", "lastTransitionTime": "2026-11-01T10:00:00Z"}]})");
    }
    return std::make_shared<const api::Workload>(*api::DecodeObject<api::Workload>(w));
  };
  state.workloads = {workload("low", 0, 2, true), workload("high", 10, 1, false), workload("other", 5, 1, false)};
  return state;
}

TEST(PreemptionHoldTest, APreemptorWaitsForVictimsWithPodsAndWhatCameAfterItWaitsToo) {
  api::ClusterState state = Preempting();
  api::SnapshotBuilder builder;
  ASSERT_TRUE(builder.Build(state).ok());
  admission::Decisions d = admission::Schedule(builder.snapshot());
  ASSERT_EQ(d.admitted.size(), 2u) << "the engine admits high, and other into what low leaves";
  ASSERT_EQ(d.preempted.size(), 1u);

  PreemptionHold hold(seconds(10));
  const HeldPreemptions held = hold.Hold(d, builder, [](const std::string&) { return true; });
  EXPECT_TRUE(d.admitted.empty()) << "other would use GPUs low still holds";
  EXPECT_EQ(held.deferred, 1u);
  EXPECT_EQ(held.victims.count("ml/low"), 1u);
  ASSERT_EQ(d.preempted.size(), 1u);
  const admission::PendingDecision& waiting = d.pending.back();
  EXPECT_EQ(waiting.workload, "ml/high");
  EXPECT_EQ(waiting.reason, "Pending");
  EXPECT_EQ(waiting.message, "Pending the preemption of 1 workload(s)");
}

TEST(PreemptionHoldTest, AVictimWithoutPodsIsReleasedAtOnceAndItsPreemptorAdmitted) {
  api::ClusterState state = Preempting();
  api::SnapshotBuilder builder;
  ASSERT_TRUE(builder.Build(state).ok());
  admission::Decisions d = admission::Schedule(builder.snapshot());
  PreemptionHold hold(seconds(10));
  const HeldPreemptions held = hold.Hold(d, builder, [](const std::string&) { return false; });
  EXPECT_EQ(d.admitted.size(), 2u);
  EXPECT_TRUE(held.victims.empty());
  EXPECT_EQ(held.deferred, 0u);
}

TEST(PreemptionHoldTest, AReleasedVictimWaitsWhileItsPreemptorIsPendingForAWhile) {
  api::ClusterState state = Preempting();
  api::SnapshotBuilder builder;
  ASSERT_TRUE(builder.Build(state).ok());
  admission::Decisions d = admission::Schedule(builder.snapshot());
  PreemptionHold hold(seconds(10));
  (void)hold.Hold(d, builder, [](const std::string&) { return true; });

  // low gives its quota back (its Job's pods are gone).
  state.workloads[0] = testing::GpuWorkload("low", "2026-11-01T09:00:00Z");
  api::SnapshotBuilder next;
  ASSERT_TRUE(next.Build(state).ok());
  const auto t0 = std::chrono::steady_clock::time_point(std::chrono::hours(1));
  hold.HoldReleased(next, t0);
  EXPECT_EQ(next.Find("ml/low")->inadmissible_reason, "WaitingForQuota");
  EXPECT_EQ(next.Find("ml/low")->inadmissible_message,
            "the quota it gave back goes first to ml/high, which preempted it");
  // Not for ever: after preemptor_first it competes again.
  api::SnapshotBuilder later;
  ASSERT_TRUE(later.Build(state).ok());
  hold.HoldReleased(later, t0 + seconds(10));
  EXPECT_EQ(later.Find("ml/low")->inadmissible_reason, "");
  EXPECT_EQ(hold.size(), 0u);
}

}  // namespace
}  // namespace rota::controller
