#pragma once

// The replay itself: trace jobs arrive at their submit times, the admission engine (the very
// admission::Schedule of `rota run`, on snapshots built by api::BuildSnapshot) decides after each
// second in which something changed, admitted jobs run for their run time, and preempted ones go
// back to their queue with the work since their last save lost. Time is virtual: it jumps from
// one event to the next, so a replay takes as long as the engine takes to decide.
//
// What is modelled rather than run: pods start the moment a job is admitted and are gone the
// moment it is evicted (no apiserver, kubelet or scheduler latency), and a pass follows every
// second with a change (rota's batch period of 200 ms falls within it).

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "rota/admission/status.h"
#include "rota/api/snapshot.h"
#include "rota/replay/result.h"
#include "rota/replay/trace.h"

namespace rota::replay {

struct SimulatorOptions {
  int64_t interval = 3600;  // seconds per point of the time series
  // Victims by the work they would lose (rota's order), or by Kueue's order alone (false).
  bool lost_work_order = true;
  // Every job saves a checkpoint every this many seconds of running (0: never): an eviction loses
  // the work since the last one.
  int64_t checkpoint_every = 0;
  // The checkpoint handshake: a victim that takes part (its Workload is annotated
  // rota.dev/checkpoint: "true", or every job when `checkpoint_all`) keeps running and holds its
  // quota for `checkpoint_write` seconds while it saves, and then loses nothing; its preemptor
  // waits for it.
  bool checkpoint_all = false;
  int64_t checkpoint_write = 60;
  // GPU-equivalents of a unit of each resource (resources not named and not a known GPU: 0).
  std::map<std::string, double> weights;
  // Keep the snapshot's scheduling order between passes rather than have the engine sort the
  // waiting jobs on every pass (the decisions are the same; false only to show that they are).
  bool keep_order = true;
  // Called now and then with the share of the trace's jobs submitted so far.
  std::function<void(double)> progress;
};

// GPU-equivalents of one unit of `resource`: `weights` when it names it, else 1 for
// nvidia.com/gpu and amd.com/gpu, N/7 for nvidia.com/mig-Ng.*, 1/4 for nvidia.com/gpu.shared,
// and 0 for anything else (CPU, memory).
double GpuWeight(const std::string& resource, const std::map<std::string, double>& weights);

// Replays `trace` on the queues of `cluster` (flavors, cohorts, ClusterQueues, LocalQueues,
// priority classes; its workloads are ignored). An error names the object the engine cannot use.
Result<Replay> Simulate(const api::ClusterState& cluster, const Trace& trace, const SimulatorOptions& options);

}  // namespace rota::replay
