#pragma once

// What one replay produced, as plain values: the contract between the simulator (simulator.h),
// which fills it, and the report (report.h), which turns it into summary.json, CSV and HTML.
// Times are seconds since the trace's start (its first submission is at or after 0).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rota::replay {

// One trace job, from its submission to its finish.
struct JobOutcome {
  std::string name;
  std::string team;           // its LocalQueue's namespace (Philly: the virtual cluster)
  std::string cluster_queue;  // the ClusterQueue its LocalQueue points at
  int64_t submit = 0;
  int64_t first_start = -1;     // first admission; -1: never admitted by the end of the replay
  int64_t finish = -1;          // -1: had not finished by the end of the replay
  int64_t runtime = 0;          // seconds of work the trace says it needs
  double gpus = 0;              // GPU-equivalents it holds while admitted (weights applied)
  int32_t preemptions = 0;      // times it was evicted
  double lost_gpu_seconds = 0;  // work thrown away by its evictions (since its last save)
  // Seconds it waited while its team asked for no more than its guarantee (its ClusterQueue's
  // nominal quota, this job included): waiting that the guarantee promises should not happen.
  int64_t waited_within_guarantee = 0;
  // For a job still waiting at the end: why, as the engine says it in Kueue's words ("reason:
  // message"); "" for the others.
  std::string waiting_reason;
};

// A team's GPUs over time: the mean over each interval of Replay::interval seconds.
struct TeamSeries {
  std::vector<double> in_use;   // GPU-equivalents admitted
  std::vector<double> waiting;  // GPU-equivalents asked for by pending jobs
};

struct Replay {
  std::string label;  // the configuration's name (its --cluster directory's last component)
  std::vector<JobOutcome> jobs;
  // Teams in a stable order, with each team's guaranteed GPU-equivalents (sum of its
  // ClusterQueue's nominal quota over GPU resources, weighted).
  std::vector<std::string> teams;
  std::map<std::string, double> guarantee;
  double capacity = 0;  // GPU-equivalents the whole cluster can hold at once
  int64_t start = 0;    // first submission
  int64_t end = 0;      // the last finish (or when the replay stopped)
  int64_t interval = 3600;
  std::map<std::string, TeamSeries> series;  // per team; every series has the same length
  std::string epoch;                         // RFC 3339 time of second 0 when the trace has one, else ""
  // Conservation and quota checks that failed (empty when the run is sound); a report shows them
  // and `rota replay` exits 1.
  std::vector<std::string> violations;
  int64_t passes = 0;        // engine passes made
  double wall_seconds = 0;   // how long the replay took
  int64_t peak_rss_kib = 0;  // the process's peak resident memory after the replay
};

}  // namespace rota::replay
