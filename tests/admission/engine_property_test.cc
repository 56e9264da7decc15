// Property tests for the admission engine: thousands of random clusters and workloads, scheduled
// for a few rounds (applying each round's decisions), checked against invariants computed
// independently of the engine's own quota arithmetic.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>

#include "rota/admission/engine.h"

namespace rota::admission {
namespace {

constexpr int64_t kUnit = 1000;
const std::vector<std::string> kResources = {"nvidia.com/gpu", "cpu"};

struct Scenario {
  Snapshot snapshot;
  std::map<std::string, std::string> root_of_cq;  // "" for a queue without a cohort
  std::set<std::string> nested_roots;             // roots with a child cohort
};

Scenario Generate(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Scenario sc;
  Snapshot& s = sc.snapshot;
  s.fair_sharing = pick(0, 3) == 0;
  const int flavors = pick(1, 3);
  for (int f = 0; f < flavors; ++f) s.flavors.push_back({"f" + std::to_string(f), {}, {}});
  auto group = [&](bool with_cohort, bool allow_zero) {
    ResourceGroupSpec g;
    g.covered_resources = kResources;
    std::vector<int> order(flavors);
    for (int f = 0; f < flavors; ++f) order[f] = f;
    std::shuffle(order.begin(), order.end(), rng);
    for (int f : order) {
      FlavorQuotaSpec fq{"f" + std::to_string(f), {}};
      for (const auto& r : kResources) {
        QuotaSpec q{r, pick(allow_zero ? 0 : 1, 8) * kUnit, std::nullopt, std::nullopt};
        if (with_cohort && pick(0, 2) == 0) q.borrowing_limit = pick(0, 4) * kUnit;
        if (with_cohort && pick(0, 2) == 0) q.lending_limit = pick(0, static_cast<int>(q.nominal / kUnit)) * kUnit;
        fq.resources.push_back(q);
      }
      g.flavors.push_back(fq);
    }
    return std::vector<ResourceGroupSpec>{g};
  };
  // Two root cohorts; the second sometimes has a child cohort.
  s.cohorts.push_back({"root0", "", pick(0, 1) ? group(false, true) : std::vector<ResourceGroupSpec>{}, 1000});
  s.cohorts.push_back({"root1", "", {}, 1000});
  const bool nested = pick(0, 1) == 1;
  if (nested) {
    s.cohorts.push_back({"child1", "root1", pick(0, 1) ? group(true, true) : std::vector<ResourceGroupSpec>{}, 1000});
    sc.nested_roots.insert("root1");
  }
  const int queues = pick(2, 5);
  for (int q = 0; q < queues; ++q) {
    ClusterQueueSpec cq;
    cq.name = "cq" + std::to_string(q);
    const int where = pick(0, nested ? 3 : 2);
    cq.cohort = where == 0 ? "" : where == 1 ? "root0" : where == 2 ? "root1" : "child1";
    sc.root_of_cq[cq.name] = cq.cohort == "child1" ? "root1" : cq.cohort;
    cq.resource_groups = group(!cq.cohort.empty(), true);
    cq.queueing_strategy = pick(0, 3) == 0 ? QueueingStrategy::kStrictFIFO : QueueingStrategy::kBestEffortFIFO;
    cq.when_can_borrow = pick(0, 1) ? FungibilityPolicy::kTryNextFlavor : FungibilityPolicy::kMayStopSearch;
    cq.when_can_preempt = pick(0, 1) ? FungibilityPolicy::kTryNextFlavor : FungibilityPolicy::kMayStopSearch;
    cq.within_cluster_queue = static_cast<WithinClusterQueue>(pick(0, 2));
    cq.reclaim_within_cohort = static_cast<ReclaimWithinCohort>(pick(0, 2));
    if (cq.reclaim_within_cohort != ReclaimWithinCohort::kNever && pick(0, 1)) {
      cq.borrow_within_cohort = BorrowWithinCohort::kLowerPriority;
      if (pick(0, 1)) cq.borrow_max_priority_threshold = pick(0, 3);
    }
    cq.fair_weight_milli = pick(0, 3) * 500;
    s.cluster_queues.push_back(cq);
  }
  return sc;
}

void AddPending(Scenario& sc, std::mt19937& rng, int n, int& serial) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int i = 0; i < n; ++i) {
    WorkloadSpec w;
    w.key = "ns/w" + std::to_string(serial);
    w.creation_time = serial++;
    w.cluster_queue = sc.snapshot.cluster_queues[pick(0, static_cast<int>(sc.snapshot.cluster_queues.size()) - 1)].name;
    w.priority = pick(0, 3);
    w.preemptible = pick(0, 9) != 0;
    const int pod_sets = pick(1, 2);
    for (int p = 0; p < pod_sets; ++p) {
      PodSetSpec ps;
      ps.name = "ps" + std::to_string(p);
      ps.count = pick(1, 3);
      if (p == 0 && pick(0, 3) == 0) ps.min_count = pick(1, ps.count);
      ps.per_pod["nvidia.com/gpu"] = pick(0, 3) * kUnit;
      if (pick(0, 1)) ps.per_pod["cpu"] = pick(1, 2) * kUnit;
      w.pod_sets.push_back(ps);
    }
    sc.snapshot.workloads.push_back(w);
  }
}

