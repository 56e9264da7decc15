#include "rota/kubectl/preemption_help.h"

#include <gtest/gtest.h>

namespace rota::kubectl {
namespace {

using api::PreemptionPolicy;

Holder Held(const std::string& name, const std::string& cq, int32_t priority, bool same_queue = true) {
  Holder h;
  h.ns = "ml";
  h.name = name;
  h.cluster_queue = cq;
  h.priority = priority;
  h.same_queue = same_queue;
  h.created = "2026-11-01T10:00:00Z";
  return h;
}

PreemptionQuestion Asking(int32_t priority, std::vector<Holder> holders) {
  PreemptionQuestion q;
  q.priority = priority;
  q.created = "2026-11-01T09:00:00Z";
  q.holders = std::move(holders);
  return q;
}

TEST(PreemptionHelpTest, NeverWithinTheQueue) {
  const auto v = AssessPreemption(Asking(100, {Held("a", "team-a", 10)}));
  EXPECT_FALSE(v.could_help);
  EXPECT_EQ(v.answer, "no: withinClusterQueue is Never");
}

TEST(PreemptionHelpTest, LowerPriorityHoldersInTheQueue) {
  PreemptionQuestion q = Asking(100, {Held("a", "team-a", 10), Held("b", "team-a", 50), Held("c", "team-a", 100)});
  q.policy.within_cluster_queue = PreemptionPolicy::kLowerPriority;
  const auto v = AssessPreemption(q);
  EXPECT_TRUE(v.could_help);
  EXPECT_EQ(v.answer, "yes: 2 lower-priority workloads in team-a could be preempted");
  EXPECT_EQ(v.candidates, (std::vector<std::string>{"ml/a", "ml/b"}));
}

TEST(PreemptionHelpTest, NoLowerPriorityHolder) {
  PreemptionQuestion q = Asking(100, {Held("a", "team-a", 100)});
  q.policy.within_cluster_queue = PreemptionPolicy::kLowerPriority;
  EXPECT_EQ(AssessPreemption(q).answer,
            "no: the 1 workload holding its quota in team-a has no lower priority than its own (100) "
            "(withinClusterQueue is LowerPriority)");
  // LowerOrNewerEqualPriority: the same priority, created after it, may go.
  q.policy.within_cluster_queue = PreemptionPolicy::kLowerOrNewerEqualPriority;
  EXPECT_TRUE(AssessPreemption(q).could_help);
}

TEST(PreemptionHelpTest, ACriticalTierIsNeverACandidate) {
  PreemptionQuestion q = Asking(100, {Held("a", "team-a", 10)});
  q.holders[0].preemptible = false;
  q.policy.within_cluster_queue = PreemptionPolicy::kLowerPriority;
  const auto v = AssessPreemption(q);
  EXPECT_FALSE(v.could_help);
  EXPECT_NE(v.answer.find("1 lower-priority workload in team-a is not preemptible"), std::string::npos) << v.answer;
}

TEST(PreemptionHelpTest, ReclaimsWhatOtherQueuesBorrow) {
  Holder lent = Held("x", "team-b", 500, false);
  lent.queue_borrowing = true;
  PreemptionQuestion q = Asking(100, {lent});
  q.in_cohort = true;
  EXPECT_EQ(AssessPreemption(q).answer, "no: reclaimWithinCohort is Never");
  q.policy.reclaim_within_cohort = PreemptionPolicy::kLowerPriority;
  EXPECT_FALSE(AssessPreemption(q).could_help);  // (its priority is higher)
  q.policy.reclaim_within_cohort = PreemptionPolicy::kAny;
  EXPECT_EQ(AssessPreemption(q).answer, "yes: 1 borrowing workload in team-b could be preempted");
}

TEST(PreemptionHelpTest, BorrowsByPreemptingLowerPrioritiesUnderTheThreshold) {
  PreemptionQuestion q = Asking(100, {Held("x", "team-b", 10, false), Held("y", "team-b", 60, false)});
  q.in_cohort = true;
  q.would_borrow = true;
  EXPECT_EQ(AssessPreemption(q).answer, "no: borrowWithinCohort is Never");
  q.policy.borrow_within_cohort.policy = PreemptionPolicy::kLowerPriority;
  q.policy.borrow_within_cohort.max_priority_threshold = 50;
  const auto v = AssessPreemption(q);
  EXPECT_EQ(v.answer, "yes: 1 lower-priority workload in team-b could be preempted");
  EXPECT_EQ(v.candidates, std::vector<std::string>{"ml/x"});
}

TEST(PreemptionHelpTest, NobodyHoldsIt) {
  EXPECT_EQ(AssessPreemption(Asking(1, {})).answer,
            "no: no admitted workload holds the quota it needs (it waits for capacity, not for a victim)");
}

}  // namespace
}  // namespace rota::kubectl
