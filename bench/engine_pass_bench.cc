// Pass after pass over one large backlog, with rota's allocator (jemalloc, as `rota run` links
// it): what a pass costs when it allocates its per-workload arrays afresh, against one that reuses
// them through an admission::Workspace, in time and in minor page faults per pass.
//
// The state is the one Kueue's large-scale scenario (bench/kueue-bench.sh large-scale) spends
// its passes in: 10 cohorts of 100 ClusterQueues (nominal 20 cpu, borrowingLimit 100,
// LowerPriority / reclaim Any), each queue's nominal quota held by one admitted large workload,
// and its 50 workloads of Kueue's classes waiting (35 small, 11 medium, 4 large): 50,000 pending,
// none of which fits.
//
// Then a pass over free quota with and without the change limit `rota run` gives it
// (admission::ScheduleLimits): 35,000 small workloads waiting, 20,000 of which fit.
//
// Last, a pass of the scenario's tail, when every workload has been admitted and the runner is
// finishing them: 21,000 admitted, none waiting.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include "kueue_backlog.h"
#include "rota/admission/engine.h"

namespace {

using namespace rota::admission;

// As `rota run`'s snapshot builder hands a snapshot over: shapes numbered, scheduling order given.
Snapshot AsHandedOver(Snapshot s) {
  ShapeTable shapes;
  for (WorkloadSpec& w : s.workloads) w.shape = shapes.Of(w);
  for (uint32_t i = 0; i < s.workloads.size(); ++i) s.order.push_back(i);
  std::sort(s.order.begin(), s.order.end(),
            [&s](uint32_t a, uint32_t b) { return InSchedulingOrder(s.workloads[a], s.workloads[b]); });
  return s;
}

Snapshot BuildLargeScaleBacklog() { return AsHandedOver(rota::bench::BuildKueueBacklog(10, 100, 35, 11, 4)); }

// The state of a large-scale run while the writer is the bottleneck: the runner has finished
// what was admitted, the cohorts' quota is free, and 35,000 small workloads wait (35 per queue),
// 20,000 of which fit. A pass decides them all; `rota run` hands its writer 500 (the change limit).
Snapshot BuildLargeScaleFreeQuota() {
  Snapshot s = rota::bench::BuildKueueBacklog(10, 100, 35, 0, 0);
  std::erase_if(s.workloads, [](const WorkloadSpec& w) { return w.admission.has_value(); });
  return AsHandedOver(std::move(s));
}

// The tail of a large-scale run: the last workloads are admitted and the runner is still
// finishing them, so passes come as they finish, with none waiting: 20 small workloads and the
// large one in each of the 1,000 queues, 21,000 admitted.
Snapshot BuildLargeScaleTail() {
  Snapshot s = rota::bench::BuildKueueBacklog(10, 100, 20, 0, 0);
  for (WorkloadSpec& w : s.workloads) {
    if (!w.admission)
      w.admission = AdmissionSpec{w.cluster_queue, {{"main", 1, {{"cpu", "default"}}, {{"cpu", 1000}}}}};
  }
  return AsHandedOver(std::move(s));
}

long MinorFaults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// `gap`: the time between passes, untimed (a controller's passes do not come back to back): the
// allocator may hand memory freed by one pass back to the system before the next.
void RunPasses(benchmark::State& state, bool reuse, std::chrono::milliseconds gap) {
  const Snapshot s = BuildLargeScaleBacklog();
  Workspace workspace;
  size_t pending = 0;
  long faults = 0;
  for (auto _ : state) {
    if (gap.count() > 0) {
      state.PauseTiming();
      std::this_thread::sleep_for(gap);
      state.ResumeTiming();
    }
    const long before = MinorFaults();
    Decisions d = reuse ? Schedule(s, workspace) : Schedule(s);
    pending = d.pending.size();
    benchmark::DoNotOptimize(d);
    if (reuse) workspace.Recycle(std::move(d));
    { Decisions gone = std::move(d); }  // (freed inside the timed pass, as rota frees it)
    faults += MinorFaults() - before;
  }
  state.counters["pending"] = static_cast<double>(pending);
  state.counters["page_faults_per_pass"] =
      benchmark::Counter(static_cast<double>(faults), benchmark::Counter::kAvgIterations);
}

using std::chrono::milliseconds;
void BM_Pass_LargeScaleBacklog_50kPending_Fresh(benchmark::State& state) { RunPasses(state, false, milliseconds(0)); }
BENCHMARK(BM_Pass_LargeScaleBacklog_50kPending_Fresh)->Unit(benchmark::kMillisecond)->UseRealTime();
void BM_Pass_LargeScaleBacklog_50kPending_Workspace(benchmark::State& state) {
  RunPasses(state, true, milliseconds(0));
}
BENCHMARK(BM_Pass_LargeScaleBacklog_50kPending_Workspace)->Unit(benchmark::kMillisecond)->UseRealTime();
void BM_Pass_LargeScaleBacklog_50kPending_Fresh_1sApart(benchmark::State& state) {
  RunPasses(state, false, milliseconds(1000));
}
BENCHMARK(BM_Pass_LargeScaleBacklog_50kPending_Fresh_1sApart)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(15);
void BM_Pass_LargeScaleBacklog_50kPending_Workspace_1sApart(benchmark::State& state) {
  RunPasses(state, true, milliseconds(1000));
}
BENCHMARK(BM_Pass_LargeScaleBacklog_50kPending_Workspace_1sApart)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(15);

void RunFreeQuotaPasses(benchmark::State& state, size_t max_changes) {
  const Snapshot s = BuildLargeScaleFreeQuota();
  Workspace workspace;
  size_t admitted = 0, pending = 0, not_considered = 0;
  for (auto _ : state) {
    Decisions d = Schedule(s, workspace, ScheduleLimits{max_changes});
    admitted = d.admitted.size();
    pending = d.pending.size();
    not_considered = d.not_considered;
    benchmark::DoNotOptimize(d);
    workspace.Recycle(std::move(d));
  }
  state.counters["admitted"] = static_cast<double>(admitted);
  state.counters["pending"] = static_cast<double>(pending);
  state.counters["not_considered"] = static_cast<double>(not_considered);
}
void BM_Pass_LargeScaleFreeQuota_35kPending_NoLimit(benchmark::State& state) { RunFreeQuotaPasses(state, 0); }
BENCHMARK(BM_Pass_LargeScaleFreeQuota_35kPending_NoLimit)->Unit(benchmark::kMillisecond)->UseRealTime();
void BM_Pass_LargeScaleFreeQuota_35kPending_Limit500(benchmark::State& state) { RunFreeQuotaPasses(state, 500); }
BENCHMARK(BM_Pass_LargeScaleFreeQuota_35kPending_Limit500)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Pass_LargeScaleTail_21kAdmitted_NoneWaiting(benchmark::State& state) {
  const Snapshot s = BuildLargeScaleTail();
  Workspace workspace;
  for (auto _ : state) {
    Decisions d = Schedule(s, workspace, ScheduleLimits{500});
    benchmark::DoNotOptimize(d);
    workspace.Recycle(std::move(d));
  }
  state.counters["workloads"] = static_cast<double>(s.workloads.size());
}
BENCHMARK(BM_Pass_LargeScaleTail_21kAdmitted_NoneWaiting)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
