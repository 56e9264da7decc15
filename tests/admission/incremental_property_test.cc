// The incremental engine against the whole-snapshot one, its oracle: random clusters of several
// cohort trees take random sequences of changes (workloads arrive, finish, are deleted, change
// priority; decisions are applied in full, in part or not at all; time passes; queues change;
// passes run with and without a change limit), and after every change both engines must decide
// the same: the same admissions in the same order with the same flavors, the same victims, and
// the same pending reasons, messages and positions.

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>

#include "rota/admission/engine.h"
#include "rota/admission/incremental.h"

namespace rota::admission {
namespace {

constexpr int64_t kUnit = 1000;
const std::vector<std::string> kResources = {"nvidia.com/gpu", "cpu"};

class Cluster {
 public:
  explicit Cluster(uint32_t seed) : rng_(seed) {}

  int Pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  void MakeQueues() {
    flavors_.clear();
    cohorts_.clear();
    queues_.clear();
    const int flavors = Pick(1, 2);
    for (int f = 0; f < flavors; ++f) {
      flavors_.push_back({"f" + std::to_string(f), {{"pool", "f" + std::to_string(f)}}, {}});
      if (Pick(0, 3) == 0) flavors_.back().node_taints = {Taint{"gpu", "", TaintEffect::kNoSchedule}};
    }
    const int roots = Pick(1, 3);
    for (int r = 0; r < roots; ++r) {
      const std::string root = "root" + std::to_string(r);
      cohorts_.push_back({root, "", Pick(0, 2) == 0 ? Groups(false) : std::vector<ResourceGroupSpec>{}, 1000});
      if (Pick(0, 2) == 0) cohorts_.push_back({root + "-child", root, Groups(true), 1000});
    }
    if (cohorts_.size() >= 2 && cohorts_[1].parent == cohorts_[0].name && Pick(0, 9) == 0)
      cohorts_[0].parent = cohorts_[1].name;  // a cycle: its queues are inactive
    const int queues = Pick(2, 7);
    for (int q = 0; q < queues; ++q) {
      ClusterQueueSpec cq;
      cq.name = "cq" + std::to_string(q);
      const size_t where = static_cast<size_t>(Pick(0, static_cast<int>(cohorts_.size())));
      cq.cohort = where == cohorts_.size() ? "" : cohorts_[where].name;
      if (Pick(0, 9) == 0) cq.cohort = "implicit";  // a cohort no Cohort object defines
      cq.resource_groups = Groups(!cq.cohort.empty());
      cq.queueing_strategy = Pick(0, 4) == 0 ? QueueingStrategy::kStrictFIFO : QueueingStrategy::kBestEffortFIFO;
      cq.when_can_borrow = Pick(0, 1) ? FungibilityPolicy::kTryNextFlavor : FungibilityPolicy::kMayStopSearch;
      cq.within_cluster_queue = static_cast<WithinClusterQueue>(Pick(0, 2));
      cq.reclaim_within_cohort = static_cast<ReclaimWithinCohort>(Pick(0, 2));
      if (cq.reclaim_within_cohort != ReclaimWithinCohort::kNever && Pick(0, 1))
        cq.borrow_within_cohort = BorrowWithinCohort::kLowerPriority;
      if (Pick(0, 5) == 0) cq.preempt_min_runtime = Pick(1, 4);
      if (Pick(0, 5) == 0) cq.reclaim_min_runtime = Pick(1, 4);
      if (Pick(0, 12) == 0) cq.stopped = true;
      queues_.push_back(cq);
    }
    if (Pick(0, 19) == 0) queues_.push_back(queues_.front());  // two of one name
  }