// Applies one pass's decisions: the admitted get their admission, the preempted lose theirs.
void Apply(Snapshot& s, const Decisions& d, int64_t now) {
  std::map<std::string, WorkloadSpec*> by_key;
  for (auto& w : s.workloads) by_key[w.key] = &w;
  for (const auto& p : d.preempted) {
    WorkloadSpec* w = by_key.at(p.workload);
    w->admission.reset();
  }
  for (const auto& a : d.admitted) {
    WorkloadSpec* w = by_key.at(a.workload);
    w->admission = AdmissionSpec{a.cluster_queue, a.pod_sets};
    w->admission_time = now;
  }
}

std::string Dump(const Decisions& d) {
  std::ostringstream out;
  for (const auto& a : d.admitted) {
    out << "A " << a.workload << " " << a.cluster_queue << " " << a.borrowing;
    for (const auto& ps : a.pod_sets) {
      out << " [" << ps.name << " " << ps.count;
      for (const auto& [r, f] : ps.flavors) out << " " << r << "=" << f;
      out << "]";
    }
    out << "\n";
  }
  for (const auto& p : d.preempted)
    out << "P " << p.workload << " by " << p.preemptor << " " << ToString(p.reason) << "\n";
  for (const auto& p : d.pending) out << "W " << p.workload << " " << p.reason << " " << p.message << "\n";
  return out.str();
}

// Usage per (queue, flavor, resource) from the admitted workloads.
using Usage = std::map<std::tuple<std::string, std::string, std::string>, int64_t>;

