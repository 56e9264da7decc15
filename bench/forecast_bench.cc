// What a start-time forecast costs (admission/forecast.h): 10,000 pending workloads in 100
// ClusterQueues of a cohort, each queue full with 8 running workloads of 1 GPU, the pending ones
// asking 1 to 4 GPUs and expected to run 10 to 120 minutes; every run time known. Prints the
// time per forecast, the engine passes it took, and how many workloads got an estimate.

#include <benchmark/benchmark.h>

#include <random>
#include <string>

#include "rota/admission/engine.h"
#include "rota/admission/forecast.h"

namespace {

using namespace rota::admission;
constexpr int64_t kGpu = 1000;
constexpr int64_t kNow = 1'800'000'000;

struct Scenario {
  Snapshot snapshot;
  std::vector<int64_t> run_time;
};

Scenario Make(int queues, int pending_per_queue, uint32_t seed) {
  Scenario s;
  std::mt19937 rng(seed);
  s.snapshot.now = kNow;
  s.snapshot.flavors = {{"a100", {}, {}}};
  for (int q = 0; q < queues; ++q) {
    ClusterQueueSpec cq;
    cq.name = "team-" + std::to_string(q);
    cq.cohort = "all";
    ResourceGroupSpec g;
    g.covered_resources = {"nvidia.com/gpu"};
    g.flavors.push_back({"a100", {{"nvidia.com/gpu", 8 * kGpu, std::nullopt, std::nullopt}}});
    cq.resource_groups = {g};
    s.snapshot.cluster_queues.push_back(cq);
    for (int i = 0; i < 8 + pending_per_queue; ++i) {
      WorkloadSpec w;
      w.key = "ns-" + std::to_string(q) + "/w-" + std::to_string(i);
      w.cluster_queue = cq.name;
      w.creation_time = kNow - 100000 + i;
      w.priority = static_cast<int32_t>(rng() % 3);
      PodSetSpec ps;
      const int64_t gpus = i < 8 ? 1 : 1 + rng() % 4;
      ps.per_pod["nvidia.com/gpu"] = gpus * kGpu;
      w.pod_sets = {ps};
      if (i < 8) {
        w.admission = AdmissionSpec{cq.name, {{"main", 1, {{"nvidia.com/gpu", "a100"}}, {{"nvidia.com/gpu", kGpu}}}}};
        w.admission_time = kNow - static_cast<int64_t>(rng() % 3600);
      }
      s.snapshot.workloads.push_back(std::move(w));
      s.run_time.push_back(600 + static_cast<int64_t>(rng() % 6600));
    }
  }
  ShapeTable shapes;  // as the controller's snapshot numbers look-alikes
  for (WorkloadSpec& w : s.snapshot.workloads) w.shape = shapes.Of(w);
  return s;
}

void BM_Forecast(benchmark::State& state) {
  const Scenario s = Make(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), 7);
  Forecast f;
  for (auto _ : state) {
    f = ForecastStarts(s.snapshot, s.run_time,
                       ForecastLimits{.max_passes = 50000, .window = static_cast<size_t>(state.range(2))});
    benchmark::DoNotOptimize(f.start.data());
  }
  size_t estimated = 0;
  for (int64_t t : f.start) estimated += t != kNoEstimate;
  state.counters["passes"] = static_cast<double>(f.passes);
  state.counters["ms_per_pass"] =
      benchmark::Counter(static_cast<double>(f.passes), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["estimated"] = static_cast<double>(estimated);
  state.counters["pending"] = static_cast<double>(state.range(0) * state.range(1));
}
// Arguments: ClusterQueues, pending workloads per queue, window (0: none).
BENCHMARK(BM_Forecast)
    ->Args({10, 100, 0})
    ->Args({100, 100, 0})
    ->Args({100, 100, 32})
    ->Args({100, 100, 16})
    ->Args({100, 100, 8})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
