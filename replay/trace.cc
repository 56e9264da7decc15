#include "rota/replay/trace.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <sstream>

#include "csv.h"
#include "rota/api/checkpoint.h"
#include "rota/api/codec.h"
#include "rota/api/snapshot.h"
#include "yaml_json.h"

namespace rota::replay {
namespace {

using api::Json;

// Seconds, written as an integer or a decimal ("66.0"), rounded up to a whole second.
bool ParseSeconds(const std::string& text, int64_t& out) {
  double v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || !(v >= 0) || v > 1e11) return false;
  out = static_cast<int64_t>(v);
  if (static_cast<double>(out) < v) ++out;
  return true;
}

// "2017-10-09 07:01:55" (UTC) as Unix seconds.
bool ParseDateTime(const std::string& text, int64_t& out) {
  std::tm tm{};
  std::istringstream in(text);
  in >> std::get_time(&tm, "%Y-%m-%d %H:%M:%S");
  if (in.fail() || in.peek() != EOF) return false;
  out = timegm(&tm);
  return true;
}

// A Workload for one trace job: one pod set of `pods` pods asking `per_pod` of `resource` each.
std::shared_ptr<const api::Workload> MakeWorkload(const std::string& ns, const std::string& name, int64_t pods,
                                                  const std::string& resource, int64_t per_pod) {
  Json container = {{"name", "main"}, {"resources", {{"requests", {{resource, std::to_string(per_pod)}}}}}};
  Json doc = {
      {"apiVersion", "kueue.x-k8s.io/v1beta2"},
      {"kind", "Workload"},
      {"metadata", {{"name", name}, {"namespace", ns}}},
      {"spec",
       {{"queueName", "gpu"},
        {"podSets", {{{"name", "main"}, {"count", pods}, {"template", {{"spec", {{"containers", {container}}}}}}}}}}}};
  Result<api::Workload> w = api::DecodeObject<api::Workload>(doc);
  if (!w.ok()) return nullptr;
  return std::make_shared<const api::Workload>(std::move(*w));
}

// Sorts by submission, makes times relative to the first, and keeps the slice asked for.
// `absolute`: the times are Unix seconds, and the trace gets its epoch.
void Finish(Trace& trace, std::vector<TraceJob> jobs, const ReadOptions& options, bool absolute) {
  std::stable_sort(jobs.begin(), jobs.end(), [](const TraceJob& a, const TraceJob& b) { return a.submit < b.submit; });
  const int64_t first = jobs.empty() ? 0 : jobs.front().submit;
  for (TraceJob& j : jobs) {
    j.submit -= first;
    if (j.submit < options.from || (options.span > 0 && j.submit >= options.from + options.span)) continue;
    if (options.limit > 0 && trace.jobs.size() >= options.limit) break;
    j.submit -= options.from;
    trace.jobs.push_back(std::move(j));
  }
  if (absolute) trace.epoch = api::FormatTime(first + options.from);
}

// Reads a CSV file row by row after checking its header; `row` turns the fields of one row into a
// job, returns a problem ("" when none), or counts a skip in the trace.
using RowReader = std::function<std::string(const std::vector<std::string>&, size_t line, Trace&, TraceJob&)>;

Result<Trace> ReadCsv(std::istream& in, const std::string& file, const ReadOptions& options, const std::string& header,
                      bool absolute, const RowReader& row) {
  std::string line;
  if (!std::getline(in, line) || line.rfind(header, 0) != 0) {
    return InvalidArgument(file + ": line 1: the header is not \"" + header + "\"");
  }
  Trace trace;
  std::vector<TraceJob> jobs;
  for (size_t n = 2; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    TraceJob job;
    job.line = n;
    const size_t skipped = trace.skipped;
    std::string problem = row(SplitCsv(line), n, trace, job);
    if (!problem.empty()) {
      problem = file + ": line " + std::to_string(n) + ": " + problem;
      if (options.strict) return InvalidArgument(problem);
      trace.problems.push_back(std::move(problem));
    } else if (trace.skipped == skipped) {
      jobs.push_back(std::move(job));
    }
  }
  Finish(trace, std::move(jobs), options, absolute);
  return trace;
}

// GPUs as pods: as few pods of at most 8 (a node's worth) as share them evenly, else one GPU a pod.
void GpusAsPods(int64_t gpus, int64_t& pods, int64_t& per_pod) {
  pods = (gpus + 7) / 8;
  per_pod = gpus / pods;
  if (per_pod * pods != gpus) pods = gpus, per_pod = 1;
}

// Namespaces and LocalQueues are DNS labels: lower case letters, digits and '-'.
std::string DnsLabel(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else if (!out.empty() && out.back() != '-') {
      out.push_back('-');
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.substr(0, 63);
}

std::string PhillyRow(const std::vector<std::string>& f, size_t line, Trace& trace, TraceJob& job) {
  if (f.size() != 5)
    return "expected 5 fields (timestamp,duration,num_gpus,gpu_time,cluster), found " + std::to_string(f.size());
  int64_t gpus = 0;
  if (!ParseDateTime(f[0], job.submit)) return "timestamp: \"" + f[0] + "\" is not a time such as 2017-10-09 07:01:55";
  if (!ParseSeconds(f[1], job.runtime)) return "duration: \"" + f[1] + "\" is not a number of seconds";
  if (!ParseInt(f[2], gpus) || gpus < 0 || gpus > 100000) return "num_gpus: \"" + f[2] + "\" is not a GPU count";
  const std::string team = DnsLabel(f[4]);
  if (team.empty()) return "cluster: \"" + f[4] + "\" is not a virtual cluster name";
  if (gpus == 0) {
    ++trace.skipped;
    trace.skipped_why = "jobs with no GPU";
    return "";
  }
  int64_t pods = 0, per_pod = 0;
  GpusAsPods(gpus, pods, per_pod);
  job.workload = MakeWorkload(team, "job-" + std::to_string(line), pods, "nvidia.com/gpu", per_pod);
  return job.workload ? "" : "cannot be made into a Workload";
}

std::string PaiRow(const std::vector<std::string>& f, size_t, Trace& trace, TraceJob& job) {
  if (f.size() != 11) return "expected 11 fields, found " + std::to_string(f.size());
  int64_t num_gpu = 0, gpu_milli = 0, created = 0, deleted = 0, scheduled = 0;
  if (!ParseInt(f[3], num_gpu) || num_gpu < 0 || num_gpu > 1000) return "num_gpu: \"" + f[3] + "\" is not a GPU count";
  if (!ParseInt(f[4], gpu_milli) || gpu_milli < 0 || gpu_milli > 1000) {
    return "gpu_milli: \"" + f[4] + "\" is not a share of a GPU in 1/1000 (0-1000)";
  }
  if (!ParseInt(f[8], created) || created < 0) return "creation_time: \"" + f[8] + "\" is not a number of seconds";
  if (num_gpu == 0 || f[10].empty()) {
    ++trace.skipped;
    trace.skipped_why = "pods with no GPU, or never scheduled in the traced cluster (no run time)";
    return "";
  }
  if (!ParseInt(f[9], deleted) || !ParseInt(f[10], scheduled) || scheduled < created || deleted < scheduled) {
    return "creation_time, scheduled_time, deletion_time: \"" + f[8] + "\", \"" + f[10] + "\", \"" + f[9] +
           "\" are not times in that order";
  }
  const std::string team = DnsLabel(f[6]);
  if (team.empty()) return "qos: \"" + f[6] + "\" is empty";
  const std::string name = DnsLabel(f[0]);
  if (name.empty()) return "name: \"" + f[0] + "\" is not a pod name";
  job.submit = created;
  job.runtime = std::max<int64_t>(1, deleted - scheduled);
  const PaiRequest r = PaiResources(num_gpu, gpu_milli);
  job.workload = MakeWorkload(team, name, 1, r.resource, r.count);
  return job.workload ? "" : "cannot be made into a Workload";
}

// A `workloads` document's submit time (seconds, or an RFC 3339 time) and run time.
std::string WorkloadTimes(const api::Workload& w, TraceJob& job, bool& absolute) {
  const std::string at = api::AnnotationOr(w.metadata.annotations, kSubmitAtAnnotation);
  const std::string run = api::AnnotationOr(w.metadata.annotations, kRuntimeAnnotation);
  if (at.empty() || run.empty()) {
    return std::string("needs the annotations ") + kSubmitAtAnnotation + " and " + kRuntimeAnnotation;
  }
  if (ParseInt(at, job.submit) && job.submit >= 0) {
    absolute = false;
  } else if (Result<int64_t> t = api::ParseTime(at); t.ok() && *t > 0) {
    job.submit = *t;
  } else {
    return std::string("metadata.annotations[") + kSubmitAtAnnotation + "]: \"" + at +
           "\" is neither seconds nor an RFC 3339 time";
  }
  Result<int64_t> ms = api::ParseGoDuration(run);
  if (!ms.ok()) return std::string("metadata.annotations[") + kRuntimeAnnotation + "]: " + ms.status().message();
  job.runtime = std::max<int64_t>(1, (*ms + 999) / 1000);
  return "";
}

}  // namespace

Result<TraceFormat> ParseTraceFormat(const std::string& name) {
  if (name == "philly") return TraceFormat::kPhilly;
  if (name == "pai") return TraceFormat::kPai;
  if (name == "workloads") return TraceFormat::kWorkloads;
  return InvalidArgument("--format: \"" + name + "\" is not one of philly, pai, workloads");
}

PaiRequest PaiResources(int64_t num_gpu, int64_t gpu_milli) {
  if (num_gpu > 1 || gpu_milli >= 1000 || gpu_milli == 0) return {"nvidia.com/gpu", num_gpu};
  if (gpu_milli * 7 <= 1000) return {"nvidia.com/mig-1g.10gb", 1};
  return {"nvidia.com/gpu.shared", (gpu_milli + 249) / 250};
}

Result<Trace> ReadPhilly(std::istream& in, const std::string& file, const ReadOptions& options) {
  return ReadCsv(in, file, options, "timestamp,duration,num_gpus,gpu_time,cluster", true, PhillyRow);
}

Result<Trace> ReadPai(std::istream& in, const std::string& file, const ReadOptions& options) {
  return ReadCsv(in, file, options, "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase", false,
                 PaiRow);
}

Result<Trace> ReadWorkloads(const std::string& text, const std::string& file, const ReadOptions& options) {
  auto docs = yaml::ParseDocuments(text);
  if (!docs.ok()) return InvalidArgument(file + ": " + docs.status().message());
  Trace trace;
  std::vector<TraceJob> jobs;
  bool absolute = true;
  for (size_t i = 0; i < docs->size(); ++i) {
    const Json& doc = (*docs)[i];
    if (doc.is_null()) continue;
    const std::string where = file + ": document " + std::to_string(i + 1) + ": ";
    std::string problem;
    TraceJob job;
    job.line = i + 1;
    if (!doc.is_object() || doc.value("kind", Json()) != "Workload") {
      problem = "not a Workload (the workloads format is Kueue Workload YAML)";
    } else if (Result<api::Workload> w = api::DecodeObject<api::Workload>(doc); !w.ok()) {
      problem = w.status().message();
    } else if (problem = WorkloadTimes(*w, job, absolute); problem.empty()) {
      if (w->metadata.namespace_.empty()) w->metadata.namespace_ = "default";
      job.workload = std::make_shared<const api::Workload>(std::move(*w));
      jobs.push_back(std::move(job));
      continue;
    }
    if (options.strict) return InvalidArgument(where + problem);
    trace.problems.push_back(where + problem);
  }
  Finish(trace, std::move(jobs), options, absolute);
  return trace;
}

Result<Trace> ReadTrace(const std::string& path, TraceFormat format, const ReadOptions& options) {
  std::ifstream in(path);
  std::error_code ec;
  if (!in || std::filesystem::is_directory(path, ec)) return InvalidArgument(path + ": cannot be read as a file");
  if (format == TraceFormat::kPhilly) return ReadPhilly(in, path, options);
  if (format == TraceFormat::kPai) return ReadPai(in, path, options);
  std::stringstream text;
  text << in.rdbuf();
  return ReadWorkloads(text.str(), path, options);
}

}  // namespace rota::replay
