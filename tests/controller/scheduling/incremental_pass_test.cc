#include "scheduling/incremental_pass.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace rota::controller {
namespace {

using api::Json;

// Five ClusterQueues of 2 GPUs each: q0 and q1 share cohort "a", q2 and q3 cohort "b", q4 has none;
// reclaim and preemption by priority are on, so that admissions come with victims. LocalQueue
// ml/lN points to qN.
api::ClusterState Cluster() {
  api::ClusterState state;
  state.keep_going = true;
  state.flavors.push_back(*api::DecodeObject<api::ResourceFlavor>(Json::parse(R"({"metadata": {"name": "gpu"}})")));
  for (int q = 0; q < 5; ++q) {
    const std::string cohort = q < 2 ? "a" : q < 4 ? "b" : "";
    Json cq = Json::parse(R"({"metadata": {"name": "", "resourceVersion": "1", "generation": 1},
      "spec": {"namespaceSelector": {}, "preemption": {"reclaimWithinCohort": "Any",
        "withinClusterQueue": "LowerPriority"}, "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"],
        "flavors": [{"name": "gpu", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 2}]}]}]}})");
    cq["metadata"]["name"] = "q" + std::to_string(q);
    if (!cohort.empty()) cq["spec"]["cohortName"] = cohort;
    state.cluster_queues.push_back(*api::DecodeObject<api::ClusterQueue>(cq));
    Json lq = Json::parse(R"({"metadata": {"namespace": "ml", "resourceVersion": "1"}, "spec": {}})");
    lq["metadata"]["name"] = "l" + std::to_string(q);
    lq["spec"]["clusterQueue"] = "q" + std::to_string(q);
    state.local_queues.push_back(*api::DecodeObject<api::LocalQueue>(lq));
  }
  state.priority_classes.push_back(*api::DecodeObject<api::WorkloadPriorityClass>(
      Json::parse(R"({"metadata": {"name": "high", "resourceVersion": "1"}, "value": 100})")));
  state.namespace_labels["ml"] = {};
  return state;
}

struct Made {
  int queue = 0, gpus = 1, created = 0, generation = 1;
  bool high = false;
  bool admitted = false;  // as the apiserver gives it back once rota's admission is written
  int64_t admitted_at = 0;
  friend bool operator==(const Made&, const Made&) = default;
};

