// One full scheduling pass of the admission engine at scale: 1,000 ClusterQueues in 100 cohorts,
// 3 GPU flavors, 100,000 pending workloads (and, in the second benchmark, 8,000 admitted ones
// filling each queue's a100 quota, that preemption may pick from). Reports decisions per second, the pass's latency,
// and bytes allocated per workload (the snapshot's, and the engine's peak on top of it).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <random>
#include <string>

#include "kueue_backlog.h"
#include "rota/admission/engine.h"

// Allocation accounting for the "bytes per workload" figures.
namespace {
std::atomic<int64_t> g_live{0};
std::atomic<int64_t> g_peak{0};
void Track(int64_t delta) {
  int64_t now = g_live.fetch_add(delta) + delta;
  int64_t peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
}
}  // namespace

void* operator new(size_t n) {
  void* p = std::malloc(n + 16);
  if (!p) throw std::bad_alloc();
  *static_cast<size_t*>(p) = n;
  Track(static_cast<int64_t>(n));
  return static_cast<char*>(p) + 16;
}
void operator delete(void* p) noexcept {
  if (!p) return;
  char* base = static_cast<char*>(p) - 16;
  Track(-static_cast<int64_t>(*reinterpret_cast<size_t*>(base)));
  std::free(base);
}
void operator delete(void* p, size_t) noexcept { operator delete(p); }

