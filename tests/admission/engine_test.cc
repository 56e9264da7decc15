// Scenario tests for the admission engine, in the manner of Kueue's scheduler tests: an initial
// state (flavors, cohorts, queues, admitted and pending workloads) and the decisions expected.

#include "rota/admission/engine.h"

#include <gtest/gtest.h>

#include <set>

#include <algorithm>
#include <string>
#include <vector>

namespace rota::admission {
namespace {

constexpr int64_t kGpu = 1000;  // one GPU in milli-units
const std::string kGpuName = "nvidia.com/gpu";

// ---- builders ----------------------------------------------------------------------------

FlavorSpec Flavor(const std::string& name, std::map<std::string, std::string> labels = {},
                  std::vector<Taint> taints = {}) {
  return {name, std::move(labels), std::move(taints)};
}

QuotaSpec Gpus(int64_t nominal, std::optional<int64_t> borrow = std::nullopt,
               std::optional<int64_t> lend = std::nullopt) {
  return {kGpuName, nominal * kGpu, borrow ? std::optional<int64_t>(*borrow * kGpu) : std::nullopt,
          lend ? std::optional<int64_t>(*lend * kGpu) : std::nullopt};
}

// One resource group covering nvidia.com/gpu, with the flavors in order.
std::vector<ResourceGroupSpec> GpuGroup(std::vector<std::pair<std::string, QuotaSpec>> flavors) {
  ResourceGroupSpec g;
  g.covered_resources = {kGpuName};
  for (auto& [name, quota] : flavors) g.flavors.push_back({name, {quota}});
  return {g};
}

ClusterQueueSpec Queue(const std::string& name, const std::string& cohort, std::vector<ResourceGroupSpec> groups) {
  ClusterQueueSpec q;
  q.name = name;
  q.cohort = cohort;
  q.resource_groups = std::move(groups);
  return q;
}

PodSetSpec Pods(int32_t count, int64_t gpus_each, const std::string& name = "main") {
  PodSetSpec ps;
  ps.name = name;
  ps.count = count;
  ps.per_pod[kGpuName] = gpus_each * kGpu;
  return ps;
}

WorkloadSpec Pending(const std::string& key, const std::string& cq, int32_t priority, int64_t created,
                     std::vector<PodSetSpec> pod_sets) {
  WorkloadSpec w;
  w.key = key;
  w.cluster_queue = cq;
  w.priority = priority;
  w.creation_time = created;
  w.pod_sets = std::move(pod_sets);
  return w;
}

// An admitted workload holding `gpus` of `flavor` in `cq` (one pod).
WorkloadSpec Admitted(const std::string& key, const std::string& cq, int32_t priority, int64_t gpus,
                      int64_t admitted_at, const std::string& flavor = "a100") {
  WorkloadSpec w = Pending(key, cq, priority, admitted_at, {Pods(1, gpus)});
  AdmissionSpec a;
  a.cluster_queue = cq;
  a.pod_sets.push_back({"main", 1, {{kGpuName, flavor}}, {{kGpuName, gpus * kGpu}}});
  w.admission = a;
  w.admission_time = admitted_at;
  return w;
}

std::vector<std::string> AdmittedKeys(const Decisions& d) {
  std::vector<std::string> out;
  for (const auto& a : d.admitted) out.push_back(a.workload);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> PreemptedKeys(const Decisions& d) {
  std::vector<std::string> out;
  for (const auto& p : d.preempted) out.push_back(p.workload + ":" + ToString(p.reason));
  return out;
}

const PendingDecision* FindPending(const Decisions& d, const std::string& key) {
  for (const auto& p : d.pending)
    if (p.workload == key) return &p;
  return nullptr;
}

const AdmitDecision* FindAdmitted(const Decisions& d, const std::string& key) {
  for (const auto& a : d.admitted)
    if (a.workload == key) return &a;
  return nullptr;
}

using Keys = std::vector<std::string>;

// ---- budgets -----------------------------------------------------------------------------

// Admissions draw on a budget pool in scheduling order; the one that no longer fits waits with
// the pool's words, and a smaller one behind it still goes (BestEffortFIFO).
TEST(EngineBudgetTest, AdmissionsDrawOnThePoolUntilItIsSpent) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cluster_queues = {Queue("q", "", GpuGroup({{"a100", Gpus(8)}}))};
  s.budget_pools = {{100, "team q has 1 of 5 GPU-hours left this month"}};
  s.workloads = {Pending("ns/a", "q", 0, 1, {Pods(1, 1)}), Pending("ns/b", "q", 0, 2, {Pods(1, 1)}),
                 Pending("ns/c", "q", 0, 3, {Pods(1, 1)})};
  s.workloads[0].budget_charges = {{0, 60}};
  s.workloads[1].budget_charges = {{0, 60}};
  s.workloads[2].budget_charges = {{0, 40}};
  Decisions d = Schedule(s);
  EXPECT_EQ(AdmittedKeys(d), (Keys{"ns/a", "ns/c"}));
  ASSERT_NE(FindPending(d, "ns/b"), nullptr);
  EXPECT_EQ(FindPending(d, "ns/b")->reason, "BudgetExhausted");
  EXPECT_EQ(FindPending(d, "ns/b")->message, "team q has 1 of 5 GPU-hours left this month");

  // StrictFIFO: the head that does not fit its budget holds the rest back.
  s.cluster_queues[0].queueing_strategy = QueueingStrategy::kStrictFIFO;
  d = Schedule(s);
  EXPECT_EQ(AdmittedKeys(d), (Keys{"ns/a"}));
  EXPECT_EQ(FindPending(d, "ns/c")->reason, "WaitingForQuota");
}

// A workload that may not preempt (its queue is over a BestEffort budget) takes only free
// capacity, and says so.
TEST(EngineBudgetTest, BestEffortPreemptsNoOne) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cluster_queues = {Queue("q", "", GpuGroup({{"a100", Gpus(8)}}))};
  s.cluster_queues[0].within_cluster_queue = WithinClusterQueue::kLowerPriority;
  s.workloads = {Admitted("ns/low", "q", 0, 6, 1), Pending("ns/high", "q", 10, 5, {Pods(1, 4)}),
                 Pending("ns/small", "q", 10, 6, {Pods(1, 2)})};
  s.workloads[1].may_preempt = false;
  s.workloads[2].may_preempt = false;
  Decisions d = Schedule(s);
  EXPECT_EQ(AdmittedKeys(d), (Keys{"ns/small"}));
  EXPECT_TRUE(d.preempted.empty());
  EXPECT_NE(FindPending(d, "ns/high")->message.find("preempts no one"), std::string::npos);

