#include "rota/admission/forecast.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <numeric>
#include <string_view>
#include <unordered_map>

#include "rota/admission/engine.h"

namespace rota::admission {
namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
// A workload whose run is over stays in the simulated snapshot, pending for this reason (the
// engine passes such workloads through without looking at quota), until a compaction removes
// the finished ones at once: cheaper than renumbering the snapshot at every release.
constexpr const char* kFinished = "Finished";

// The snapshot run forward: its workloads, when each admitted one releases its quota, and where
// each came from in the caller's snapshot.
class Simulation {
 public:
  // Takes the admitted workloads and each queue's first `window` pending ones of `snapshot`;
  // those no release can start (inadmissible, in no queue) are left out.
  Simulation(const Snapshot& snapshot, const std::vector<int64_t>& run_time, size_t window)
      : run_time_(run_time), window_(window) {
    sim_.flavors = snapshot.flavors;
    sim_.cohorts = snapshot.cohorts;
    sim_.cluster_queues = snapshot.cluster_queues;
    sim_.fair_sharing = snapshot.fair_sharing;
    std::vector<size_t> pending;
    for (size_t i = 0; i < snapshot.workloads.size(); ++i) {
      const WorkloadSpec& w = snapshot.workloads[i];
      if (w.admission) {
        const int64_t run = i < run_time.size() ? run_time[i] : kUnknownRunTime;
        Add(w, i,
            w.evicted                ? snapshot.now
            : run == kUnknownRunTime ? kNever
                                     : std::max(snapshot.now, w.admission_time + run));
      } else if (!w.cluster_queue.empty() && w.inadmissible_reason.empty()) {
        pending.push_back(i);
      }
    }
    std::sort(pending.begin(), pending.end(),
              [&](size_t a, size_t b) { return InSchedulingOrder(snapshot.workloads[a], snapshot.workloads[b]); });
    for (size_t i : pending) queues_[snapshot.workloads[i].cluster_queue].later.push_back(i);
    Fill(snapshot);
  }

  Decisions Pass(int64_t now, Workspace& workspace) {
    sim_.now = now;
    return Schedule(sim_, workspace);
  }

  // Gives the workload its admission at `now`; returns its index in the caller's snapshot.
  size_t Admit(const AdmitDecision& a, int64_t now) {
    const size_t i = index_.at(a.workload);
    WorkloadSpec& w = sim_.workloads[i];
    w.admission = AdmissionSpec{a.cluster_queue, a.pod_sets};
    w.admission_time = now;
    w.evicted = false;
    const int64_t run = RunTime(i);
    end_[i] = run == kUnknownRunTime ? kNever : now + run;
    Queue& q = queues_[w.cluster_queue];
    if (q.waiting > 0 && --q.waiting * 2 < window_ && !q.later.empty()) refill_ = true;
    return origin_[i];
  }

  // Brings each queue's pending workloads in the simulation back up to the window, when one of
  // them has started since the last time.
  void Fill(const Snapshot& snapshot) {
    if (!refill_) return;
    refill_ = false;
    for (auto& [name, q] : queues_) {
      while (!q.later.empty() && (window_ == 0 || q.waiting < window_)) {
        Add(snapshot.workloads[q.later.front()], q.later.front(), kNever);
        q.later.pop_front();
        ++q.waiting;
      }
    }
    Renumber();
  }

  // Back to its queue: it will run its whole run time again.
  void Preempt(const std::string& key) {
    const size_t i = index_.at(key);
    ++queues_[sim_.workloads[i].cluster_queue].waiting;
    Requeue(i);
  }

  int64_t NextRelease() const {
    int64_t next = kNever;
    for (size_t i = 0; i < end_.size(); ++i)
      if (sim_.workloads[i].admission) next = std::min(next, end_[i]);
    return next;
  }

  // Ends the runs due by `now`: a workload being evicted goes back to its queue, others finish.
  void Release(int64_t now) {
    for (size_t i = 0; i < end_.size(); ++i) {
      WorkloadSpec& w = sim_.workloads[i];
      if (!w.admission || end_[i] > now) continue;
      if (w.evicted) {
        ++queues_[w.cluster_queue].waiting;
        Requeue(i);
        continue;
      }
      w.admission.reset();
      w.inadmissible_reason = kFinished;
      end_[i] = kNever;
      ++finished_;
    }
    if (finished_ * 2 > sim_.workloads.size()) Compact();
  }