  void AddWorkload() {
    WorkloadSpec w;
    w.key = "ns/w" + std::to_string(serial_);
    w.creation_time = serial_++ % 7;  // (ties, so that keys decide some orders)
    w.cluster_queue = Pick(0, 15) == 0 ? "nowhere" : queues_[Pick(0, static_cast<int>(queues_.size()) - 1)].name;
    w.priority = Pick(0, 3);
    w.preemptible = Pick(0, 9) != 0;
    w.may_preempt = Pick(0, 9) != 0;
    if (Pick(0, 19) == 0) {
      w.inadmissible_reason = "Inadmissible";
      w.inadmissible_message = "namespace ns is not selected";
    }
    const int pod_sets = Pick(1, 2);
    for (int p = 0; p < pod_sets; ++p) {
      PodSetSpec ps;
      ps.name = "ps" + std::to_string(p);
      ps.count = Pick(1, 3);
      if (p == 0 && Pick(0, 3) == 0) ps.min_count = Pick(1, ps.count);
      ps.per_pod["nvidia.com/gpu"] = Pick(0, 3) * kUnit;
      if (Pick(0, 1)) ps.per_pod["cpu"] = Pick(1, 2) * kUnit;
      if (Pick(0, 4) == 0) ps.tolerations = {Toleration{"gpu", true, "", std::nullopt}};
      if (Pick(0, 7) == 0) ps.node_selector = {{"pool", "f0"}};
      w.pod_sets.push_back(ps);
    }
    if (Pick(0, 7) == 0) w.budget_charges = {BudgetCharge{0, Pick(1, 3) * kUnit}};
    if (Pick(0, 2) > 0) w.shape = static_cast<uint32_t>(shapes_.Of(w));
    workloads_[w.key] = w;
    incremental_.Upsert(w);
  }

  // One random change, made to both the oracle's state and the incremental engine.
  void Change(const Decisions& last) {
    const int what = Pick(0, 15);
    if (what <= 4) {
      AddWorkload();
    } else if (what <= 8) {
      Apply(last, what == 8);
    } else if (what <= 10 && !workloads_.empty()) {
      auto it = std::next(workloads_.begin(), Pick(0, static_cast<int>(workloads_.size()) - 1));
      incremental_.Remove(it->first);
      workloads_.erase(it);
    } else if (what == 11 && !workloads_.empty()) {
      auto it = std::next(workloads_.begin(), Pick(0, static_cast<int>(workloads_.size()) - 1));
      WorkloadSpec& w = it->second;
      const int how = Pick(0, 2);
      if (w.admission && how == 0) {
        w.evicted = !w.evicted;
      } else if (w.admission && how == 1) {
        w.last_checkpoint = now_ + Pick(-2, 2);  // (some after the pass's time: clocks differ)
      } else if (w.admission) {
        w.cluster_queue = queues_[Pick(0, static_cast<int>(queues_.size()) - 1)].name;  // its queue moved on
      } else {
        w.priority = Pick(0, 3);
      }
      incremental_.Upsert(w);
    } else if (what <= 13) {
      now_ += Pick(1, 3);
      incremental_.SetNow(now_);
    } else if (what == 14 && Pick(0, 3) == 0) {
      ClusterQueueSpec& cq = queues_[Pick(0, static_cast<int>(queues_.size()) - 1)];
      cq.resource_groups = Groups(!cq.cohort.empty());
      if (Pick(0, 3) == 0) cq.stopped = !cq.stopped;
      if (Pick(0, 3) == 0)
        cq.queueing_strategy = cq.queueing_strategy == QueueingStrategy::kStrictFIFO ? QueueingStrategy::kBestEffortFIFO
                                                                                     : QueueingStrategy::kStrictFIFO;
      incremental_.SetQueues(flavors_, cohorts_, queues_);
    } else if (what == 14 && Pick(0, 2) == 0) {
      fair_sharing_ = !fair_sharing_;  // (ties the parts together: whole-cluster passes)
      incremental_.SetFairSharing(fair_sharing_);
    } else if (what == 14 && Pick(0, 1) == 0) {
      // A budget pool the workloads with charges draw on (without it, theirs is not known).
      pools_ = pools_.empty() ? std::vector<BudgetPool>{{Pick(0, 6) * kUnit, "budget b is used up"}}
                              : std::vector<BudgetPool>{};
      incremental_.SetBudgetPools(pools_);
    } else if (!workloads_.empty()) {
      incremental_.Upsert(workloads_.begin()->second);  // the same again
    }
  }

