// What a pass costs when 1% of a deep backlog changes between passes: the incremental engine
// (admission::IncrementalScheduler) against a whole-snapshot pass (admission::Schedule, with the
// Workspace and the given order `rota run` hands it) over the same cluster.
//
// The cluster: Kueue's classes in 10 cohorts of 100 ClusterQueues, or 100 of 10 (bench/kueue_backlog.h), each
// queue's nominal quota held by one admitted workload and 100 workloads waiting in it: 100,000
// waiting, none of which fits. Between passes (untimed), 1,000 of the waiting workloads change:
// 500 new ones arrive in random queues and 500 random ones are deleted. With `finishes`, that
// many admitted workloads also finish, each freeing its queue for the next waiting ones (whose
// admissions are applied before the next change), as a running cluster's passes see.
//
// Time moves on by a second every fifth pass. After five untimed passes, each pass is timed
// alone; the counters give its median, 90th and 99th percentile (ms).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "kueue_backlog.h"
#include "rota/admission/engine.h"
#include "rota/admission/incremental.h"

namespace {

using namespace rota::admission;
using Clock = std::chrono::steady_clock;

constexpr int kChangesPerPass = 1000;
constexpr int kWarmUpPasses = 5;

// The cluster, kept by both engines' callers alike: the workloads by key.
class Backlog {
 public:
  Backlog(bool incremental, int cohorts) : incremental_(incremental) {
    Snapshot s = rota::bench::BuildKueueBacklog(cohorts, 1000 / cohorts, 70, 22, 8);
    queues_ = s.cluster_queues;
    if (incremental_) {
      engine_.SetQueues(s.flavors, s.cohorts, s.cluster_queues);
      engine_.SetNow(now_);
    }
    base_ = s;
    base_.workloads.clear();
    for (WorkloadSpec& w : s.workloads) Put(std::move(w));
  }

  // 500 arrivals, 500 deletions of waiting workloads, and `finishes` admitted ones finishing;
  // time (in seconds, as `rota run` gives it) moves on every fifth pass (200 ms apart).
  void Change(int finishes) {
    if (++passes_ % 5 == 0) {
      ++now_;
      if (incremental_) engine_.SetNow(now_);
    }
    for (int i = 0; i < kChangesPerPass / 2; ++i) {
      WorkloadSpec w;
      w.key = "new/" + std::to_string(serial_);
      w.cluster_queue = queues_[Pick(queues_.size())].name;
      w.priority = 50;
      w.creation_time = 1'000'000 + serial_++;
      PodSetSpec ps;
      ps.per_pod = {{"cpu", 1000}};
      w.pod_sets = {ps};
      Put(std::move(w));
    }
    for (int i = 0; i < kChangesPerPass / 2; ++i) Drop(waiting_);
    for (int i = 0; i < finishes; ++i) Drop(admitted_);
  }

  // Untimed: the whole-snapshot pass's snapshot, as `rota run` keeps it from pass to pass (shapes
  // numbered, scheduling order given).
  void Prepare() {
    if (incremental_) return;
    snapshot_ = base_;
    snapshot_.now = now_;
    snapshot_.workloads.reserve(specs_.size());
    for (const auto& [key, w] : specs_) snapshot_.workloads.push_back(w);
    snapshot_.order.resize(snapshot_.workloads.size());
    for (uint32_t i = 0; i < snapshot_.order.size(); ++i) snapshot_.order[i] = i;
    std::sort(snapshot_.order.begin(), snapshot_.order.end(), [this](uint32_t a, uint32_t b) {
      return InSchedulingOrder(snapshot_.workloads[a], snapshot_.workloads[b]);
    });
  }

  Decisions Pass() { return incremental_ ? engine_.Pass() : Schedule(snapshot_, workspace_); }
  void Recycle(Decisions&& d) {
    if (incremental_)
      engine_.Recycle(std::move(d));
    else
      workspace_.Recycle(std::move(d));
  }

  void Apply(const Decisions& d) {
    for (const AdmitDecision& a : d.admitted) {
      Forget(waiting_, a.workload);
      WorkloadSpec& w = specs_.at(a.workload);
      w.admission = AdmissionSpec{a.cluster_queue, a.pod_sets};
      w.admission_time = now_;
      where_[w.key] = admitted_.size();
      admitted_.push_back(w.key);
      if (incremental_) engine_.Upsert(w);
    }
  }