  s.workloads[1].may_preempt = true;
  d = Schedule(s);
  EXPECT_EQ(PreemptedKeys(d), (Keys{"ns/low:InClusterQueue"}));
}

// ---- admission fair sharing ---------------------------------------------------------------

// Within a ClusterQueue, the LocalQueue with less recent usage goes first, whatever the order
// of creation; each admission's entry penalty can hand the next turn to the other queue.
TEST(EngineAdmissionFairSharingTest, TheLeastUsedLocalQueueGoesFirst) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cluster_queues = {Queue("q", "", GpuGroup({{"a100", Gpus(2)}}))};
  s.workloads = {Pending("ns/a1", "q", 0, 1, {Pods(1, 1)}), Pending("ns/a2", "q", 0, 2, {Pods(1, 1)}),
                 Pending("ns/b1", "q", 0, 3, {Pods(1, 1)}), Pending("ns/b2", "q", 0, 4, {Pods(1, 1)})};
  Decisions d = Schedule(s);
  EXPECT_EQ(AdmittedKeys(d), (Keys{"ns/a1", "ns/a2"}));  // (without it: creation order)

  s.admission_fair_sharing.queues = {{10, 1}, {0, 1}};  // "a" has used 10 GPU-units, "b" nothing
  for (int i = 0; i < 4; ++i) s.workloads[i].fair_queue = i < 2 ? 0 : 1;
  d = Schedule(s);
  EXPECT_EQ(AdmittedKeys(d), (Keys{"ns/b1", "ns/b2"}));
  EXPECT_EQ(FindPending(d, "ns/a1")->position, 0);

  // An entry penalty of 20 per GPU: after b1, queue b's usage (20) is above a's (10).
  s.admission_fair_sharing.entry_penalty = 20;
  d = Schedule(s);
  EXPECT_EQ(AdmittedKeys(d), (Keys{"ns/a1", "ns/b1"}));

  // Usage is divided by the LocalQueue's weight: with a weight of 4, a's share is 10 / 4 = 2.5,
  // still above b's 2 after b1.
  s.admission_fair_sharing.queues[0].weight = 4;
  s.admission_fair_sharing.entry_penalty = 2;
  d = Schedule(s);
  EXPECT_EQ(AdmittedKeys(d), (Keys{"ns/b1", "ns/b2"}));
}

// ---- quotas ------------------------------------------------------------------------------

TEST(EngineQuotaTest, AdmitsWhatFitsAndExplainsTheRest) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cluster_queues = {Queue("team-a", "", GpuGroup({{"a100", Gpus(8)}}))};
  s.workloads = {Pending("ns/w1", "team-a", 0, 1, {Pods(1, 4)}), Pending("ns/w2", "team-a", 0, 2, {Pods(1, 3)}),
                 Pending("ns/w3", "team-a", 0, 3, {Pods(1, 2)})};
  Decisions d = Schedule(s);
  EXPECT_EQ(AdmittedKeys(d), (Keys{"ns/w1", "ns/w2"}));
  const PendingDecision* p = FindPending(d, "ns/w3");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->reason, "WaitingForQuota");
  EXPECT_EQ(p->message,
            "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu "
            "in flavor a100, 1 more needed");
  EXPECT_EQ(p->index, 2u);  // where the snapshot has it
  EXPECT_EQ(FindAdmitted(d, "ns/w1")->pod_sets[0].flavors.at(kGpuName), "a100");
  EXPECT_EQ(FindAdmitted(d, "ns/w1")->pod_sets[0].usage.at(kGpuName), 4 * kGpu);
}

// A queue whose quota was lowered under its admitted workloads keeps them (Kueue evicts only to
// make room for a waiting workload): with nothing waiting, a pass decides nothing. A workload that
// waits for a reason of its own is still explained, however few there are.
TEST(EngineQuotaTest, NothingWaitingDecidesNothingEvenOverQuota) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cluster_queues = {Queue("team-a", "", GpuGroup({{"a100", Gpus(2)}}))};
  s.cluster_queues[0].within_cluster_queue = WithinClusterQueue::kLowerPriority;
  s.workloads = {Admitted("ns/r1", "team-a", 0, 4, 1), Admitted("ns/r2", "team-a", 0, 4, 2)};
  Decisions d = Schedule(s);
  EXPECT_TRUE(d.admitted.empty());
  EXPECT_TRUE(d.preempted.empty());
  EXPECT_TRUE(d.pending.empty());
  EXPECT_EQ(d.not_considered, 0u);

  WorkloadSpec lost = Pending("ns/lost", "", 0, 3, {Pods(1, 1)});
  lost.inadmissible_reason = "Inadmissible";
  lost.inadmissible_message = "LocalQueue gpu doesn't exist";
  s.workloads.push_back(lost);
  Workspace workspace;
  d = Schedule(s, workspace, ScheduleLimits{500});
  EXPECT_TRUE(d.admitted.empty());
  EXPECT_TRUE(d.preempted.empty());
  ASSERT_EQ(d.pending.size(), 1u);
  EXPECT_EQ(d.pending[0].workload, "ns/lost");
  EXPECT_EQ(d.pending[0].message, "LocalQueue gpu doesn't exist");
  EXPECT_EQ(d.pending[0].index, 2u);
}

TEST(EngineQuotaTest, GangIsNeverSplit) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cluster_queues = {Queue("team-a", "", GpuGroup({{"a100", Gpus(8)}}))};
  s.workloads = {Pending("ns/gang", "team-a", 0, 1, {Pods(3, 4)})};  // 12 GPUs, all or nothing
  Decisions d = Schedule(s);
  EXPECT_TRUE(d.admitted.empty());
  EXPECT_EQ(FindPending(d, "ns/gang")->reason, "ExceedsMaxQuota");
  EXPECT_EQ(FindPending(d, "ns/gang")->message,
            "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in "
            "flavor a100, request > maximum capacity (12 > 8)");
}

TEST(EngineQuotaTest, AllPodSetsAreAdmittedTogether) {
  Snapshot s;
  s.flavors = {Flavor("a100"), Flavor("cpu")};
  ResourceGroupSpec cpu{{"cpu"}, {{"cpu", {{"cpu", 16000, {}, {}}}}}};
  auto groups = GpuGroup({{"a100", Gpus(8)}});
  groups.push_back(cpu);
  s.cluster_queues = {Queue("team-a", "", groups)};
  PodSetSpec driver;
  driver.name = "driver";
  driver.per_pod["cpu"] = 4000;
  WorkloadSpec w = Pending("ns/job", "team-a", 0, 1, {driver, Pods(2, 4, "workers")});
  s.workloads = {w};
  Decisions d = Schedule(s);
  ASSERT_EQ(AdmittedKeys(d), (Keys{"ns/job"}));
  const auto& ps = FindAdmitted(d, "ns/job")->pod_sets;
  ASSERT_EQ(ps.size(), 2u);
  EXPECT_EQ(ps[0].flavors.at("cpu"), "cpu");
  EXPECT_EQ(ps[1].flavors.at(kGpuName), "a100");
  EXPECT_EQ(ps[1].usage.at(kGpuName), 8 * kGpu);

  // One more CPU than the queue has: nothing of it is admitted.
  s.workloads[0].pod_sets[0].per_pod["cpu"] = 17000;
  d = Schedule(s);
  EXPECT_TRUE(d.admitted.empty());
  EXPECT_EQ(FindPending(d, "ns/job")->reason, "ExceedsMaxQuota");
}