  // Applies the last pass's decisions, or only the first of them (a controller that holds some).
  void Apply(const Decisions& d, bool first_only) {
    for (const auto& p : d.preempted) {
      if (!workloads_.count(p.workload)) continue;
      WorkloadSpec& w = workloads_.at(p.workload);
      w.admission.reset();
      w.evicted = false;
      incremental_.Upsert(w);
      if (first_only) return;
    }
    for (const auto& a : d.admitted) {
      if (!workloads_.count(a.workload)) continue;
      WorkloadSpec& w = workloads_.at(a.workload);
      w.admission = AdmissionSpec{a.cluster_queue, a.pod_sets};
      w.admission_time = now_;
      incremental_.Upsert(w);
      if (first_only) return;
    }
  }

  Snapshot Whole() const {
    Snapshot s;
    s.flavors = flavors_;
    s.cohorts = cohorts_;
    s.cluster_queues = queues_;
    for (const auto& [key, w] : workloads_) s.workloads.push_back(w);
    s.now = now_;
    s.fair_sharing = fair_sharing_;
    s.budget_pools = pools_;
    return s;
  }

  void Start() {
    MakeQueues();
    incremental_.SetQueues(flavors_, cohorts_, queues_);
    now_ = Pick(0, 2) == 0 ? 0 : 100;  // (0: no time yet, until the first step of time)
    incremental_.SetNow(now_);
  }

  IncrementalScheduler& incremental() { return incremental_; }

 private:
  std::vector<ResourceGroupSpec> Groups(bool with_cohort) {
    ResourceGroupSpec g;
    g.covered_resources = kResources;
    for (const auto& f : flavors_) {
      FlavorQuotaSpec fq{f.name, {}};
      for (const auto& r : kResources) {
        QuotaSpec q{r, Pick(0, 6) * kUnit, std::nullopt, std::nullopt};
        if (with_cohort && Pick(0, 2) == 0) q.borrowing_limit = Pick(0, 4) * kUnit;
        if (with_cohort && Pick(0, 2) == 0) q.lending_limit = Pick(0, static_cast<int>(q.nominal / kUnit)) * kUnit;
        fq.resources.push_back(q);
      }
      g.flavors.push_back(fq);
    }
    return {g};
  }

