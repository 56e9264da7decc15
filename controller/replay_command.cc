#include "replay_command.h"

#include <unistd.h>

#include <iostream>
#include <memory>

#include "rota/api/checkpoint.h"
#include "rota/replay/replay.h"

namespace rota::replay {
namespace {

struct Flags {
  ReplayOptions options;
  std::string format = "philly", checkpoint_every = "0s", checkpoint_write = "1m", interval = "1h", from = "0s",
              span = "0s", victims = "lost-work";
  bool no_progress = false;
};

// A Go duration flag in whole seconds, or an error naming the flag.
bool Seconds(const std::string& flag, const std::string& text, int64_t& out, std::ostream& err) {
  Result<int64_t> ms = api::ParseGoDuration(text);
  if (!ms.ok()) {
    err << "rota replay: " << flag << ": " << ms.status().message() << "\n";
    return false;
  }
  out = *ms / 1000;
  return true;
}

int Run(Flags& f) {
  ReplayOptions& o = f.options;
  Result<TraceFormat> format = ParseTraceFormat(f.format);
  if (!format.ok()) {
    std::cerr << "rota replay: " << format.status().message() << "\n";
    return 2;
  }
  o.format = *format;
  SimulatorOptions& s = o.simulator;
  if (!Seconds("--checkpoint-every", f.checkpoint_every, s.checkpoint_every, std::cerr) ||
      !Seconds("--checkpoint-write", f.checkpoint_write, s.checkpoint_write, std::cerr) ||
      !Seconds("--interval", f.interval, s.interval, std::cerr) || !Seconds("--from", f.from, o.read.from, std::cerr) ||
      !Seconds("--span", f.span, o.read.span, std::cerr)) {
    return 2;
  }
  if (s.interval <= 0) {
    std::cerr << "rota replay: --interval: must be at least 1s\n";
    return 2;
  }
  s.lost_work_order = f.victims == "lost-work";
  o.progress = !f.no_progress && isatty(STDERR_FILENO);
  return RunReplay(o, std::cout, std::cerr);
}

}  // namespace

void AddReplayCommand(CLI::App& app, int& exit_code, Guard guard) {
  auto f = std::make_shared<Flags>();
  ReplayOptions& o = f->options;
  auto* cmd = app.add_subcommand("replay",
                                 "Replay a GPU cluster trace through rota's admission engine on a virtual clock, with "
                                 "the queues of a directory of Kueue YAML, and write a report");
  cmd->add_option("--cluster", o.cluster_dir, "Directory of Kueue YAML: flavors, cohorts, queues, priority classes")
      ->required();
  cmd->add_option("--trace", o.trace_file, "The trace file")->required();
  cmd->add_option("--format", f->format, "philly (CSV), pai (CSV pod list) or workloads (Kueue Workload YAML)")
      ->check(CLI::IsMember({"philly", "pai", "workloads"}))
      ->default_str("philly");
  cmd->add_option("--out", o.out_dir, "Where to write summary.json, series.csv, jobs.csv and report.html")->required();
  cmd->add_option("--compare", o.compare_dir,
                  "A second cluster directory, replayed on the same trace and reported beside");
  cmd->add_flag("--generate-cluster", o.generate_cluster,
                "First write --cluster/cluster.yaml from the trace (philly: a queue per virtual cluster; pai: a queue "
                "per QoS class)");
  cmd->add_option("--nodes", o.nodes_file, "Node counts for --generate-cluster (default: the trace's, beside it)");
  cmd->add_flag("--strict", o.read.strict, "Stop at the first row that cannot be read");
  cmd->add_option("--from", f->from, "Replay from this far into the trace (e.g. 720h)");
  cmd->add_option("--span", f->span, "Replay only the jobs submitted within this span (e.g. 168h; 0s: all)");
  cmd->add_option("--limit", o.read.limit, "Replay at most this many jobs");
  cmd->add_flag("--fair-sharing", o.fair_sharing, "Order queues of a cohort by weighted share");
  cmd->add_option("--victims", f->victims, "lost-work (rota's order) or kueue (Kueue's order)")
      ->check(CLI::IsMember({"lost-work", "kueue"}))
      ->default_str("lost-work");
  cmd->add_option("--checkpoint-every", f->checkpoint_every,
                  "Jobs save a checkpoint this often while running (e.g. 30m; 0s: never)");
  cmd->add_flag("--checkpoint-all", o.simulator.checkpoint_all,
                "Every job takes part in the checkpoint handshake (otherwise those annotated rota.dev/checkpoint)");
  cmd->add_option("--checkpoint-write", f->checkpoint_write, "How long a victim takes to save when asked")
      ->default_str("1m");
  cmd->add_option("--interval", f->interval, "Time series step")->default_str("1h");
  cmd->add_flag("--no-progress", f->no_progress, "No progress bar");
  cmd->callback([f, &exit_code, guard] { exit_code = guard("rota replay", [f] { return Run(*f); }); });
}

}  // namespace rota::replay