TEST(EngineQuotaTest, UncoveredResourceHasNoFlavor) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cluster_queues = {Queue("team-a", "", GpuGroup({{"a100", Gpus(8)}}))};
  WorkloadSpec w = Pending("ns/mig", "team-a", 0, 1, {Pods(1, 1)});
  w.pod_sets[0].per_pod = {{"nvidia.com/mig-1g.10gb", 1000}};
  s.workloads = {w};
  Decisions d = Schedule(s);
  EXPECT_EQ(FindPending(d, "ns/mig")->reason, "NoMatchingFlavor");
  EXPECT_EQ(FindPending(d, "ns/mig")->message,
            "couldn't assign flavors to pod set main: resource nvidia.com/mig-1g.10gb unavailable "
            "in ClusterQueue team-a");
}

// ---- cohorts -----------------------------------------------------------------------------

TEST(EngineCohortTest, BorrowsUnusedQuotaUpToTheBorrowingLimit) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cluster_queues = {Queue("a", "pool", GpuGroup({{"a100", Gpus(8)}})),
                      Queue("b", "pool", GpuGroup({{"a100", Gpus(8)}}))};
  s.workloads = {Pending("ns/big", "a", 0, 1, {Pods(3, 4)})};
  Decisions d = Schedule(s);
  ASSERT_EQ(AdmittedKeys(d), (Keys{"ns/big"}));
  EXPECT_TRUE(d.admitted[0].borrowing);

  s.cluster_queues[0] = Queue("a", "pool", GpuGroup({{"a100", Gpus(8, 2)}}));
  d = Schedule(s);
  EXPECT_TRUE(d.admitted.empty());
  EXPECT_EQ(FindPending(d, "ns/big")->message,
            "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in "
            "flavor a100, request > maximum capacity (12 > 10)");
}

TEST(EngineCohortTest, LendingLimitKeepsPartOfTheQuotaHome) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cluster_queues = {Queue("a", "pool", GpuGroup({{"a100", Gpus(8)}})),
                      Queue("b", "pool", GpuGroup({{"a100", Gpus(8, std::nullopt, 2)}}))};
  s.workloads = {Pending("ns/ten", "a", 0, 1, {Pods(1, 10)}), Pending("ns/eleven", "a", 0, 2, {Pods(1, 11)})};
  Decisions d = Schedule(s);
  EXPECT_EQ(AdmittedKeys(d), (Keys{"ns/ten"}));
  EXPECT_EQ(FindPending(d, "ns/eleven")->reason, "ExceedsMaxQuota");
}

TEST(EngineCohortTest, MultiLevelCohortsShareQuotaUpTheTree) {
  // org (own 4 GPUs) <- research (borrowing limit 2) <- r1 (4)
  //                  <- p1 (4)
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cohorts = {{"org", "", GpuGroup({{"a100", Gpus(4)}}), 1000}, {"research", "org", {}, 1000}};
  s.cluster_queues = {Queue("r1", "research", GpuGroup({{"a100", Gpus(4)}})),
                      Queue("p1", "org", GpuGroup({{"a100", Gpus(4)}}))};
  s.workloads = {Pending("ns/twelve", "r1", 0, 1, {Pods(1, 12)})};
  EXPECT_EQ(AdmittedKeys(Schedule(s)), (Keys{"ns/twelve"}));
  s.workloads = {Pending("ns/thirteen", "r1", 0, 1, {Pods(1, 13)})};
  EXPECT_EQ(FindPending(Schedule(s), "ns/thirteen")->reason, "ExceedsMaxQuota");

  // research may take at most 2 GPUs from org: r1 gets its 4 plus 2.
  s.cohorts[1].resource_groups = GpuGroup({{"a100", Gpus(0, 2)}});
  s.workloads = {Pending("ns/six", "r1", 0, 1, {Pods(1, 6)}), Pending("ns/one", "r1", 0, 2, {Pods(1, 1)})};
  Decisions d = Schedule(s);
  EXPECT_EQ(AdmittedKeys(d), (Keys{"ns/six"}));
  EXPECT_EQ(FindPending(d, "ns/one")->reason, "WaitingForQuota");
}

TEST(EngineCohortTest, CohortCycleMakesItsQueuesInactive) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cohorts = {{"x", "y", {}, 1000}, {"y", "x", {}, 1000}};
  s.cluster_queues = {Queue("q", "x", GpuGroup({{"a100", Gpus(4)}}))};
  s.workloads = {Pending("ns/w", "q", 0, 1, {Pods(1, 1)})};
  Decisions d = Schedule(s);
  EXPECT_EQ(FindPending(d, "ns/w")->reason, "Inadmissible");
  EXPECT_EQ(FindPending(d, "ns/w")->message,
            "ClusterQueue q is inactive: cohort x is on a cycle of parents: x -> y -> x");
}

// ---- flavors -----------------------------------------------------------------------------

TEST(EngineFlavorTest, FallsBackToTheNextFlavorInOrder) {
  // MIG slices: the dedicated MIG node first, then the mixed one.
  Snapshot s;
  s.flavors = {Flavor("mig-dedicated"), Flavor("mig-mixed")};
  const std::string mig = "nvidia.com/mig-1g.10gb";
  ResourceGroupSpec g{{mig}, {{"mig-dedicated", {{mig, 7000, {}, {}}}}, {"mig-mixed", {{mig, 1000, {}, {}}}}}};
  s.cluster_queues = {Queue("notebooks", "", {g})};
  for (int i = 0; i < 9; ++i) {
    WorkloadSpec w = Pending("ns/nb-" + std::to_string(i), "notebooks", 0, i, {Pods(1, 1)});
    w.pod_sets[0].per_pod = {{mig, 1000}};
    s.workloads.push_back(w);
  }
  Decisions d = Schedule(s);
  ASSERT_EQ(d.admitted.size(), 8u);
  EXPECT_EQ(FindAdmitted(d, "ns/nb-6")->pod_sets[0].flavors.at(mig), "mig-dedicated");
  EXPECT_EQ(FindAdmitted(d, "ns/nb-7")->pod_sets[0].flavors.at(mig), "mig-mixed");
  EXPECT_EQ(FindPending(d, "ns/nb-8")->message,
            "couldn't assign flavors to pod set main: insufficient unused quota for "
            "nvidia.com/mig-1g.10gb in flavor mig-dedicated, 1 more needed; insufficient unused "
            "quota for nvidia.com/mig-1g.10gb in flavor mig-mixed, 1 more needed");
}