void CheckInvariants(const Scenario& sc, const Decisions& d, uint32_t seed, int round) {
  const Snapshot& s = sc.snapshot;
  SCOPED_TRACE("seed " + std::to_string(seed) + " round " + std::to_string(round));
  Usage usage, critical;
  for (const auto& w : s.workloads) {
    if (!w.admission) continue;
    for (const auto& ps : w.admission->pod_sets) {
      const PodSetSpec* spec = nullptr;
      for (const auto& p : w.pod_sets)
        if (p.name == ps.name) spec = &p;
      ASSERT_NE(spec, nullptr);
      ASSERT_LE(ps.count, spec->count);
      ASSERT_GE(ps.count, spec->min_count.value_or(spec->count));
      for (const auto& [r, f] : ps.flavors) {
        const int64_t amount = spec->per_pod.at(r) * ps.count;
        ASSERT_EQ(ps.usage.at(r), amount);
        usage[{w.admission->cluster_queue, f, r}] += amount;
        if (!w.preemptible) critical[{w.admission->cluster_queue, f, r}] += amount;
      }
    }
  }
  for (const auto& p : d.preempted) {
    for (const auto& w : s.workloads)
      if (w.key == p.workload) {
        ASSERT_TRUE(w.preemptible) << w.key << " is critical but was preempted";
      }
  }
  // Per flavor and resource: queue limits, critical within nominal, and tree capacity.
  for (const auto& f : s.flavors) {
    for (const auto& r : kResources) {
      std::map<std::string, int64_t> tree_usage_beyond, tree_capacity;
      for (const auto& cq : s.cluster_queues) {
        const QuotaSpec* q = nullptr;
        for (const auto& fq : cq.resource_groups[0].flavors)
          if (fq.flavor == f.name)
            for (const auto& qs : fq.resources)
              if (qs.resource == r) q = &qs;
        const int64_t used = usage[{cq.name, f.name, r}];
        const int64_t used_by_critical = critical[{cq.name, f.name, r}];
        const int64_t nominal = q ? q->nominal : 0;
        const std::string where = cq.name + " " + f.name + " " + r;
        ASSERT_LE(used_by_critical, nominal) << "critical work borrowed in " << where;
        if (cq.cohort.empty()) {
          ASSERT_LE(used, nominal) << where;
          continue;
        }
        if (q && q->borrowing_limit) {
          ASSERT_LE(used, nominal + *q->borrowing_limit) << where;
        }
        const int64_t guaranteed = q && q->lending_limit ? nominal - *q->lending_limit : 0;
        const std::string& root = sc.root_of_cq.at(cq.name);
        tree_usage_beyond[root] += std::max<int64_t>(0, used - guaranteed);
        tree_capacity[root] += nominal - guaranteed;
      }
      for (const auto& c : s.cohorts) {
        for (const auto& g : c.resource_groups)
          for (const auto& fq : g.flavors)
            if (fq.flavor == f.name)
              for (const auto& qs : fq.resources)
                if (qs.resource == r) tree_capacity[c.name == "child1" ? "root1" : c.name] += qs.nominal;
      }
      for (const auto& [root, beyond] : tree_usage_beyond) {
        // Quota lent into a cohort tree is never over-committed (lending limits included). A
        // child cohort's own borrowing limit only tightens this.
        ASSERT_LE(beyond, tree_capacity[root]) << "cohort " << root << " " << f.name << " " << r;
      }
    }
  }
}

