#include "rota/replay/replay.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iomanip>

#include "rota/replay/generate.h"
#include "rota/replay/report.h"
#include "rota/replay/settings.h"
#include "simulate.h"

namespace rota::replay {
namespace {

namespace fs = std::filesystem;

constexpr size_t kProblemsShown = 10;

Result<Trace> Read(const ReplayOptions& o, std::ostream& err) {
  Result<Trace> trace = ReadTrace(o.trace_file, o.format, o.read);
  if (!trace.ok()) return trace;
  for (size_t i = 0; i < trace->problems.size() && i < kProblemsShown; ++i) err << trace->problems[i] << "\n";
  if (trace->problems.size() > kProblemsShown) {
    err << "... and " << trace->problems.size() - kProblemsShown << " more rows that could not be read\n";
  }
  if (trace->skipped > 0) err << o.trace_file << ": left out " << trace->skipped << " " << trace->skipped_why << "\n";
  if (trace->jobs.empty()) return InvalidArgument(o.trace_file + ": no job to replay");
  return trace;
}

// Writes DIR/cluster.yaml from the trace, never over an existing one.
Status Generate(const ReplayOptions& o, const Trace& trace, std::ostream& err) {
  const fs::path dir(o.cluster_dir), file = dir / "cluster.yaml";
  std::error_code ec;
  if (fs::exists(file, ec))
    return InvalidArgument(file.string() + ": exists; remove it or leave out --generate-cluster");
  std::string nodes = o.nodes_file;
  if (nodes.empty()) {
    nodes =
        (fs::path(o.trace_file).parent_path() /
         (o.format == TraceFormat::kPai ? "openb_node_list_gpu_node.csv" : "philly_vc_nodes_from_HeliosArtifact.csv"))
            .string();
  }
  if (o.format == TraceFormat::kWorkloads) return InvalidArgument("--generate-cluster: needs a philly or pai trace");
  std::ifstream in(nodes);
  if (!in) return InvalidArgument("--nodes: " + nodes + " cannot be read");
  Result<std::string> yaml =
      o.format == TraceFormat::kPai ? GeneratePaiCluster(trace, in, nodes) : GeneratePhillyCluster(trace, in, nodes);
  if (!yaml.ok()) return yaml.status();
  fs::create_directories(dir, ec);
  std::ofstream(file) << *yaml;
  err << "wrote " << file.string() << "\n";
  return Status::Ok();
}

// The YAML files of a cluster directory, read as `rota simulate` reads its files.
Result<api::ClusterState> LoadCluster(const std::string& dir, bool fair_sharing, std::ostream& err) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return InvalidArgument("--cluster: " + dir + " is not a directory");
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml") && entry.path().filename() != kSettingsFile) {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) return InvalidArgument("--cluster: " + dir + " holds no .yaml file");
  api::ClusterState state;
  if (std::string problem = simulate::LoadFiles(files, state, err); !problem.empty()) return InvalidArgument(problem);
  if (state.cluster_queues.empty()) return InvalidArgument("--cluster: " + dir + " defines no ClusterQueue");
  if (!state.workloads.empty())
    err << dir << ": ignoring its " << state.workloads.size() << " Workloads (the trace gives the jobs)\n";
  state.fair_sharing = fair_sharing;
  return state;
}

std::string Label(const std::string& dir) {
  fs::path p = fs::path(dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p.filename().string();
}

void ProgressBar(std::ostream& err, const std::string& label, double done) {
  const int width = 40, filled = static_cast<int>(done * width);
  err << "\r" << label << " [" << std::string(filled, '=') << std::string(width - filled, ' ') << "] "
      << static_cast<int>(done * 100) << "% of jobs submitted" << std::flush;
}

Result<Replay> ReplayOn(const std::string& dir, const Trace& trace, const ReplayOptions& o, std::ostream& err) {
  Result<DirectorySettings> settings = ReadSettings(dir, {"", o.simulator, o.fair_sharing});
  if (!settings.ok()) return settings.status();
  Result<api::ClusterState> cluster = LoadCluster(settings->queues_dir, settings->fair_sharing, err);
  if (!cluster.ok()) return cluster.status();
  SimulatorOptions sim = settings->simulator;
  const std::string label = Label(dir);
  if (o.progress) sim.progress = [&](double done) { ProgressBar(err, label, done); };
  Result<Replay> r = Simulate(*cluster, trace, sim);
  if (o.progress) {
    ProgressBar(err, label, 1);
    err << "\n";
  }
  if (r.ok()) r->label = label;
  return r;
}

Status WriteFiles(const Replay& r, const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return InvalidArgument("--out: " + dir.string() + ": " + ec.message());
  std::ofstream(dir / "summary.json") << Summarize(r).dump(2) << "\n";
  std::ofstream series(dir / "series.csv"), jobs(dir / "jobs.csv");
  WriteSeriesCsv(r, series);
  WriteJobsCsv(r, jobs);
  if (!series || !jobs) return InvalidArgument("--out: cannot write into " + dir.string());
  return Status::Ok();
}

void PrintSummary(const Replay& r, std::ostream& out) {
  const nlohmann::json s = Summarize(r);
  const nlohmann::json& o = s["overall"];
  out << r.label << ": " << r.jobs.size() << " jobs replayed in " << std::fixed << std::setprecision(1)
      << r.wall_seconds << " s (" << r.passes << " passes); utilization " << o.value("utilization", 0.0) * 100
      << "%, queueing delay mean " << o["queueingDelaySeconds"].value("mean", 0.0) << " s, preemptions "
      << o.value("preemptions", 0) << ", lost " << o.value("lostGpuHours", 0.0) << " GPU-h";
  out << (r.violations.empty() ? "; no violation\n" : "; " + std::to_string(r.violations.size()) + " VIOLATIONS\n");
  for (const std::string& v : r.violations) out << "  violation: " << v << "\n";
}

}  // namespace

int RunReplay(const ReplayOptions& o, std::ostream& out, std::ostream& err) {
  Result<Trace> trace = Read(o, err);
  Status s = trace.ok() ? Status::Ok() : trace.status();
  if (s.ok() && o.generate_cluster) s = Generate(o, *trace, err);
  std::vector<Replay> runs;
  for (const std::string& dir : {o.cluster_dir, o.compare_dir}) {
    if (!s.ok() || dir.empty()) continue;
    Result<Replay> r = ReplayOn(dir, *trace, o, err);
    if (r.ok())
      runs.push_back(std::move(*r));
    else
      s = r.status();
  }
  if (s.ok()) s = WriteFiles(runs[0], o.out_dir);
  if (s.ok() && runs.size() > 1) s = WriteFiles(runs[1], fs::path(o.out_dir) / "compare");
  if (!s.ok()) {
    err << "rota replay: " << s.message() << "\n";
    return 2;
  }
  std::vector<const Replay*> shown;
  for (const Replay& r : runs) shown.push_back(&r);
  std::ofstream html(fs::path(o.out_dir) / "report.html");
  WriteHtml(shown, html);
  bool sound = true;
  for (const Replay& r : runs) {
    PrintSummary(r, out);
    sound = sound && r.violations.empty();
  }
  out << "report: " << (fs::path(o.out_dir) / "report.html").string() << "\n";
  return sound ? 0 : 1;
}

}  // namespace rota::replay