TEST(EngineFlavorTest, TaintsAndNodeSelectorsRuleFlavorsOut) {
  Snapshot s;
  s.flavors = {Flavor("a100", {{"gpu", "a100"}}, {{"nvidia.com/gpu", "present", TaintEffect::kNoSchedule}}),
               Flavor("h100", {{"gpu", "h100"}})};
  s.cluster_queues = {Queue("q", "", GpuGroup({{"a100", Gpus(4)}, {"h100", Gpus(4)}}))};
  WorkloadSpec untolerating = Pending("ns/plain", "q", 0, 1, {Pods(1, 1)});
  WorkloadSpec tolerating = Pending("ns/tolerant", "q", 0, 2, {Pods(1, 1)});
  tolerating.pod_sets[0].tolerations = {{"nvidia.com/gpu", true, "", std::nullopt}};
  WorkloadSpec wants_a100 = Pending("ns/picky", "q", 0, 3, {Pods(1, 1)});
  wants_a100.pod_sets[0].node_selector = {{"gpu", "a100"}};
  s.workloads = {untolerating, tolerating, wants_a100};
  Decisions d = Schedule(s);
  EXPECT_EQ(FindAdmitted(d, "ns/plain")->pod_sets[0].flavors.at(kGpuName), "h100");
  EXPECT_EQ(FindAdmitted(d, "ns/tolerant")->pod_sets[0].flavors.at(kGpuName), "a100");
  EXPECT_EQ(FindPending(d, "ns/picky")->reason, "NoMatchingFlavor");
  EXPECT_EQ(FindPending(d, "ns/picky")->message,
            "couldn't assign flavors to pod set main: untolerated taint "
            "{nvidia.com/gpu=present:NoSchedule} in flavor a100; flavor h100 doesn't match node "
            "affinity");
}

TEST(EngineFlavorTest, TryNextFlavorBeforeBorrowing) {
  Snapshot s;
  s.flavors = {Flavor("a100"), Flavor("h100")};
  s.cluster_queues = {Queue("a", "pool", GpuGroup({{"a100", Gpus(2)}, {"h100", Gpus(4)}})),
                      Queue("b", "pool", GpuGroup({{"a100", Gpus(8)}, {"h100", Gpus(0)}}))};
  s.workloads = {Pending("ns/w", "a", 0, 1, {Pods(1, 4)})};
  // Default (MayStopSearch): borrows a100 from b.
  Decisions d = Schedule(s);
  EXPECT_EQ(FindAdmitted(d, "ns/w")->pod_sets[0].flavors.at(kGpuName), "a100");
  EXPECT_TRUE(FindAdmitted(d, "ns/w")->borrowing);
  // TryNextFlavor: h100 fits without borrowing.
  s.cluster_queues[0].when_can_borrow = FungibilityPolicy::kTryNextFlavor;
  d = Schedule(s);
  EXPECT_EQ(FindAdmitted(d, "ns/w")->pod_sets[0].flavors.at(kGpuName), "h100");
  EXPECT_FALSE(FindAdmitted(d, "ns/w")->borrowing);
}

TEST(EngineFlavorTest, PartialAdmissionTakesTheLargestCountThatFits) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cluster_queues = {Queue("q", "", GpuGroup({{"a100", Gpus(8)}}))};
  WorkloadSpec sweep = Pending("ns/sweep", "q", 0, 2, {Pods(8, 1)});
  sweep.pod_sets[0].min_count = 2;
  s.workloads = {Admitted("ns/running", "q", 0, 3, 1), sweep};
  Decisions d = Schedule(s);
  ASSERT_EQ(AdmittedKeys(d), (Keys{"ns/sweep"}));
  EXPECT_EQ(d.admitted[0].pod_sets[0].count, 5);
  EXPECT_EQ(d.admitted[0].pod_sets[0].usage.at(kGpuName), 5 * kGpu);

  s.workloads[0] = Admitted("ns/running", "q", 0, 7, 1);  // 1 left < minCount 2
  d = Schedule(s);
  EXPECT_TRUE(d.admitted.empty());
}

// ---- order -------------------------------------------------------------------------------

TEST(EngineOrderTest, HigherPriorityFirstThenOlderThenName) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cluster_queues = {Queue("q", "", GpuGroup({{"a100", Gpus(4)}}))};
  s.workloads = {Pending("ns/old-low", "q", 0, 1, {Pods(1, 4)}), Pending("ns/new-high", "q", 10, 5, {Pods(1, 4)})};
  EXPECT_EQ(AdmittedKeys(Schedule(s)), (Keys{"ns/new-high"}));
  s.workloads = {Pending("ns/b", "q", 0, 1, {Pods(1, 4)}), Pending("ns/a", "q", 0, 1, {Pods(1, 4)})};
  EXPECT_EQ(AdmittedKeys(Schedule(s)), (Keys{"ns/a"}));
}

TEST(EngineOrderTest, StrictFifoBlocksBehindItsHeadBestEffortDoesNot) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cluster_queues = {Queue("q", "", GpuGroup({{"a100", Gpus(4)}}))};
  s.workloads = {Admitted("ns/running", "q", 0, 2, 1), Pending("ns/head", "q", 0, 2, {Pods(1, 4)}),
                 Pending("ns/small", "q", 0, 3, {Pods(1, 1)})};
  EXPECT_EQ(AdmittedKeys(Schedule(s)), (Keys{"ns/small"}));

  s.cluster_queues[0].queueing_strategy = QueueingStrategy::kStrictFIFO;
  Decisions d = Schedule(s);
  EXPECT_TRUE(d.admitted.empty());
  EXPECT_EQ(FindPending(d, "ns/small")->reason, "WaitingForQuota");
  EXPECT_EQ(FindPending(d, "ns/small")->message,
            "waiting behind ns/head, which is ahead of it in StrictFIFO ClusterQueue q");
}

TEST(EngineOrderTest, AdmitsEverythingThatFitsInOnePass) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  for (int q = 0; q < 3; ++q) {
    s.cluster_queues.push_back(Queue("q" + std::to_string(q), "", GpuGroup({{"a100", Gpus(4)}})));
    for (int i = 0; i < 4; ++i) {
      s.workloads.push_back(
          Pending("ns/w" + std::to_string(q) + std::to_string(i), "q" + std::to_string(q), 0, i, {Pods(1, 1)}));
    }
  }
  EXPECT_EQ(Schedule(s).admitted.size(), 12u);
}

