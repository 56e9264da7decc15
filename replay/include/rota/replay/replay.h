#pragma once

// `rota replay --cluster DIR --trace FILE [--format philly|pai|workloads] --out DIR`: reads the
// trace and the Kueue YAML in DIR (or generates DIR from the trace), replays the trace
// (simulator.h), checks the run is sound, and writes summary.json, series.csv, jobs.csv and
// report.html into --out; with --compare DIR2 it replays the same trace on DIR2 too, writes its
// files under --out/compare/ and puts both in one report.

#include <ostream>
#include <string>

#include "rota/replay/simulator.h"
#include "rota/replay/trace.h"

namespace rota::replay {

struct ReplayOptions {
  std::string cluster_dir, trace_file, out_dir;
  std::string compare_dir;  // "": no comparison
  TraceFormat format = TraceFormat::kPhilly;
  bool generate_cluster = false;  // write cluster_dir/cluster.yaml from the trace first
  std::string nodes_file;         // for --generate-cluster; "": the trace's own, next to it
  bool fair_sharing = false;
  bool progress = false;  // draw a progress bar on `err`
  ReadOptions read;
  SimulatorOptions simulator;
};

// Returns the exit code: 0; 1 when a replay broke an invariant (the report says which); 2 for
// input that cannot be used (the message names the file, line or object).
int RunReplay(const ReplayOptions& options, std::ostream& out, std::ostream& err);

}  // namespace rota::replay