namespace {

using namespace rota::admission;

constexpr int kCohorts = 100;
constexpr int kQueuesPerCohort = 10;
constexpr int kPending = 100000;
const char* kFlavors[] = {"a100", "h100", "l4"};

Snapshot Build(int admitted_per_queue, bool preemption) {
  std::mt19937 rng(42);
  Snapshot s;
  for (const char* f : kFlavors) s.flavors.push_back({f, {{"gpu", f}}, {}});
  for (int c = 0; c < kCohorts; ++c) {
    for (int q = 0; q < kQueuesPerCohort; ++q) {
      ClusterQueueSpec cq;
      cq.name = "cq-" + std::to_string(c) + "-" + std::to_string(q);
      cq.cohort = "cohort-" + std::to_string(c);
      ResourceGroupSpec g;
      g.covered_resources = {"cpu", "nvidia.com/gpu"};
      for (const char* f : kFlavors) {
        g.flavors.push_back(
            {f, {{"cpu", 256000, std::nullopt, std::nullopt}, {"nvidia.com/gpu", 16000, 16000, std::nullopt}}});
      }
      cq.resource_groups = {g};
      if (preemption) {
        cq.within_cluster_queue = WithinClusterQueue::kLowerPriority;
        cq.reclaim_within_cohort = ReclaimWithinCohort::kAny;
      }
      s.cluster_queues.push_back(std::move(cq));
    }
  }
  int serial = 0;
  auto workload = [&](int queue) {
    WorkloadSpec w;
    w.key = "ns-" + std::to_string(queue % 500) + "/wl-" + std::to_string(serial);
    w.cluster_queue = s.cluster_queues[queue].name;
    w.priority = static_cast<int32_t>(rng() % 3) * 100;
    w.creation_time = serial++;
    PodSetSpec ps;
    ps.count = 1 + static_cast<int32_t>(rng() % 4);
    ps.per_pod = {{"cpu", 8000}, {"nvidia.com/gpu", 1000}};
    w.pod_sets = {ps};
    return w;
  };
  const int queues = kCohorts * kQueuesPerCohort;
  for (int q = 0; q < queues; ++q) {
    for (int i = 0; i < admitted_per_queue; ++i) {
      WorkloadSpec w = workload(q);
      w.pod_sets[0].count = 2;
      const int64_t gpus = w.pod_sets[0].count * 1000;
      w.admission = AdmissionSpec{w.cluster_queue,
                                  {{"main",
                                    w.pod_sets[0].count,
                                    {{"cpu", "a100"}, {"nvidia.com/gpu", "a100"}},
                                    {{"cpu", 8 * gpus}, {"nvidia.com/gpu", gpus}}}}};
      w.admission_time = w.creation_time;
      s.workloads.push_back(std::move(w));
    }
  }
  for (int i = 0; i < kPending; ++i) s.workloads.push_back(workload(static_cast<int>(rng() % queues)));
  return s;
}

void RunPass(benchmark::State& state, int admitted_per_queue, bool preemption) {
  const int64_t before = g_live.load();
  Snapshot s = Build(admitted_per_queue, preemption);
  const int64_t snapshot_bytes = g_live.load() - before;
  int64_t engine_peak = 0;
  size_t admitted = 0, preempted = 0;
  for (auto _ : state) {
    const int64_t base = g_live.load();
    g_peak.store(base);
    Decisions d = Schedule(s);
    engine_peak = std::max(engine_peak, g_peak.load() - base);
    admitted = d.admitted.size();
    preempted = d.preempted.size();
    benchmark::DoNotOptimize(d);
  }
  state.counters["decisions_per_second"] =
      benchmark::Counter(static_cast<double>(kPending), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["admitted"] = static_cast<double>(admitted);
  state.counters["preempted"] = static_cast<double>(preempted);
  state.counters["snapshot_bytes_per_workload"] =
      static_cast<double>(snapshot_bytes) / static_cast<double>(s.workloads.size());
  state.counters["engine_peak_bytes_per_workload"] =
      static_cast<double>(engine_peak) / static_cast<double>(s.workloads.size());
}

void BM_SchedulePass_100kPending(benchmark::State& state) { RunPass(state, 0, false); }
BENCHMARK(BM_SchedulePass_100kPending)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_SchedulePass_100kPending_8kAdmitted_Preemption(benchmark::State& state) { RunPass(state, 8, true); }
BENCHMARK(BM_SchedulePass_100kPending_8kAdmitted_Preemption)->Unit(benchmark::kMillisecond)->UseRealTime();

// The state Kueue's baseline scenario (bench/kueue-bench.sh) spends most passes in: 5 cohorts of
// 6 ClusterQueues (nominal 20 cpu, borrowingLimit 100, LowerPriority / reclaim Any), every
// cohort full of admitted top-priority workloads, and a backlog of 12,000 pending small, medium
// and large workloads (Kueue's names, shapes and priorities) of which none can be admitted. A
// pass then only finds out, for every pending workload, that it has to wait.
Snapshot BuildBacklog() { return rota::bench::BuildKueueBacklog(5, 6, 280, 80, 40); }

// `numbered`: the workloads carry shape numbers, as `rota run`'s snapshot builder gives them
// (ShapeTable); otherwise the engine compares pod sets to find look-alikes. `ordered`: the
// snapshot gives the scheduling order, as that builder keeps it (Snapshot::order); otherwise the
// engine sorts.
void RunBacklog(benchmark::State& state, bool numbered, bool ordered = false) {
  Snapshot s = BuildBacklog();
  // In no particular order, as a snapshot kept from pass to pass ends up (its entries come and go
  // in any order): a pass that reads the entries in scheduling order reads them far apart.
  std::shuffle(s.workloads.begin(), s.workloads.end(), std::mt19937(42));
  ShapeTable shapes;
  if (numbered)
    for (WorkloadSpec& w : s.workloads) w.shape = shapes.Of(w);
  if (ordered) {
    for (uint32_t i = 0; i < s.workloads.size(); ++i) s.order.push_back(i);
    std::sort(s.order.begin(), s.order.end(),
              [&s](uint32_t a, uint32_t b) { return InSchedulingOrder(s.workloads[a], s.workloads[b]); });
  }
  size_t pending = 0, admitted = 0;
  for (auto _ : state) {
    Decisions d = Schedule(s);
    pending = d.pending.size();
    admitted = d.admitted.size() + d.preempted.size();
    benchmark::DoNotOptimize(d);
  }
  state.counters["pending"] = static_cast<double>(pending);
  state.counters["admitted_or_preempted"] = static_cast<double>(admitted);
  state.counters["pending_per_second"] =
      benchmark::Counter(static_cast<double>(pending), benchmark::Counter::kIsIterationInvariantRate);
}
void BM_SchedulePass_KueueBaselineBacklog_12kPending(benchmark::State& state) { RunBacklog(state, false); }
BENCHMARK(BM_SchedulePass_KueueBaselineBacklog_12kPending)->Unit(benchmark::kMillisecond)->UseRealTime();
void BM_SchedulePass_KueueBaselineBacklog_12kPending_ShapesNumbered(benchmark::State& state) {
  RunBacklog(state, true);
}
BENCHMARK(BM_SchedulePass_KueueBaselineBacklog_12kPending_ShapesNumbered)->Unit(benchmark::kMillisecond)->UseRealTime();
void BM_SchedulePass_KueueBaselineBacklog_12kPending_ShapesNumbered_OrderGiven(benchmark::State& state) {
  RunBacklog(state, true, true);
}
BENCHMARK(BM_SchedulePass_KueueBaselineBacklog_12kPending_ShapesNumbered_OrderGiven)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