TEST(EngineOrderTest, PendingComeOutInQueueOrderAndLookAlikesShareTheirReason) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cluster_queues = {Queue("q", "", GpuGroup({{"a100", Gpus(8)}}))};
  s.cluster_queues[0].within_cluster_queue = WithinClusterQueue::kLowerPriority;
  // Three look-alikes that cannot be admitted (nothing below their priority to preempt), a
  // smaller one that can, and a fourth look-alike tried after that admission.
  s.workloads = {Admitted("ns/running", "q", 5, 6, 1),         Pending("ns/c", "q", 5, 3, {Pods(1, 4)}),
                 Pending("ns/a", "q", 5, 2, {Pods(1, 4)}),     Pending("ns/b", "q", 5, 3, {Pods(1, 4)}),
                 Pending("ns/small", "q", 5, 4, {Pods(1, 1)}), Pending("ns/d", "q", 5, 5, {Pods(1, 4)}),
                 Pending("ns/low", "q", 1, 1, {Pods(1, 4)})};
  Decisions d = Schedule(s);
  EXPECT_EQ(AdmittedKeys(d), (Keys{"ns/small"}));
  Keys order;
  for (const auto& p : d.pending) order.push_back(std::string(p.workload));
  EXPECT_EQ(order, (Keys{"ns/a", "ns/b", "ns/c", "ns/d", "ns/low"}));
  const std::string prefix =
      "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor a100, ";
  const std::string suffix = " more needed; no workload can be preempted to make room";
  for (const char* key : {"ns/a", "ns/b", "ns/c"}) {
    const PendingDecision* p = FindPending(d, key);
    ASSERT_NE(p, nullptr) << key;
    EXPECT_EQ(p->reason, "WaitingForQuota") << key;
    EXPECT_EQ(p->message, prefix + "2" + suffix) << key;
  }
  // After ns/small took a GPU, the same shape needs one more.
  EXPECT_EQ(FindPending(d, "ns/d")->message, prefix + "3" + suffix);
  EXPECT_EQ(FindPending(d, "ns/low")->message, prefix + "3" + suffix);
  // Each decision points at its workload in the snapshot (the controller reads the object
  // through it), though the snapshot holds them in another order.
  for (const auto& p : d.pending) {
    ASSERT_LT(p.index, s.workloads.size());
    EXPECT_EQ(s.workloads[p.index].key, p.workload);
  }
  // The same when the snapshot gives the scheduling order.
  s.order = {0, 2, 1, 3, 4, 5, 6};
  std::sort(s.order.begin(), s.order.end(),
            [&](uint32_t x, uint32_t y) { return InSchedulingOrder(s.workloads[x], s.workloads[y]); });
  Decisions given = Schedule(s);
  Keys given_order;
  for (const auto& p : given.pending) {
    given_order.push_back(std::string(p.workload));
    ASSERT_LT(p.index, s.workloads.size());
    EXPECT_EQ(s.workloads[p.index].key, p.workload);
  }
  EXPECT_EQ(given_order, order);
}

TEST(ShapeTableTest, EqualShapesShareANumberAndDifferentOnesDoNot) {
  ShapeTable shapes;
  const WorkloadSpec a = Pending("ns/a", "q", 5, 1, {Pods(2, 4)});
  const uint32_t n = shapes.Of(a);
  EXPECT_NE(n, 0u);
  // Key, queue, priority and creation time are not part of a shape.
  EXPECT_EQ(shapes.Of(Pending("ns/b", "other", 9, 7, {Pods(2, 4)})), n);
  std::set<uint32_t> seen = {n};
  WorkloadSpec critical = a;
  critical.preemptible = false;
  WorkloadSpec partial = a;
  partial.pod_sets[0].min_count = 1;
  WorkloadSpec with_cpu = a;
  with_cpu.pod_sets[0].per_pod["cpu"] = 1000;
  for (const WorkloadSpec& w :
       {Pending("ns/c", "q", 5, 1, {Pods(3, 4)}), Pending("ns/d", "q", 5, 1, {Pods(2, 8)}),
        Pending("ns/e", "q", 5, 1, {Pods(2, 4, "workers")}),
        Pending("ns/f", "q", 5, 1, {Pods(2, 4), Pods(1, 1, "driver")}), critical, partial, with_cpu}) {
    const uint32_t m = shapes.Of(w);
    EXPECT_NE(m, 0u) << w.key;
    EXPECT_TRUE(seen.insert(m).second) << w.key << " got the number of another shape";
  }
  // A pod set with placement constraints of its own is never a look-alike.
  WorkloadSpec pinned = a;
  pinned.pod_sets[0].node_selector["zone"] = "a";
  EXPECT_EQ(shapes.Of(pinned), 0u);
  // A full table numbers no new shape (the engine then compares), and keeps the numbers it gave.
  ShapeTable small(1);
  EXPECT_EQ(small.Of(a), 1u);
  EXPECT_EQ(small.Of(Pending("ns/c", "q", 5, 1, {Pods(3, 4)})), 0u);
  EXPECT_EQ(small.Of(a), 1u);
}

TEST(EngineOrderTest, StoppedAndMissingQueuesAdmitNothing) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cluster_queues = {Queue("q", "", GpuGroup({{"a100", Gpus(4)}}))};
  s.cluster_queues[0].stopped = true;
  WorkloadSpec lost = Pending("ns/lost", "", 0, 1, {Pods(1, 1)});
  lost.inadmissible_reason = "Inadmissible";
  lost.inadmissible_message = "LocalQueue gpu doesn't exist";
  s.workloads = {Pending("ns/held", "q", 0, 1, {Pods(1, 1)}), Pending("ns/orphan", "gone", 0, 1, {Pods(1, 1)}), lost};
  Decisions d = Schedule(s);
  EXPECT_TRUE(d.admitted.empty());
  EXPECT_EQ(FindPending(d, "ns/held")->reason, "Stopped");
  EXPECT_EQ(FindPending(d, "ns/held")->message, "ClusterQueue q is stopped");
  EXPECT_EQ(FindPending(d, "ns/orphan")->message, "ClusterQueue gone doesn't exist");
  EXPECT_EQ(FindPending(d, "ns/lost")->message, "LocalQueue gpu doesn't exist");
}

// ---- preemption --------------------------------------------------------------------------

TEST(EnginePreemptionTest, WithinClusterQueueLowerPriority) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cluster_queues = {Queue("q", "", GpuGroup({{"a100", Gpus(8)}}))};
  s.cluster_queues[0].within_cluster_queue = WithinClusterQueue::kLowerPriority;
  s.workloads = {Admitted("ns/low", "q", 0, 8, 1), Pending("ns/high", "q", 10, 5, {Pods(1, 8)}),
                 Pending("ns/peer", "q", 0, 6, {Pods(1, 8)})};
  Decisions d = Schedule(s);
  EXPECT_EQ(AdmittedKeys(d), (Keys{"ns/high"}));
  EXPECT_EQ(PreemptedKeys(d), (Keys{"ns/low:InClusterQueue"}));
  EXPECT_EQ(d.preempted[0].preemptor, "ns/high");
  // Nothing of lower priority is left for the peer to preempt.
  EXPECT_EQ(FindPending(d, "ns/peer")->reason, "WaitingForQuota");
  EXPECT_NE(FindPending(d, "ns/peer")->message.find("; no workload can be preempted to make room"), std::string::npos);

  s.cluster_queues[0].within_cluster_queue = WithinClusterQueue::kNever;
  d = Schedule(s);
  EXPECT_TRUE(d.preempted.empty());
  EXPECT_EQ(FindPending(d, "ns/high")->message,
            "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu "
            "in flavor a100, 8 more needed");
}