std::shared_ptr<const api::Workload> Object(const std::string& name, const Made& m) {
  Json w = Json::parse(R"({"metadata": {"namespace": "ml", "resourceVersion": "1"}, "spec": {"podSets": [
    {"name": "main", "count": 1, "template": {"spec": {"containers": [{"name": "c",
      "resources": {"requests": {}}}]}}}]}, "status": {}})");
  w["metadata"]["name"] = name;
  w["metadata"]["uid"] = "uid-" + name;
  w["metadata"]["generation"] = m.generation;
  w["metadata"]["creationTimestamp"] = api::FormatTime(1'790'000'000 + m.created / 3);  // (ties: by key)
  w["spec"]["queueName"] = "l" + std::to_string(m.queue);
  w["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = m.gpus;
  if (m.high)
    w["spec"]["priorityClassRef"] = {{"group", "kueue.x-k8s.io"}, {"kind", "WorkloadPriorityClass"}, {"name", "high"}};
  if (m.admitted) {
    w["status"]["admission"] = {{"clusterQueue", "q" + std::to_string(m.queue)},
                                {"podSetAssignments",
                                 {{{"name", "main"},
                                   {"count", 1},
                                   {"flavors", {{"nvidia.com/gpu", "gpu"}}},
                                   {"resourceUsage", {{"nvidia.com/gpu", std::to_string(m.gpus)}}}}}}};
    w["status"]["conditions"] = {{{"type", "QuotaReserved"},
                                  {"status", "True"},
                                  {"reason", "QuotaReserved"},
                                  {"message", ""},
                                  {"lastTransitionTime", api::FormatTime(m.admitted_at)}}};
  }
  return std::make_shared<const api::Workload>(*api::DecodeObject<api::Workload>(w));
}

void ExpectSame(const admission::Decisions& got, const admission::Decisions& want, const std::string& where) {
  ASSERT_EQ(got.admitted.size(), want.admitted.size()) << where;
  for (size_t i = 0; i < want.admitted.size(); ++i) {
    EXPECT_EQ(got.admitted[i].workload, want.admitted[i].workload) << where;
    EXPECT_EQ(got.admitted[i].cluster_queue, want.admitted[i].cluster_queue) << where;
    EXPECT_EQ(got.admitted[i].index, want.admitted[i].index) << where << " " << want.admitted[i].workload;
  }
  ASSERT_EQ(got.preempted.size(), want.preempted.size()) << where;
  for (size_t i = 0; i < want.preempted.size(); ++i) {
    EXPECT_EQ(got.preempted[i].workload, want.preempted[i].workload) << where;
    EXPECT_EQ(got.preempted[i].preemptor, want.preempted[i].preemptor) << where;
    EXPECT_EQ(got.preempted[i].reason, want.preempted[i].reason) << where;
  }
  ASSERT_EQ(got.pending.size(), want.pending.size()) << where;
  for (size_t i = 0; i < want.pending.size(); ++i) {
    const auto &g = got.pending[i], &w = want.pending[i];
    EXPECT_EQ(g.workload, w.workload) << where;
    EXPECT_EQ(g.index, w.index) << where << " " << w.workload;
    EXPECT_EQ(g.reason, w.reason) << where << " " << w.workload;
    EXPECT_EQ(g.message, w.message) << where << " " << w.workload;
    EXPECT_EQ(g.position, w.position) << where << " " << w.workload;
  }
}

// Passes through random changes, as the loop makes them, decide as Schedule does on the same
// snapshot, with the same snapshot places: workloads arrive, are deleted (the builder moves its
// last entry into the gap), change (a new object, or a new priority), are admitted and preempted
// in the builder's entries (as the loop applies its decisions) and come back admitted from the
// apiserver or not; the loop changes entries in place (Mutable); quotas change; fair sharing is
// switched on and off; time passes; and some passes stop at a change limit.
TEST(IncrementalPassTest, DecidesAsScheduleOnTheSnapshotThroughChanges) {
  for (int seed = 0; seed < 60; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
    api::ClusterState state = Cluster();
    std::map<std::string, Made> made;
    std::map<std::string, std::pair<std::shared_ptr<const api::Workload>, Made>> objects;
    api::SnapshotBuilder builder;
    IncrementalPass pass;
    admission::Workspace workspace;
    int created = 0;
    state.now = seed % 4 == 0 ? 0 : 1'790'000'100;
    for (int step = 0; step < 50; ++step) {
      const std::string where = "seed " + std::to_string(seed) + " step " + std::to_string(step);
      for (int c = 1 + pick(6); c > 0; --c) {
        const std::string name = "w" + std::to_string(pick(40));
        auto it = made.find(name);
        if (it == made.end()) {
          made[name] = {pick(5), 1 + pick(2), created++, 1, pick(4) == 0};
        } else if (pick(3) == 0) {
          made.erase(it);  // finished or deleted
        } else if (pick(2) == 0) {
          it->second.high = !it->second.high;  // a new priority: a new generation
          ++it->second.generation;
          it->second.admitted = false;
        }
      }
      if (pick(8) == 0) {  // a quota changes
        api::ClusterQueue& q = state.cluster_queues[pick(5)];
        q.metadata.generation = q.metadata.generation.value_or(1) + 1;
        q.metadata.resource_version = std::to_string(q.metadata.generation.value_or(0));
        q.spec.resource_groups[0].flavors[0].resources[0].nominal_quota = Quantity::FromMilli(1000 * (1 + pick(3)));
      }
      if (pick(25) == 0) state.fair_sharing = !state.fair_sharing;
      if (state.now > 0 && pick(3) == 0) state.now += 1 + pick(30);
      // A workload's object is made again only when it changed (the builder keeps the entries of
      // the objects it has seen).
      state.workloads.clear();
      std::erase_if(objects, [&](const auto& o) { return !made.count(o.first); });
      for (const auto& [name, m] : made) {
        auto& [object, as] = objects[name];
        if (!object || !(as == m)) object = Object(name, m), as = m;
        state.workloads.push_back(object);
      }
      std::shuffle(state.workloads.begin(), state.workloads.end(), rng);
      ASSERT_TRUE(builder.Build(state).ok()) << where;
      for (const auto& [name, m] : made)
        if (pick(10) == 0) builder.Mutable("ml/" + name);  // (a hold or mark of the loop's, unchanged)
      const admission::ScheduleLimits limits{pick(4) == 0 ? size_t{2} : size_t{0}};
      admission::Decisions got = pass.Decide(builder, limits);
      admission::Decisions want = admission::Schedule(builder.snapshot(), workspace, limits);
      ExpectSame(got, want, where);
      if (::testing::Test::HasFailure()) return;
      // The loop applies the pass to its entries; the apiserver gives most admissions back.
      for (const auto& a : got.admitted) {
        builder.Mutable(a.workload)->admission = admission::AdmissionSpec{a.cluster_queue, a.pod_sets};
        Made& m = made[a.workload.substr(3)];
        if (pick(4) != 0) m = {m.queue, m.gpus, m.created, m.generation, m.high, true, state.now};
      }
      for (const auto& v : got.preempted) {
        builder.Mutable(v.workload)->admission.reset();
        if (pick(4) != 0) made[v.workload.substr(3)].admitted = false;
      }
      pass.Recycle(std::move(got));
    }
  }
}

}  // namespace
}  // namespace rota::controller
