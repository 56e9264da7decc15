// stopRunning: the status patch that evicts a running workload of a used-up Budget.

#include "budget/eviction.h"

#include <gtest/gtest.h>

namespace rota::controller::budget {
namespace {

api::Workload Admitted(bool evicted) {
  api::Json doc = api::Json::parse(R"({"metadata": {"name": "w", "namespace": "ml", "resourceVersion": "42"},
    "spec": {"podSets": [{"template": {}}]},
    "status": {"conditions": [{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved",
                               "message": "m", "lastTransitionTime": "2026-11-01T10:00:00Z"}],
               "admission": {"clusterQueue": "team", "podSetAssignments": []}}})");
  if (evicted)
    doc["status"]["conditions"].push_back({{"type", "Evicted"},
                                           {"status", "True"},
                                           {"reason", "Preempted"},
                                           {"message", "m"},
                                           {"lastTransitionTime", "2026-11-01T10:05:00Z"}});
  return *api::DecodeObject<api::Workload>(doc);
}

TEST(BudgetEvictionTest, EvictsWithReasonBudgetExhaustedOnItsResourceVersion) {
  const api::Workload wl = Admitted(false);
  EXPECT_TRUE(Running(wl));
  EXPECT_FALSE(Running(Admitted(true)));  // (already on its way out)
  api::Json patch = EvictionPatch(wl, "ClusterQueue team used all 100 GPU-hours", 1793534400);
  EXPECT_EQ(patch["metadata"]["resourceVersion"], "42");
  const api::Json& conditions = patch["status"]["conditions"];
  ASSERT_EQ(conditions.size(), 2u);  // QuotaReserved kept, Evicted added
  const api::Json& evicted = conditions[0]["type"] == "Evicted" ? conditions[0] : conditions[1];
  EXPECT_EQ(evicted["status"], "True");
  EXPECT_EQ(evicted["reason"], "BudgetExhausted");
  EXPECT_EQ(evicted["message"], "ClusterQueue team used all 100 GPU-hours");
  EXPECT_EQ(evicted["lastTransitionTime"], "2026-11-01T12:00:00Z");
}

}  // namespace
}  // namespace rota::controller::budget