// A pass cut short keeps its first admissions with their victims; what it drops is decided again
// by the next pass, on the state the kept ones leave.
TEST(EnginePreemptionTest, KeepFirstAdmissionsKeepsEachPreemptorWithItsVictims) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cluster_queues = {Queue("q1", "", GpuGroup({{"a100", Gpus(4)}})), Queue("q2", "", GpuGroup({{"a100", Gpus(4)}}))};
  s.cluster_queues[0].within_cluster_queue = WithinClusterQueue::kLowerPriority;
  s.workloads = {Admitted("ns/low-1", "q1", 0, 2, 1), Admitted("ns/low-2", "q1", 0, 2, 2),
                 Pending("ns/high", "q1", 10, 5, {Pods(1, 4)}), Pending("ns/a", "q2", 0, 3, {Pods(1, 2)}),
                 Pending("ns/b", "q2", 0, 4, {Pods(1, 2)})};
  const Decisions full = Schedule(s);
  // Within nominal quota first (a, b), then the preemptor with its two victims.
  ASSERT_EQ(full.admitted.size(), 3u);
  ASSERT_EQ(full.admitted[2].workload, "ns/high");
  ASSERT_EQ(full.preempted.size(), 2u);

  Decisions d = Schedule(s);  // the same decisions again (Decisions do not copy)
  EXPECT_EQ(KeepFirstAdmissions(d, 5), 0u);
  EXPECT_EQ(d.admitted.size() + d.preempted.size(), 5u);

  d = Schedule(s);
  EXPECT_EQ(KeepFirstAdmissions(d, 4), 1u);  // high and its victims would make 5
  EXPECT_EQ(AdmittedKeys(d), (Keys{"ns/a", "ns/b"}));
  EXPECT_TRUE(d.preempted.empty());

  // The next pass, on the state the kept ones leave, decides the rest.
  for (auto& w : s.workloads) {
    if (const AdmitDecision* a = FindAdmitted(d, w.key)) w.admission = AdmissionSpec{a->cluster_queue, a->pod_sets};
  }
  const Decisions next = Schedule(s);
  EXPECT_EQ(AdmittedKeys(next), (Keys{"ns/high"}));
  EXPECT_EQ(PreemptedKeys(next), (Keys{"ns/low-2:InClusterQueue", "ns/low-1:InClusterQueue"}));  // newest first

  // The first admission is kept whatever its victims number.
  s.workloads.resize(3);
  d = Schedule(s);
  EXPECT_EQ(KeepFirstAdmissions(d, 1), 0u);
  EXPECT_EQ(AdmittedKeys(d), (Keys{"ns/high"}));
  EXPECT_EQ(d.preempted.size(), 2u);
}

TEST(EnginePreemptionTest, LowerOrNewerEqualPriority) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cluster_queues = {Queue("q", "", GpuGroup({{"a100", Gpus(4)}}))};
  s.cluster_queues[0].within_cluster_queue = WithinClusterQueue::kLowerOrNewerEqualPriority;
  WorkloadSpec newer = Admitted("ns/newer", "q", 5, 4, 9);
  newer.creation_time = 9;
  s.workloads = {newer, Pending("ns/older", "q", 5, 1, {Pods(1, 4)})};
  EXPECT_EQ(PreemptedKeys(Schedule(s)), (Keys{"ns/newer:InClusterQueue"}));
}

TEST(EnginePreemptionTest, ChoosesAMinimalSetOfVictims) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cluster_queues = {Queue("q", "", GpuGroup({{"a100", Gpus(5)}}))};
  s.cluster_queues[0].within_cluster_queue = WithinClusterQueue::kLowerPriority;
  // small is tried first (lowest priority) but is not needed once big is gone.
  s.workloads = {Admitted("ns/small", "q", 0, 1, 3), Admitted("ns/big", "q", 1, 4, 1),
                 Pending("ns/preemptor", "q", 5, 9, {Pods(1, 4)})};
  Decisions d = Schedule(s);
  EXPECT_EQ(PreemptedKeys(d), (Keys{"ns/big:InClusterQueue"}));
  EXPECT_EQ(AdmittedKeys(d), (Keys{"ns/preemptor"}));
}

TEST(EnginePreemptionTest, MostRecentlyAdmittedGoFirst) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cluster_queues = {Queue("q", "", GpuGroup({{"a100", Gpus(4)}}))};
  s.cluster_queues[0].within_cluster_queue = WithinClusterQueue::kLowerPriority;
  s.workloads = {Admitted("ns/first", "q", 0, 2, 1), Admitted("ns/second", "q", 0, 2, 2),
                 Pending("ns/p", "q", 5, 9, {Pods(1, 2)})};
  EXPECT_EQ(PreemptedKeys(Schedule(s)), (Keys{"ns/second:InClusterQueue"}));
}

TEST(EnginePreemptionTest, ReclaimsLentQuotaFromBorrowers) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cluster_queues = {Queue("a", "pool", GpuGroup({{"a100", Gpus(4)}})),
                      Queue("b", "pool", GpuGroup({{"a100", Gpus(4)}}))};
  s.cluster_queues[0].reclaim_within_cohort = ReclaimWithinCohort::kAny;
  // b runs 8 GPUs: 4 of its own and 4 borrowed from a.
  s.workloads = {Admitted("ns/b-own", "b", 9, 4, 1), Admitted("ns/b-borrowed", "b", 9, 4, 2),
                 Pending("ns/a-needs", "a", 0, 3, {Pods(1, 4)})};
  Decisions d = Schedule(s);
  EXPECT_EQ(PreemptedKeys(d), (Keys{"ns/b-borrowed:InCohortReclamation"}));
  EXPECT_EQ(AdmittedKeys(d), (Keys{"ns/a-needs"}));

  s.cluster_queues[0].reclaim_within_cohort = ReclaimWithinCohort::kLowerPriority;
  EXPECT_TRUE(Schedule(s).preempted.empty());  // the borrower has the higher priority
  s.cluster_queues[0].reclaim_within_cohort = ReclaimWithinCohort::kNever;
  EXPECT_TRUE(Schedule(s).preempted.empty());
}

TEST(EnginePreemptionTest, FreedQuotaGoesToItsOwnQueueBeforeABorrower) {
  // As in a Kueue scheduling cycle: a workload that fits in its queue's nominal quota goes before
  // one that would borrow, even an older one of higher priority, so that the quota is not lent
  // out in one pass and reclaimed by preemption in the next.
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cluster_queues = {Queue("a", "pool", GpuGroup({{"a100", Gpus(4)}})),
                      Queue("b", "pool", GpuGroup({{"a100", Gpus(4)}}))};
  s.cluster_queues[0].reclaim_within_cohort = ReclaimWithinCohort::kAny;
  s.workloads = {Admitted("ns/b-own", "b", 0, 4, 1), Pending("ns/b-borrower", "b", 9, 2, {Pods(1, 4)}),
                 Pending("ns/a-own", "a", 0, 3, {Pods(1, 4)})};
  Decisions d = Schedule(s);
  EXPECT_EQ(AdmittedKeys(d), (Keys{"ns/a-own"}));
  EXPECT_TRUE(d.preempted.empty());
  EXPECT_EQ(FindPending(d, "ns/b-borrower")->reason, "WaitingForQuota");

  // Within one queue the order holds: its older workload that must borrow is not overtaken.
  s.workloads = {Pending("ns/a-big", "a", 0, 1, {Pods(1, 6)}), Pending("ns/a-small", "a", 0, 2, {Pods(1, 4)})};
  EXPECT_EQ(AdmittedKeys(Schedule(s)), (Keys{"ns/a-big"}));
}