 private:
  struct Queue {
    std::deque<size_t> later;  // pending, not yet in the simulation: indices of the snapshot
    size_t waiting = 0;        // pending in the simulation
  };

  void Add(const WorkloadSpec& w, size_t origin, int64_t end) {
    sim_.workloads.push_back(w);
    origin_.push_back(origin);
    end_.push_back(end);
  }

  int64_t RunTime(size_t i) const { return origin_[i] < run_time_.size() ? run_time_[origin_[i]] : kUnknownRunTime; }

  void Requeue(size_t i) {
    WorkloadSpec& w = sim_.workloads[i];
    w.admission.reset();
    w.evicted = false;
    w.last_checkpoint = 0;
    end_[i] = kNever;
  }

  void Compact() {
    size_t kept = 0;
    for (size_t i = 0; i < sim_.workloads.size(); ++i) {
      if (sim_.workloads[i].inadmissible_reason == kFinished && !sim_.workloads[i].admission) continue;
      if (kept != i) {
        sim_.workloads[kept] = std::move(sim_.workloads[i]);
        origin_[kept] = origin_[i];
        end_[kept] = end_[i];
      }
      ++kept;
    }
    sim_.workloads.resize(kept);
    origin_.resize(kept);
    end_.resize(kept);
    finished_ = 0;
    Renumber();
  }

  // The key index and the scheduling order (fixed between compactions: neither a workload's
  // priority nor its creation time changes).
  void Renumber() {
    index_.clear();
    for (size_t i = 0; i < sim_.workloads.size(); ++i) index_.emplace(sim_.workloads[i].key, i);
    sim_.order.resize(sim_.workloads.size());
    std::iota(sim_.order.begin(), sim_.order.end(), uint32_t{0});
    std::sort(sim_.order.begin(), sim_.order.end(),
              [this](uint32_t a, uint32_t b) { return InSchedulingOrder(sim_.workloads[a], sim_.workloads[b]); });
  }

  Snapshot sim_;
  const std::vector<int64_t>& run_time_;
  const size_t window_;
  std::map<std::string, Queue> queues_;
  bool refill_ = true;
  std::vector<size_t> origin_;
  std::vector<int64_t> end_;
  std::unordered_map<std::string_view, size_t> index_;  // views of sim_'s keys
  size_t finished_ = 0;
};

}  // namespace

Forecast ForecastStarts(const Snapshot& snapshot, const std::vector<int64_t>& run_time, const ForecastLimits& limits) {
  Forecast f;
  f.start.assign(snapshot.workloads.size(), kNoEstimate);
  size_t waiting = 0;
  for (const WorkloadSpec& w : snapshot.workloads)
    waiting += !w.admission && !w.cluster_queue.empty() && w.inadmissible_reason.empty();
  if (snapshot.now == 0 || waiting == 0) return f;
  Simulation sim(snapshot, run_time, limits.window);
  Workspace workspace;
  for (int64_t now = snapshot.now;;) {
    if (f.passes == limits.max_passes || (limits.keep_going && !limits.keep_going())) {
      f.hit_max_passes = true;
      break;
    }
    Decisions d = sim.Pass(now, workspace);
    ++f.passes;
    for (const PreemptDecision& p : d.preempted) sim.Preempt(p.workload);
    for (const AdmitDecision& a : d.admitted) {
      const size_t origin = sim.Admit(a, now);
      if (!snapshot.workloads[origin].admission && f.start[origin] == kNoEstimate) {
        f.start[origin] = now;
        --waiting;
      }
    }
    workspace.Recycle(std::move(d));
    sim.Fill(snapshot);
    if (waiting == 0) break;
    const int64_t next = sim.NextRelease();
    if (next == kNever) break;  // nothing will ever be released
    if (next - snapshot.now > limits.horizon) {
      f.hit_horizon = true;
      break;
    }
    now = next;
    sim.Release(now);
  }
  return f;
}

}  // namespace rota::admission
