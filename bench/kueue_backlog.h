#pragma once

// The state Kueue's scheduler benchmark scenarios (bench/kueue-bench.sh) spend most passes in, for
// the engine benchmarks: `cohorts` cohorts of `queues_per_cohort` ClusterQueues (nominal 20 cpu,
// borrowingLimit 100, LowerPriority / reclaim Any), each queue's nominal quota held by one
// admitted large workload, and per queue `small`, `medium` and `large` pending workloads of
// Kueue's classes (names, sizes and priorities), none of which can be admitted.

#include <string>
#include <vector>

#include "rota/admission/engine.h"

namespace rota::bench {

inline admission::Snapshot BuildKueueBacklog(int cohorts, int queues_per_cohort, int small, int medium, int large) {
  using namespace rota::admission;
  Snapshot s;
  s.flavors.push_back({"default", {}, {}});
  std::vector<std::string> queues;
  for (int c = 0; c < cohorts; ++c) {
    for (int q = 0; q < queues_per_cohort; ++q) {
      ClusterQueueSpec cq;
      cq.name = "cq-0-" + std::to_string(q) + "-cohort-" + std::to_string(c);
      cq.cohort = "cohort-" + std::to_string(c);
      cq.resource_groups = {{{"cpu"}, {{"default", {{"cpu", 20000, 100000, std::nullopt}}}}}};
      cq.within_cluster_queue = WithinClusterQueue::kLowerPriority;
      cq.reclaim_within_cohort = ReclaimWithinCohort::kAny;
      queues.push_back(cq.name);
      s.cluster_queues.push_back(std::move(cq));
    }
  }
  struct Class {
    const char* name;
    int32_t priority;
    int64_t cpu;
    int per_queue;
  };
  const Class classes[] = {{"small", 50, 1000, small}, {"medium", 100, 5000, medium}, {"large", 200, 20000, large}};
  int64_t serial = 0;
  for (const std::string& queue : queues) {
    auto make = [&](const Class& k, int set, int i) {
      WorkloadSpec w;
      w.key = queue + "/" + k.name + "-" + std::to_string(set) + "-" + std::to_string(i) + "-0";
      w.cluster_queue = queue;
      w.priority = k.priority;
      w.creation_time = serial++ / 10;  // second resolution: many ties, broken by key
      PodSetSpec ps;
      ps.per_pod = {{"cpu", k.cpu}};
      w.pod_sets = {ps};
      return w;
    };
    // One large workload per queue holds its whole nominal quota: the cohorts are full and
    // nothing pending outranks it.
    WorkloadSpec held = make(classes[2], 9, 0);
    held.admission = AdmissionSpec{queue, {{"main", 1, {{"cpu", "default"}}, {{"cpu", 20000}}}}};
    held.admission_time = held.creation_time;
    s.workloads.push_back(std::move(held));
    for (int k = 0; k < 3; ++k)
      for (int i = 0; i < classes[k].per_queue; ++i) s.workloads.push_back(make(classes[k], k, i));
  }
  return s;
}

}  // namespace rota::bench