TEST(EnginePreemptionTest, BorrowWithinCohortBelowTheThreshold) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cluster_queues = {Queue("a", "pool", GpuGroup({{"a100", Gpus(2)}})),
                      Queue("b", "pool", GpuGroup({{"a100", Gpus(6)}})),
                      Queue("c", "pool", GpuGroup({{"a100", Gpus(0)}}))};
  s.cluster_queues[0].reclaim_within_cohort = ReclaimWithinCohort::kLowerPriority;
  s.cluster_queues[0].borrow_within_cohort = BorrowWithinCohort::kLowerPriority;
  s.cluster_queues[0].borrow_max_priority_threshold = 5;
  s.workloads = {Admitted("ns/a-run", "a", 10, 2, 1), Admitted("ns/b-run", "b", 0, 2, 2),
                 Admitted("ns/c-borrow", "c", 0, 4, 3), Pending("ns/a-more", "a", 10, 4, {Pods(1, 2)})};
  Decisions d = Schedule(s);
  EXPECT_EQ(PreemptedKeys(d), (Keys{"ns/c-borrow:InCohortReclaimWhileBorrowing"}));

  s.cluster_queues[0].borrow_max_priority_threshold = -1;  // c-borrow (0) is above it
  EXPECT_TRUE(Schedule(s).preempted.empty());
}

TEST(EnginePreemptionTest, CriticalTierIsNeverAVictimAndNeverBorrows) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cluster_queues = {Queue("serve", "pool", GpuGroup({{"a100", Gpus(4)}})),
                      Queue("train", "pool", GpuGroup({{"a100", Gpus(4)}}))};
  s.cluster_queues[0].within_cluster_queue = WithinClusterQueue::kLowerPriority;
  WorkloadSpec critical_running = Admitted("ns/serve-old", "serve", 0, 4, 1);
  critical_running.preemptible = false;
  WorkloadSpec critical_big = Pending("ns/serve-big", "serve", 1000, 2, {Pods(1, 6)});
  critical_big.preemptible = false;
  s.workloads = {critical_running, critical_big, Pending("ns/hi", "serve", 500, 3, {Pods(1, 2)})};
  Decisions d = Schedule(s);
  EXPECT_TRUE(d.preempted.empty());
  EXPECT_EQ(FindPending(d, "ns/serve-big")->reason, "ExceedsMaxQuota");
  EXPECT_EQ(FindPending(d, "ns/serve-big")->message,
            "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in "
            "flavor a100, request > maximum capacity (6 > 4) for a workload that never borrows");
  // A preemptible workload may borrow train's idle quota instead.
  EXPECT_EQ(AdmittedKeys(d), (Keys{"ns/hi"}));
}

// A victim search that failed for one workload says nothing about a workload of lower priority
// when the failed one could take an evicted workload, which goes first whatever its priority: x
// takes the evicted e, then b1, after which b borrows nothing and b2 is not taken, and 11 GPUs
// are not 12. v cannot take e, takes b1 and b2, and finds room.
TEST(EnginePreemptionTest, AFailedSearchThatTookAnEvictedVictimDoesNotFailALowerPriority) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cluster_queues = {Queue("a", "pool", GpuGroup({{"a100", Gpus(10)}})),
                      Queue("b", "pool", GpuGroup({{"a100", Gpus(10)}})),
                      Queue("d", "pool", GpuGroup({{"a100", Gpus(10)}}))};
  s.cluster_queues[0].reclaim_within_cohort = ReclaimWithinCohort::kLowerPriority;
  s.cluster_queues[0].borrow_within_cohort = BorrowWithinCohort::kLowerPriority;
  WorkloadSpec evicted = Admitted("ns/e", "b", 6, 2, 3);
  evicted.evicted = true;
  s.workloads = {Admitted("ns/a1", "a", 100, 10, 1),        evicted,
                 Admitted("ns/b1", "b", 0, 9, 1),           Admitted("ns/b2", "b", 0, 9, 2),
                 Pending("ns/x", "a", 9, 5, {Pods(1, 12)}), Pending("ns/v", "a", 5, 5, {Pods(1, 12)})};
  Decisions d = Schedule(s);
  EXPECT_EQ(AdmittedKeys(d), (Keys{"ns/v"}));
  EXPECT_EQ(PreemptedKeys(d), (Keys{"ns/b2:InCohortReclaimWhileBorrowing", "ns/b1:InCohortReclaimWhileBorrowing"}));
}

// Nor for a workload whose need falls on the other side of its queue's nominal quota, where other
// cohort rules apply: x fits within a's nominal quota, which may reclaim nothing, while v borrows,
// and may take lower priorities while borrowing.
TEST(EnginePreemptionTest, AFailedSearchWithinNominalQuotaDoesNotFailOneThatBorrows) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cluster_queues = {Queue("a", "pool", GpuGroup({{"a100", Gpus(10)}})),
                      Queue("b", "pool", GpuGroup({{"a100", Gpus(10)}})),
                      Queue("d", "pool", GpuGroup({{"a100", Gpus(10)}}))};
  s.cluster_queues[0].borrow_within_cohort = BorrowWithinCohort::kLowerPriority;
  s.workloads = {Admitted("ns/a1", "a", 100, 4, 1), Admitted("ns/b1", "b", 0, 11, 1), Admitted("ns/b2", "b", 0, 11, 2),
                 Pending("ns/x", "a", 9, 5, {Pods(1, 6)}), Pending("ns/v", "a", 5, 5, {Pods(1, 7)})};
  Decisions d = Schedule(s);
  EXPECT_EQ(AdmittedKeys(d), (Keys{"ns/v"}));
  EXPECT_EQ(PreemptedKeys(d), (Keys{"ns/b2:InCohortReclaimWhileBorrowing"}));
}

TEST(EnginePreemptionTest, FairSharingTakesBackFromTheLargestShare) {
  Snapshot s;
  s.fair_sharing = true;
  s.flavors = {Flavor("a100")};
  s.cohorts = {{"pool", "", GpuGroup({{"a100", Gpus(8)}}), 1000}};
  s.cluster_queues = {Queue("a", "pool", GpuGroup({{"a100", Gpus(0)}})),
                      Queue("b", "pool", GpuGroup({{"a100", Gpus(0)}}))};
  s.cluster_queues[0].reclaim_within_cohort = ReclaimWithinCohort::kAny;
  for (int i = 0; i < 8; ++i) s.workloads.push_back(Admitted("ns/b" + std::to_string(i), "b", 0, 1, i));
  for (int i = 0; i < 6; ++i) s.workloads.push_back(Pending("ns/a" + std::to_string(i), "a", 0, 10 + i, {Pods(1, 1)}));
  Decisions d = Schedule(s);
  // a takes turns until the shares are even: 4 and 4.
  EXPECT_EQ(d.admitted.size(), 4u);
  EXPECT_EQ(d.preempted.size(), 4u);
  for (const auto& p : d.preempted) EXPECT_EQ(p.reason, PreemptionReason::kInCohortFairSharing);
}