TEST(EnginePropertyTest, InvariantsHoldOverRandomScenarios) {
  for (uint32_t seed = 0; seed < 2000; ++seed) {
    Scenario sc = Generate(seed);
    std::mt19937 rng(seed * 7919 + 1);
    int serial = 0;
    for (int round = 0; round < 4; ++round) {
      AddPending(sc, rng, std::uniform_int_distribution<int>(3, 12)(rng), serial);
      Decisions d = Schedule(sc.snapshot);
      Apply(sc.snapshot, d, 1000 + round);
      CheckInvariants(sc, d, seed, round);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(EnginePropertyTest, SameDecisionsWhateverTheInputOrder) {
  for (uint32_t seed = 0; seed < 500; ++seed) {
    Scenario sc = Generate(seed);
    std::mt19937 rng(seed);
    int serial = 0;
    AddPending(sc, rng, 8, serial);
    Apply(sc.snapshot, Schedule(sc.snapshot), 1);  // some admitted, some pending
    AddPending(sc, rng, 8, serial);
    const std::string expected = Dump(Schedule(sc.snapshot));
    for (int shuffle = 0; shuffle < 3; ++shuffle) {
      Snapshot shuffled = sc.snapshot;
      std::shuffle(shuffled.workloads.begin(), shuffled.workloads.end(), rng);
      std::shuffle(shuffled.cluster_queues.begin(), shuffled.cluster_queues.end(), rng);
      std::shuffle(shuffled.flavors.begin(), shuffled.flavors.end(), rng);
      std::shuffle(shuffled.cohorts.begin(), shuffled.cohorts.end(), rng);
      ASSERT_EQ(Dump(Schedule(shuffled)), expected) << "seed " << seed;
    }
  }
}

// A Workspace only lends a pass the memory of the last one: through rounds of growing snapshots,
// then the next seed's smaller one, the decisions are those of a pass without it (one workspace,
// and recycled decisions, throughout).
TEST(EnginePropertyTest, AWorkspaceChangesNoDecision) {
  Workspace workspace;
  size_t pending_seen = 0;
  {
    // First a burst far larger than the scenarios below, whose memory the workspace then lets go.
    Scenario burst = Generate(12345);
    std::mt19937 rng(12345);
    int serial = 0;
    AddPending(burst, rng, 20000, serial);
    Decisions fresh = Schedule(burst.snapshot);
    Decisions reused = Schedule(burst.snapshot, workspace);
    ASSERT_EQ(Dump(reused), Dump(fresh));
    workspace.Recycle(std::move(reused));
  }
  for (uint32_t seed = 0; seed < 500; ++seed) {
    Scenario sc = Generate(seed);
    std::mt19937 rng(seed * 31 + 7);
    int serial = 0;
    for (int round = 0; round < 3; ++round) {
      AddPending(sc, rng, std::uniform_int_distribution<int>(3, 12)(rng), serial);
      Decisions fresh = Schedule(sc.snapshot);
      Decisions reused = Schedule(sc.snapshot, workspace);
      ASSERT_EQ(Dump(reused), Dump(fresh)) << "seed " << seed << " round " << round;
      ASSERT_EQ(reused.pending.size(), fresh.pending.size());
      for (size_t i = 0; i < fresh.pending.size(); ++i) {  // (the places Dump leaves out)
        ASSERT_EQ(reused.pending[i].index, fresh.pending[i].index) << "seed " << seed << " round " << round;
        ASSERT_EQ(reused.pending[i].position, fresh.pending[i].position) << "seed " << seed << " round " << round;
      }
      pending_seen += reused.pending.size();
      workspace.Recycle(std::move(reused));
      Apply(sc.snapshot, fresh, 1000 + round);
    }
  }
  EXPECT_GT(pending_seen, 0u);  // the passes did leave pending lists to recycle
}

// A random scenario some of whose workloads were admitted by a first pass, with more waiting.
Scenario PartlyAdmitted(uint32_t seed) {
  Scenario sc = Generate(seed);
  std::mt19937 rng(seed);
  int serial = 0;
  AddPending(sc, rng, 8, serial);
  Apply(sc.snapshot, Schedule(sc.snapshot), 1);
  AddPending(sc, rng, 12, serial);
  return sc;
}

// Shape numbers (as `rota run`'s snapshot builder gives them) only save the engine comparing pod
// sets: the decisions are the ones it makes without them.
TEST(EnginePropertyTest, ShapeNumbersChangeNoDecision) {
  int numbered = 0;
  for (uint32_t seed = 0; seed < 500; ++seed) {
    Scenario sc = PartlyAdmitted(seed);
    const std::string expected = Dump(Schedule(sc.snapshot));
    Snapshot with_numbers = sc.snapshot;
    ShapeTable shapes;
    for (WorkloadSpec& w : with_numbers.workloads) {
      w.shape = shapes.Of(w);
      numbered += w.shape != 0;
    }
    ASSERT_EQ(Dump(Schedule(with_numbers)), expected) << "seed " << seed;
  }
  EXPECT_GT(numbered, 0);  // the scenarios do have numbered look-alikes
}

// A snapshot's `order` (as `rota run`'s snapshot builder keeps it) only spares the engine its
// sort: in scheduling order it gives the decisions of a sort; an order that does not name every
// workload once is ignored; and a permutation in another order is followed (so the order given is
// really the one used, and the first check is not vacuous).
TEST(EnginePropertyTest, AGivenOrderStandsForTheSort) {
  int followed = 0;
  for (uint32_t seed = 0; seed < 500; ++seed) {
    Scenario sc = PartlyAdmitted(seed);
    const std::string expected = Dump(Schedule(sc.snapshot));
    Snapshot ordered = sc.snapshot;
    for (uint32_t i = 0; i < ordered.workloads.size(); ++i) ordered.order.push_back(i);
    std::sort(ordered.order.begin(), ordered.order.end(),
              [&](uint32_t a, uint32_t b) { return InSchedulingOrder(ordered.workloads[a], ordered.workloads[b]); });
    ASSERT_EQ(Dump(Schedule(ordered)), expected) << "seed " << seed;

    Snapshot broken = ordered;
    broken.order.back() = broken.order.front();  // one index twice, one missing
    ASSERT_EQ(Dump(Schedule(broken)), expected) << "seed " << seed;
    broken.order.pop_back();  // one short
    ASSERT_EQ(Dump(Schedule(broken)), expected) << "seed " << seed;

    Snapshot reversed = ordered;
    std::reverse(reversed.order.begin(), reversed.order.end());
    followed += Dump(Schedule(reversed)) != expected;
  }
  EXPECT_GT(followed, 0);
}

// A pass with a change limit decides what a pass without one decides first: kept to the limit,
// the two hand over the same admissions and evictions; every workload it considered and left
// pending has the reason, message and place in its queue the full pass gives it; and every
// pending workload is admitted, pending or counted as not considered.
TEST(EnginePropertyTest, AChangeLimitStopsWhereKeepingTheFirstChangesWould) {
  Workspace workspace;
  int cut = 0;
  for (uint32_t seed = 0; seed < 500; ++seed) {
    Scenario sc = PartlyAdmitted(seed);
    size_t pending_in = 0;
    for (const auto& w : sc.snapshot.workloads) pending_in += !w.admission;
    const Decisions full_ref = Schedule(sc.snapshot);
    const size_t changes = full_ref.admitted.size() + full_ref.preempted.size();
    std::map<std::string_view, const PendingDecision*> full_pending;
    for (const auto& p : full_ref.pending) full_pending[p.workload] = &p;
    for (size_t limit = 1; limit <= changes + 1; ++limit) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " limit " + std::to_string(limit));
      Decisions limited = Schedule(sc.snapshot, workspace, ScheduleLimits{limit});
      ASSERT_EQ(limited.admitted.size() + limited.pending.size() + limited.not_considered, pending_in);
      for (const auto& p : limited.pending) {
        auto it = full_pending.find(p.workload);
        ASSERT_NE(it, full_pending.end()) << p.workload << " is pending only under the limit";
        ASSERT_EQ(p.reason, it->second->reason) << p.workload;
        ASSERT_EQ(p.message, it->second->message) << p.workload;
        ASSERT_EQ(p.position, it->second->position) << p.workload;
      }
      if (limit <= changes) cut += limited.not_considered > 0;
      Decisions full = Schedule(sc.snapshot);
      KeepFirstAdmissions(full, limit);
      KeepFirstAdmissions(limited, limit);
      full.pending.clear();
      limited.pending.clear();
      ASSERT_EQ(Dump(limited), Dump(full));
      workspace.Recycle(std::move(limited));
    }
    const Decisions unlimited = Schedule(sc.snapshot, workspace, ScheduleLimits{changes + 1});
    ASSERT_EQ(unlimited.not_considered, 0u) << "seed " << seed;
    ASSERT_EQ(Dump(unlimited), Dump(full_ref)) << "seed " << seed;
  }
  EXPECT_GT(cut, 100);  // the limits did stop passes short
}

}  // namespace
}  // namespace rota::admission