  std::mt19937 rng_;
  std::vector<FlavorSpec> flavors_;
  std::vector<CohortSpec> cohorts_;
  std::vector<ClusterQueueSpec> queues_;
  std::map<std::string, WorkloadSpec> workloads_;
  ShapeTable shapes_;
  int serial_ = 0;
  int64_t now_ = 0;
  bool fair_sharing_ = false;
  std::vector<BudgetPool> pools_;
  IncrementalScheduler incremental_;
};

std::string Dump(const Decisions& d) {
  std::ostringstream out;
  for (const auto& a : d.admitted) {
    out << "A " << a.workload << " " << a.cluster_queue << " borrowing=" << a.borrowing << " first=" << a.first_round;
    for (const auto& ps : a.pod_sets) {
      out << " [" << ps.name << " " << ps.count;
      for (const auto& [r, f] : ps.flavors) out << " " << r << "=" << f;
      for (const auto& [r, q] : ps.usage) out << " " << r << ":" << q;
      out << "]";
    }
    out << "\n";
  }
  for (const auto& p : d.preempted)
    out << "P " << p.workload << " by " << p.preemptor << " in " << p.cluster_queue << " " << ToString(p.reason)
        << "\n";
  for (const auto& p : d.pending)
    out << "W " << p.workload << " @" << p.position << " " << p.reason << ": " << p.message << "\n";
  out << "not considered " << d.not_considered << "\n";
  return out.str();
}

// For the cases below: one resource group of `gpus` GPUs in flavor "gpu".
std::vector<ResourceGroupSpec> GpuQuota(int64_t gpus) {
  ResourceGroupSpec g;
  g.covered_resources = {"nvidia.com/gpu"};
  g.flavors = {FlavorQuotaSpec{"gpu", {QuotaSpec{"nvidia.com/gpu", gpus * kUnit, std::nullopt, std::nullopt}}}};
  return {g};
}

// A workload of one pod asking `gpus` GPUs, waiting in `queue`.
WorkloadSpec GpuWorkload(const std::string& key, const std::string& queue, int64_t gpus, int32_t priority) {
  WorkloadSpec w;
  w.key = key;
  w.cluster_queue = queue;
  w.priority = priority;
  PodSetSpec ps;
  ps.per_pod["nvidia.com/gpu"] = gpus * kUnit;
  w.pod_sets = {ps};
  return w;
}

// The same, admitted in its queue (flavor "gpu") at `at`, last saved at `checkpoint`.
WorkloadSpec AdmittedGpuWorkload(const std::string& key, const std::string& queue, int64_t gpus, int32_t priority,
                                 int64_t at, int64_t checkpoint = 0) {
  WorkloadSpec w = GpuWorkload(key, queue, gpus, priority);
  w.admission = AdmissionSpec{queue, {{"main", 1, {{"nvidia.com/gpu", "gpu"}}, {{"nvidia.com/gpu", gpus * kUnit}}}}};
  w.admission_time = at;
  w.last_checkpoint = checkpoint;
  return w;
}

TEST(IncrementalSchedulerTest, DecidesAsTheWholeSnapshotAfterEveryChange) {
  size_t reused = 0, new_only = 0, whole = 0, followed = 0, passes = 0;
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    Cluster c(seed);
    c.Start();
    Decisions last;
    for (int step = 0; step < 60; ++step) {
      c.Change(last);
      ScheduleLimits limits;
      if (c.Pick(0, 4) == 0) limits.max_changes = static_cast<size_t>(c.Pick(1, 4));
      const Snapshot snap = c.Whole();
      Workspace workspace;
      const Decisions expected = Schedule(snap, workspace, limits);
      c.incremental().Recycle(std::move(last));
      last = c.incremental().Pass(limits);
      ASSERT_EQ(Dump(last), Dump(expected))
          << "seed " << seed << " step " << step << " kept " << c.incremental().last_pass().reused << " new "
          << c.incremental().last_pass().new_only << " decided " << c.incremental().last_pass().decided;
      for (const auto& p : last.pending) {
        const WorkloadSpec* w = c.incremental().Slot(p.index);
        ASSERT_NE(w, nullptr);
        ASSERT_EQ(w->key, p.workload);
      }
      for (const auto& a : last.admitted) {
        const WorkloadSpec* w = c.incremental().Slot(a.index);
        ASSERT_NE(w, nullptr);
        ASSERT_EQ(w->key, a.workload);
      }
      const auto& stats = c.incremental().last_pass();
      reused += stats.reused;
      new_only += stats.new_only;
      whole += stats.whole;
      followed += stats.followed;
      ++passes;
    }
  }
  // The cases the comparison is about are exercised: parts kept, parts where only new workloads
  // were decided, whole-cluster passes at a change limit, and waiting lists handed back by the
  // last pass's order (not after a whole-cluster pass, which a fifth of the passes here are).
  EXPECT_GT(reused, passes / 2);
  EXPECT_GT(new_only, passes / 20);
  EXPECT_GT(whole, passes / 50);
  EXPECT_GT(followed, passes / 3);
}

TEST(IncrementalSchedulerTest, KeepsAPartThatDidNotChange) {
  IncrementalScheduler s;
  ResourceGroupSpec group;
  group.covered_resources = {"cpu"};
  group.flavors = {FlavorQuotaSpec{"default", {QuotaSpec{"cpu", 2 * kUnit, std::nullopt, std::nullopt}}}};
  ClusterQueueSpec a, b;
  a.name = "a";
  b.name = "b";
  a.resource_groups = b.resource_groups = {group};
  s.SetQueues({FlavorSpec{"default", {}, {}}}, {}, {a, b});
  auto workload = [](const std::string& key, const std::string& queue, int64_t created) {
    WorkloadSpec w;
    w.key = key;
    w.cluster_queue = queue;
    w.creation_time = created;
    PodSetSpec ps;
    ps.count = 3;
    ps.per_pod["cpu"] = kUnit;
    w.pod_sets = {ps};
    return w;
  };
  s.Upsert(workload("ns/a1", "a", 1));
  s.Upsert(workload("ns/b1", "b", 2));
  Decisions first = s.Pass();
  ASSERT_EQ(first.pending.size(), 2u);
  EXPECT_EQ(s.last_pass().decided, 3u);  // a's part, b's, and the part of no queue

  s.Upsert(workload("ns/a2", "a", 3));  // waits too: only it is decided
  Decisions second = s.Pass();
  ASSERT_EQ(second.pending.size(), 3u);
  EXPECT_EQ(second.pending[2].workload, "ns/a2");
  EXPECT_EQ(second.pending[2].position, 1);
  EXPECT_EQ(s.last_pass().reused, 2u);  // b's part, and the part of no queue
  EXPECT_EQ(s.last_pass().new_only, 1u);
}

// A failed search for victims is not taken to fail for a workload of another tier: a critical
// workload must also stay within its queue's nominal quota, a preemptible one need not. Removing
// the critical one ahead changes nothing for the one behind it.
TEST(IncrementalSchedulerTest, ACriticalWorkloadsFailedPreemptionDoesNotHoldBackOthers) {
  ClusterQueueSpec a, b;
  a.name = "a";
  b.name = "b";
  for (ClusterQueueSpec* q : {&a, &b}) {
    q->cohort = "shared";
    q->resource_groups = GpuQuota(4);
    q->reclaim_within_cohort = ReclaimWithinCohort::kLowerPriority;
    q->borrow_within_cohort = BorrowWithinCohort::kLowerPriority;
  }
  // a holds 2 of its 4 GPUs; b borrows 2 of a's. c (critical) cannot get 3 GPUs within a's
  // nominal quota; p, behind it, can borrow the third by taking b's quota back.
  WorkloadSpec critical = GpuWorkload("ns/c", "a", 3, 5);
  critical.preemptible = false;
  Snapshot snap;
  snap.flavors = {FlavorSpec{"gpu", {}, {}}};
  snap.cluster_queues = {a, b};
  snap.workloads = {AdmittedGpuWorkload("ns/x", "a", 2, 9, 0), AdmittedGpuWorkload("ns/b1", "b", 6, 0, 0), critical,
                    GpuWorkload("ns/p", "a", 3, 1)};
  IncrementalScheduler s;
  s.SetQueues(snap.flavors, {}, snap.cluster_queues);
  for (const WorkloadSpec& w : snap.workloads) s.Upsert(w);
  const Decisions d = Schedule(snap);
  ASSERT_EQ(d.admitted.size(), 1u);
  EXPECT_EQ(d.admitted[0].workload, "ns/p");
  ASSERT_EQ(d.preempted.size(), 1u);
  EXPECT_EQ(d.preempted[0].workload, "ns/b1");
  EXPECT_EQ(Dump(s.Pass()), Dump(d));
}

// A new workload that looks like one already waiting in a part that admits nothing takes its
// decision without being decided again, but only where nothing else of theirs could tell them
// apart: here the one that may not preempt (over a BestEffort budget) is told so, and in a queue
// that lets workloads preempt newer ones of their priority, an older arrival preempts where the
// newer look-alike could not.
TEST(IncrementalSchedulerTest, LookAlikesAreDecidedAlikeOnlyWhereNothingTellsThemApart) {
  for (const bool by_creation : {false, true}) {
    ClusterQueueSpec q;
    q.name = "a";
    q.resource_groups = GpuQuota(2);
    q.within_cluster_queue =
        by_creation ? WithinClusterQueue::kLowerOrNewerEqualPriority : WithinClusterQueue::kLowerPriority;
    WorkloadSpec x = AdmittedGpuWorkload("ns/x", "a", 2, by_creation ? 5 : 9, 0);
    x.creation_time = 10;
    WorkloadSpec waiting = GpuWorkload("ns/w", "a", 2, 5);
    waiting.creation_time = 20;
    WorkloadSpec arrival = GpuWorkload("ns/n", "a", 2, 5);
    arrival.creation_time = by_creation ? 5 : 30;
    arrival.may_preempt = by_creation;
    Snapshot snap;
    snap.flavors = {FlavorSpec{"gpu", {}, {}}};
    snap.cluster_queues = {q};
    snap.workloads = {x, waiting};
    IncrementalScheduler s;
    s.SetQueues(snap.flavors, {}, snap.cluster_queues);
    for (const WorkloadSpec& w : snap.workloads) s.Upsert(w);
    ASSERT_EQ(Dump(s.Pass()), Dump(Schedule(snap)));
    snap.workloads.push_back(arrival);
    s.Upsert(arrival);
    const Decisions d = Schedule(snap);
    if (by_creation) {
      ASSERT_EQ(d.admitted.size(), 1u);
      EXPECT_EQ(d.admitted[0].workload, "ns/n");
    } else {
      ASSERT_EQ(d.pending.size(), 2u);
      EXPECT_NE(d.pending[0].message, d.pending[1].message);
    }
    EXPECT_EQ(Dump(s.Pass()), Dump(d)) << (by_creation ? "by creation" : "may not preempt");
  }
}

// Without a time, victims are tried most recently admitted first; with one, most recently saved
// first (a checkpoint counts). The order can decide whether a search finds room at all: once a
// queue no longer borrows, its other workloads are not taken for a reclaim.
TEST(IncrementalSchedulerTest, DecidesAgainWhenTheTimeIsFirstKnown) {
  auto queue = [](const std::string& name, int64_t gpus) {
    ClusterQueueSpec q;
    q.name = name;
    q.cohort = "shared";
    q.resource_groups = GpuQuota(gpus);
    q.reclaim_within_cohort = ReclaimWithinCohort::kLowerPriority;
    q.borrow_within_cohort = BorrowWithinCohort::kLowerPriority;
    return q;
  };
  // q (3 GPUs) holds 4, borrowing a's one; p needs 3 in a. Without a time q1 (admitted later) is
  // tried first, after which q borrows nothing and q2 is not taken: p waits. At time 100, q2
  // (saved at 60) goes first and frees enough.
  IncrementalScheduler s;
  s.SetQueues({FlavorSpec{"gpu", {}, {}}}, {}, {queue("a", 1), queue("q", 3)});
  s.Upsert(AdmittedGpuWorkload("ns/q1", "q", 1, 0, 50));
  s.Upsert(AdmittedGpuWorkload("ns/q2", "q", 3, 0, 10, 60));
  s.Upsert(GpuWorkload("ns/p", "a", 3, 1));
  EXPECT_TRUE(s.Pass().admitted.empty());
  s.SetNow(100);
  const Decisions d = s.Pass();
  ASSERT_EQ(d.admitted.size(), 1u);
  EXPECT_EQ(d.admitted[0].workload, "ns/p");
}

// Which victims a preemption takes can depend on the time alone: of those it could give back, the
// one that would lose the most work goes first, and work lost grows with time at the rate of what
// each holds. A part whose last decisions preempted is decided again when time passes.
TEST(IncrementalSchedulerTest, DecidesVictimsAgainWhenTimePasses) {
  IncrementalScheduler s;
  ClusterQueueSpec q;
  q.name = "team";
  q.resource_groups = GpuQuota(6);
  q.within_cluster_queue = WithinClusterQueue::kLowerPriority;
  s.SetQueues({FlavorSpec{"gpu", {}, {}}}, {}, {q});
  // Taken in order of the time since each saved its work (v, u, w), then one given back: u at
  // time 10 (it would lose 5 GPU-seconds, v 2), v at time 20 (v 22, u 15).
  s.Upsert(AdmittedGpuWorkload("ns/v", "team", 2, 0, 9));
  s.Upsert(AdmittedGpuWorkload("ns/u", "team", 1, 0, 5));
  s.Upsert(AdmittedGpuWorkload("ns/w", "team", 3, 0, 0));
  s.Upsert(GpuWorkload("ns/p", "team", 4, 1));
  auto victims = [&s] {
    std::set<std::string> out;
    for (const auto& p : s.Pass().preempted) out.insert(p.workload);
    return out;
  };
  s.SetNow(10);
  EXPECT_EQ(victims(), (std::set<std::string>{"ns/v", "ns/w"}));
  s.SetNow(20);
  EXPECT_EQ(victims(), (std::set<std::string>{"ns/u", "ns/w"}));
}

}  // namespace
}  // namespace rota::admission