TEST(EngineFairSharingTest, QueuesTakeTurnsByShare) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cohorts = {{"pool", "", GpuGroup({{"a100", Gpus(8)}}), 1000}};
  s.cluster_queues = {Queue("a", "pool", GpuGroup({{"a100", Gpus(0)}})),
                      Queue("b", "pool", GpuGroup({{"a100", Gpus(0)}}))};
  for (int i = 0; i < 6; ++i) {
    s.workloads.push_back(Pending("ns/a" + std::to_string(i), "a", 0, i, {Pods(1, 1)}));
    s.workloads.push_back(Pending("ns/b" + std::to_string(i), "b", 0, 100 + i, {Pods(1, 1)}));
  }
  auto count_in = [](const Decisions& d, const std::string& cq) {
    return std::count_if(d.admitted.begin(), d.admitted.end(),
                         [&](const AdmitDecision& a) { return a.cluster_queue == cq; });
  };
  Decisions fifo = Schedule(s);
  EXPECT_EQ(count_in(fifo, "a"), 6);
  EXPECT_EQ(count_in(fifo, "b"), 2);
  s.fair_sharing = true;
  Decisions fair = Schedule(s);
  EXPECT_EQ(count_in(fair, "a"), 4);
  EXPECT_EQ(count_in(fair, "b"), 4);
  // Weight 3 against 1: b gets three GPUs for each of a's.
  s.cluster_queues[1].fair_weight_milli = 3000;
  Decisions weighted = Schedule(s);
  EXPECT_EQ(count_in(weighted, "a"), 2);
  EXPECT_EQ(count_in(weighted, "b"), 6);
}

}  // namespace
}  // namespace rota::admission

namespace rota::admission {
namespace {

// ClusterQueue "team" with 8 GPUs, preempting lower priorities, at time 10000.
Snapshot EightGpuTeam() {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cluster_queues = {Queue("team", "", GpuGroup({{"a100", Gpus(8)}}))};
  s.cluster_queues[0].within_cluster_queue = WithinClusterQueue::kLowerPriority;
  s.now = 10000;
  return s;
}

TEST(EngineLostWorkTest, TheVictimThatCheckpointedLatestGoesFirst) {
  Snapshot s = EightGpuTeam();
  // Kueue's order would take `recent` (admitted last); `saved` checkpointed a minute ago.
  WorkloadSpec saved = Admitted("ns/saved", "team", 0, 4, 1000);
  saved.last_checkpoint = 9940;
  s.workloads = {saved, Admitted("ns/recent", "team", 0, 4, 5000), Pending("ns/hi", "team", 10, 1, {Pods(1, 4)})};
  EXPECT_EQ(PreemptedKeys(Schedule(s)), (Keys{"ns/saved:InClusterQueue"}));
  // Without a time, Kueue's order.
  s.now = 0;
  EXPECT_EQ(PreemptedKeys(Schedule(s)), (Keys{"ns/recent:InClusterQueue"}));
}

TEST(EngineLostWorkTest, OneLargeVictimThatLosesLessBeatsManySmallOnes) {
  Snapshot s = EightGpuTeam();
  // Four 1-GPU jobs that ran 5000 s lose 20000 GPU-seconds; the 4-GPU job admitted 1000 s ago
  // loses 4000.
  s.workloads = {Admitted("ns/s1", "team", 0, 1, 5000),  Admitted("ns/s2", "team", 0, 1, 5000),
                 Admitted("ns/s3", "team", 0, 1, 5000),  Admitted("ns/s4", "team", 0, 1, 5000),
                 Admitted("ns/big", "team", 0, 4, 9000), Pending("ns/hi", "team", 10, 1, {Pods(1, 4)})};
  EXPECT_EQ(PreemptedKeys(Schedule(s)), (Keys{"ns/big:InClusterQueue"}));
}

TEST(EngineLostWorkTest, PriorityStillComesBeforeWorkLost) {
  Snapshot s = EightGpuTeam();
  WorkloadSpec mid = Admitted("ns/mid", "team", 5, 4, 9990);  // lost little, but a higher tier
  s.workloads = {mid, Admitted("ns/low", "team", 0, 4, 1000), Pending("ns/hi", "team", 10, 1, {Pods(1, 4)})};
  EXPECT_EQ(PreemptedKeys(Schedule(s)), (Keys{"ns/low:InClusterQueue"}));
}

TEST(EngineLostWorkTest, TheMinimalSetGivesBackTheVictimThatWouldLoseMostFirst) {
  Snapshot s = EightGpuTeam();
  s.cluster_queues[0].resource_groups = GpuGroup({{"a100", Gpus(6)}});
  // hi needs 4 GPUs. By time since admission a (2 GPUs, 10 s), b (1, 11 s) and c (3, 12 s) are
  // taken in that order (6 freed); of the sets that are enough, {b, c} loses 47 GPU-seconds and
  // {a, c} 56: a is given back first, as it would lose more than b.
  s.workloads = {Admitted("ns/a", "team", 0, 2, 9990), Admitted("ns/b", "team", 0, 1, 9989),
                 Admitted("ns/c", "team", 0, 3, 9988), Pending("ns/hi", "team", 10, 1, {Pods(1, 4)})};
  EXPECT_EQ(PreemptedKeys(Schedule(s)), (Keys{"ns/b:InClusterQueue", "ns/c:InClusterQueue"}));
}

TEST(EngineMinRuntimeTest, ARecentAdmissionIsProtectedFromPreemptionInItsQueue) {
  Snapshot s = EightGpuTeam();
  s.cluster_queues[0].preempt_min_runtime = 600;
  s.workloads = {Admitted("ns/young", "team", 0, 8, 9500), Pending("ns/hi", "team", 10, 1, {Pods(1, 4)})};
  Decisions d = Schedule(s);
  EXPECT_TRUE(d.preempted.empty());
  EXPECT_EQ(FindPending(d, "ns/hi")->reason, "WaitingForQuota");
  EXPECT_NE(std::string(FindPending(d, "ns/hi")->message).find("no workload can be preempted"), std::string::npos);
  s.now = 10100;  // 600 s after its admission
  EXPECT_EQ(PreemptedKeys(Schedule(s)), (Keys{"ns/young:InClusterQueue"}));
}

TEST(EngineMinRuntimeTest, ReclaimMinRuntimeProtectsAgainstOtherQueuesOnly) {
  Snapshot s;
  s.flavors = {Flavor("a100")};
  s.cluster_queues = {Queue("lender", "pool", GpuGroup({{"a100", Gpus(4)}})),
                      Queue("borrower", "pool", GpuGroup({{"a100", Gpus(4)}}))};
  s.cluster_queues[0].reclaim_within_cohort = ReclaimWithinCohort::kAny;
  s.cluster_queues[1].reclaim_min_runtime = 600;
  s.now = 10000;
  s.workloads = {Admitted("ns/borrowing", "borrower", 0, 8, 9500), Pending("ns/mine", "lender", 0, 1, {Pods(1, 4)})};
  EXPECT_TRUE(Schedule(s).preempted.empty()) << "borrowed 500 s ago: protected";
  s.cluster_queues[1].reclaim_min_runtime = 0;
  s.cluster_queues[1].preempt_min_runtime = 600;  // protects only within its own queue
  EXPECT_EQ(PreemptedKeys(Schedule(s)), (Keys{"ns/borrowing:InCohortReclamation"}));
}

}  // namespace
}  // namespace rota::admission
