// What the queue controller holds per waiting workload, in bytes as rota's allocator (jemalloc)
// hands them out: the cached Workload object its informer keeps (parsed and trimmed as
// DecodeCompactWorkload does it), the SnapshotBuilder's entry for it, and the engine Workspace's
// arrays after a pass. The workloads are Kueue's baseline scenario's at its peak: 15,000 pending
// in 30 ClusterQueues of 5 cohorts, none admitted yet. The informer's own store (one hash map
// node and one view entry per object) is not counted. Figures are printed, never asserted.

#include <benchmark/benchmark.h>
#include <jemalloc/jemalloc.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cache/compact_workload.h"
#include "rota/admission/engine.h"
#include "rota/api/codec.h"
#include "rota/api/kueue.h"
#include "rota/api/snapshot.h"
#include "rota/apiclient/client.h"

namespace {

using rota::apiclient::Json;

constexpr int kCohorts = 5;
constexpr int kQueuesPerCohort = 6;
constexpr int kWorkloads = 15000;

// This thread's bytes in use (jemalloc's per-thread allocated minus deallocated).
int64_t LiveBytes() {
  uint64_t allocated = 0, deallocated = 0;
  size_t len = sizeof(uint64_t);
  mallctl("thread.allocated", &allocated, &len, nullptr, 0);
  len = sizeof(uint64_t);
  mallctl("thread.deallocated", &deallocated, &len, nullptr, 0);
  return static_cast<int64_t>(allocated) - static_cast<int64_t>(deallocated);
}

std::string QueueName(int cohort, int queue) {
  return "cq-" + std::to_string(queue) + "-cohort-" + std::to_string(cohort);
}

// A waiting Workload of the scenario as the apiserver sends it (managedFields left out by the
// parse, as the informer asks).
std::string PendingWorkload(int i) {
  const int cohort = i % kCohorts, queue = (i / kCohorts) % kQueuesPerCohort;
  const char* kind = i % 10 == 0 ? "large" : i % 3 == 0 ? "medium" : "small";
  const std::string ns = QueueName(cohort, queue);
  const std::string name = std::string(kind) + "-" + std::to_string(i % 7) + "-" + std::to_string(i) + "-0";
  char uid[40];
  std::snprintf(uid, sizeof(uid), "%08x-8c3d-4d6e-9f71-%012x", i, i * 7919);
  return R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload","metadata":{"name":")" + name +
         R"(","namespace":")" + ns + R"(","uid":")" + uid + R"(","resourceVersion":")" + std::to_string(100000 + i) +
         R"(","generation":1,"creationTimestamp":"2026-11-23T10:40:11Z","labels":{"kueue.x-k8s.io/job-uid":")" + name +
         R"(","kueue.x-k8s.io/running-time":"200ms"}},"spec":{"active":true,"podSets":[{"name":"main","count":1,"template":)"
         R"({"spec":{"containers":[{"name":"c","image":"registry.k8s.io/pause:3.10","resources":{"requests":{"cpu":")" +
         (kind[0] == 'l'   ? "5"
          : kind[0] == 'm' ? "2"
                           : "1") +
         R"("}}}],"restartPolicy":"Never"}}}],"priority":50,"priorityClassSource":"kueue.x-k8s.io/workloadpriorityclass",)"
         R"("queueName":"lq"}})";
}

rota::api::ClusterState Queues() {
  rota::api::ClusterState state;
  state.keep_going = true;
  state.flavors.push_back(*rota::api::DecodeObject<rota::api::ResourceFlavor>(
      Json::parse(R"({"metadata":{"name":"default","resourceVersion":"1","generation":1},"spec":{}})")));
  for (int c = 0; c < kCohorts; ++c) {
    for (int q = 0; q < kQueuesPerCohort; ++q) {
      const std::string name = QueueName(c, q);
      state.cluster_queues.push_back(*rota::api::DecodeObject<rota::api::ClusterQueue>(Json::parse(
          R"({"metadata":{"name":")" + name +
          R"(","resourceVersion":"1","generation":1},"spec":{"cohortName":"cohort-)" + std::to_string(c) +
          R"(","namespaceSelector":{},"resourceGroups":[{"coveredResources":["cpu"],"flavors":[{"name":"default",)"
          R"("resources":[{"name":"cpu","nominalQuota":"20","borrowingLimit":"100"}]}]}],)"
          R"("preemption":{"reclaimWithinCohort":"Any","withinClusterQueue":"LowerPriority"}}})")));
      state.local_queues.push_back(*rota::api::DecodeObject<rota::api::LocalQueue>(
          Json::parse(R"({"metadata":{"name":"lq","namespace":")" + name +
                      R"(","resourceVersion":"1","generation":1},)"
                      R"("spec":{"clusterQueue":")" +
                      name + R"("}})")));
    }
  }
  return state;
}

void BM_BytesPerWaitingWorkload_KueueBaseline(benchmark::State& s) {
  for (auto _ : s) {
    rota::api::ClusterState state = Queues();
    rota::api::JsonInterner templates;
    const int64_t start = LiveBytes();
    state.workloads.reserve(kWorkloads);
    const int64_t objects_start = LiveBytes();
    for (int i = 0; i < kWorkloads; ++i) {
      Json parsed = rota::apiclient::ParseKeeping(PendingWorkload(i), 1, rota::apiclient::Keep::kAllButManagedFields);
      auto decoded = rota::controller::DecodeCompactWorkload(parsed, templates);
      if (!decoded.ok()) {
        s.SkipWithError(decoded.status().message().c_str());
        return;
      }
      state.workloads.push_back(std::make_shared<const rota::api::Workload>(std::move(*decoded)));
    }
    const int64_t objects = LiveBytes() - objects_start;

    rota::api::SnapshotBuilder builder;
    const int64_t builder_start = LiveBytes();
    if (auto st = builder.Build(state); !st.ok()) {
      s.SkipWithError(st.message().c_str());
      return;
    }
    const int64_t built = LiveBytes() - builder_start;

    rota::admission::Workspace workspace;
    const int64_t engine_start = LiveBytes();
    rota::admission::Decisions d = rota::admission::Schedule(builder.snapshot(), workspace);
    const size_t admitted = d.admitted.size();
    workspace.Recycle(std::move(d));
    const int64_t kept = LiveBytes() - engine_start;

    s.counters["workloads"] = kWorkloads;
    s.counters["admitted_in_pass"] = static_cast<double>(admitted);
    s.counters["object_B"] = static_cast<double>(objects) / kWorkloads;
    s.counters["snapshot_builder_B"] = static_cast<double>(built) / kWorkloads;
    s.counters["engine_workspace_B"] = static_cast<double>(kept) / kWorkloads;
    s.counters["total_MiB"] = static_cast<double>(LiveBytes() - start) / (1024.0 * 1024.0);
  }
}
BENCHMARK(BM_BytesPerWaitingWorkload_KueueBaseline)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