 private:
  size_t Pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  void Put(WorkloadSpec w) {
    w.shape = shapes_.Of(w);
    std::vector<std::string>& list = w.admission ? admitted_ : waiting_;
    where_[w.key] = list.size();
    list.push_back(w.key);
    if (incremental_) engine_.Upsert(w);
    const std::string key = w.key;
    specs_.emplace(key, std::move(w));
  }

  void Drop(std::vector<std::string>& from) {
    if (from.empty()) return;
    const std::string key = from[Pick(from.size())];
    Forget(from, key);
    specs_.erase(key);
    if (incremental_) engine_.Remove(key);
  }

  // Takes `key` out of `list` (the last entry takes its place).
  void Forget(std::vector<std::string>& list, const std::string& key) {
    const size_t at = where_.at(key);
    where_.erase(key);
    if (at + 1 != list.size()) {
      list[at] = std::move(list.back());
      where_[list[at]] = at;
    }
    list.pop_back();
  }

  bool incremental_;
  std::mt19937 rng_{7};
  std::vector<ClusterQueueSpec> queues_;
  Snapshot base_, snapshot_;
  std::unordered_map<std::string, WorkloadSpec> specs_;
  std::vector<std::string> waiting_, admitted_;
  std::unordered_map<std::string, size_t> where_;  // a key's place in waiting_ or admitted_
  ShapeTable shapes_;
  int serial_ = 0;
  int passes_ = 0;
  int64_t now_ = 1'000'000;
  IncrementalScheduler engine_;
  Workspace workspace_;
};

void RunPasses(benchmark::State& state, bool incremental, int finishes) {
  Backlog backlog(incremental, static_cast<int>(state.range(0)));
  backlog.Prepare();
  backlog.Apply(backlog.Pass());  // (the first pass decides everything)
  // A few passes untimed, as a controller that has been running has had: the first ones after
  // the first touch memory that later passes reuse (their page faults are a one-time cost).
  for (int i = 0; i < kWarmUpPasses; ++i) {
    backlog.Change(finishes);
    backlog.Prepare();
    Decisions d = backlog.Pass();
    backlog.Apply(d);
    backlog.Recycle(std::move(d));
  }
  std::vector<double> ms;
  for (auto _ : state) {
    backlog.Change(finishes);
    backlog.Prepare();
    const auto start = Clock::now();
    Decisions d = backlog.Pass();
    const double took = std::chrono::duration<double>(Clock::now() - start).count();
    state.SetIterationTime(took);
    ms.push_back(took * 1000);
    benchmark::DoNotOptimize(d.pending.size());
    backlog.Apply(d);
    backlog.Recycle(std::move(d));
  }
  std::sort(ms.begin(), ms.end());
  state.counters["p50_ms"] = ms[ms.size() / 2];
  state.counters["p99_ms"] = ms[std::min(ms.size() - 1, ms.size() * 99 / 100)];
  state.counters["p90_ms"] = ms[ms.size() * 9 / 10];
}

void BM_Pass_100kWaiting_1PercentChanged_Whole(benchmark::State& s) { RunPasses(s, false, 0); }
void BM_Pass_100kWaiting_1PercentChanged_Incremental(benchmark::State& s) { RunPasses(s, true, 0); }
void BM_Pass_100kWaiting_1PercentChanged_10Finish_Whole(benchmark::State& s) { RunPasses(s, false, 10); }
void BM_Pass_100kWaiting_1PercentChanged_10Finish_Incremental(benchmark::State& s) { RunPasses(s, true, 10); }

// The argument: how many cohorts the 1,000 queues are in (10 of 100 queues, as Kueue's
// large-scale scenario, or 100 of 10).
BENCHMARK(BM_Pass_100kWaiting_1PercentChanged_Whole)
    ->Arg(10)
    ->Arg(100)
    ->UseManualTime()
    ->Iterations(100)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Pass_100kWaiting_1PercentChanged_Incremental)
    ->Arg(10)
    ->Arg(100)
    ->UseManualTime()
    ->Iterations(200)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Pass_100kWaiting_1PercentChanged_10Finish_Whole)
    ->Arg(10)
    ->Arg(100)
    ->UseManualTime()
    ->Iterations(100)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Pass_100kWaiting_1PercentChanged_10Finish_Incremental)
    ->Arg(10)
    ->Arg(100)
    ->UseManualTime()
    ->Iterations(200)
    ->Unit(benchmark::kMillisecond);

}  // namespace
