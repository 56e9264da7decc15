#include "rota/kubectl/preempted.h"

#include <gtest/gtest.h>

#include <sstream>

#include "samples.h"

namespace rota::kubectl {
namespace {

using namespace samples;

constexpr int64_t k10h = 1793527200;  // 2026-11-01T10:00:00Z
const std::string kByUrgent =
    "Preempted to accommodate workload ml/job-urgent-00000 due to prioritization in the ClusterQueue";

TEST(PreemptedTest, ThePreemptorIsInTheMessage) {
  EXPECT_EQ(PreemptorOf(kByUrgent), "ml/job-urgent-00000");
  EXPECT_EQ(PreemptorOf("Previously: Preempted to accommodate workload a/b due to x"), "a/b");
  EXPECT_EQ(PreemptorOf("The ClusterQueue is stopped"), "");
}

TEST(PreemptedTest, WorkLostRunsFromTheLaterOfAdmissionAndCheckpoint) {
  EXPECT_DOUBLE_EQ(*GpuHoursLost(4, k10h, 0, k10h + 1800), 2.0);
  EXPECT_DOUBLE_EQ(*GpuHoursLost(4, k10h, k10h + 1700, k10h + 1800), 4.0 * 100 / 3600);
  EXPECT_DOUBLE_EQ(*GpuHoursLost(4, k10h, k10h + 1900, k10h + 1800), 2.0);  // a checkpoint after it does not count
  EXPECT_DOUBLE_EQ(*GpuHoursLost(0.25, k10h, 0, k10h + 3600), 0.25);
  EXPECT_FALSE(GpuHoursLost(4, 0, 0, k10h));  // admission not known
}

// ml/train: admitted at 9:00 (Event), checkpointed at 9:30, preempted at 10:00 (its conditions).
std::vector<Json> Workloads() {
  Json train = WorkloadJson("ml", "train", 4, 10);
  train["metadata"]["annotations"] = {{"rota.dev/checkpointed-at", "2026-11-01T09:30:00Z"}};
  SetCondition(train, "Evicted", "True", "Preempted", kByUrgent, "2026-11-01T10:00:00Z");
  SetCondition(train, "Preempted", "True", "InClusterQueue", kByUrgent, "2026-11-01T10:00:00Z");
  SetCondition(train, "QuotaReserved", "False", "Pending", kByUrgent, "2026-11-01T10:00:01Z");
  return {train, WorkloadJson("ml", "sweep", 1, 10)};
}

std::vector<Json> Events() {
  return {EventJson("ml", "job-train-00000", "Admitted", "Admitted by ClusterQueue team", "2026-11-01T09:00:00Z",
                    "2026-11-01T09:00:00Z"),
          // the same preemption, told by its Event a second later: listed once
          EventJson("ml", "job-train-00000", "Preempted", kByUrgent, "2026-11-01T10:00:01Z", "2026-11-01T10:00:01Z"),
          // an earlier preemption of a workload admitted again since: only its Events tell
          EventJson("ml", "job-sweep-00000", "Admitted", "Admitted by ClusterQueue team", "2026-11-01T08:00:00Z",
                    "2026-11-01T09:50:00Z"),
          EventJson("ml", "job-sweep-00000", "Preempted",
                    "Preempted to accommodate workload vision/x due to reclamation within the cohort",
                    "2026-11-01T08:30:00Z", "2026-11-01T08:30:00Z")};
}

std::vector<api::Workload> Decoded(const std::vector<Json>& items) {
  std::vector<api::Workload> out;
  for (const Json& j : items) out.push_back(Decode<api::Workload>(j));
  return out;
}

TEST(PreemptedTest, CollectsFromConditionsAndEventsNewestFirst) {
  const std::vector<api::LocalQueue> lqs = {Decode<api::LocalQueue>(LocalQueueJson("ml", "main", "team"))};
  const auto list = CollectPreemptions(Decoded(Workloads()), Events(), lqs, 0);
  ASSERT_EQ(list.size(), 2u);
  const Preemption& train = list[0];
  EXPECT_EQ(train.workload, "job-train-00000");
  EXPECT_EQ(train.job, "train");
  EXPECT_EQ(train.cluster_queue, "team");
  EXPECT_EQ(train.preemptor, "ml/job-urgent-00000");
  EXPECT_EQ(train.reason, "InClusterQueue");
  EXPECT_EQ(train.at, k10h);
  EXPECT_EQ(train.admitted_at, k10h - 3600);
  EXPECT_EQ(train.checkpointed_at, k10h - 1800);
  EXPECT_DOUBLE_EQ(train.gpus, 4);
  EXPECT_DOUBLE_EQ(*train.gpu_hours_lost, 2.0);  // 4 GPUs x the 30 minutes since its checkpoint
  const Preemption& sweep = list[1];
  EXPECT_EQ(sweep.preemptor, "vision/x");
  EXPECT_EQ(sweep.reason, "InCohortReclamation");
  EXPECT_EQ(sweep.admitted_at, k10h - 7200);  // (the admission before it, not the one after)
  EXPECT_DOUBLE_EQ(*sweep.gpu_hours_lost, 0.5);
  EXPECT_EQ(CollectPreemptions(Decoded(Workloads()), Events(), lqs, k10h - 60).size(), 1u);  // --since
}

TEST(PreemptedTest, TheTableAndTheDocument) {
  const auto list = CollectPreemptions(Decoded(Workloads()), Events(), {}, 0);
  std::ostringstream out;
  RenderPreemptions(list, true, false, k10h + 300, out);
  EXPECT_EQ(
      out.str(),
      "NAMESPACE   WORKLOAD          CLUSTERQUEUE   PREEMPTED BY          REASON                AGE   GPUS   "
      "LOST GPU-H\n"
      "ml          job-train-00000   <unknown>      ml/job-urgent-00000   InClusterQueue        5m    4      2.00\n"
      "ml          job-sweep-00000   <unknown>      vision/x              InCohortReclamation   95m   1      0.50\n");
  const Json doc = PreemptionsDocument(list);
  EXPECT_EQ(doc["kind"], "PreemptionList");
  EXPECT_EQ(doc["items"][0]["time"], "2026-11-01T10:00:00Z");
  EXPECT_EQ(doc["items"][0]["checkpointedAt"], "2026-11-01T09:30:00Z");
  EXPECT_DOUBLE_EQ(doc["items"][0]["gpuHoursLost"].get<double>(), 2.0);
}

}  // namespace
}  // namespace rota::kubectl
