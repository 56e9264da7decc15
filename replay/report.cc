#include "rota/replay/report.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <functional>
#include <iomanip>
#include <sstream>

namespace rota::replay {
namespace {

using nlohmann::json;

// Nearest-rank percentile of sorted values; null when there are none.
json Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return nullptr;
  const size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

json Distribution(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (double v : values) sum += v;
  json mean = values.empty() ? json(nullptr) : json(sum / static_cast<double>(values.size()));
  return {{"mean", mean},
          {"p50", Percentile(values, 50)},
          {"p95", Percentile(values, 95)},
          {"p99", Percentile(values, 99)},
          {"max", values.empty() ? json(nullptr) : json(values.back())}};
}

// The mean of a series over the replay's span (its last interval may run past the end).
double Mean(const Replay& r, const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum * static_cast<double>(r.interval) / static_cast<double>(std::max<int64_t>(1, r.end - r.start));
}

// The stats of the jobs `in` selects, and `in_use` the mean GPUs they held.
json Stats(const Replay& r, const std::function<bool(const JobOutcome&)>& in, double in_use) {
  std::vector<double> delays, completions;
  double gpu_hours = 0, lost = 0, waited = 0;
  int64_t jobs = 0, preemptions = 0;
  for (const JobOutcome& j : r.jobs) {
    if (!in(j)) continue;
    ++jobs;
    preemptions += j.preemptions;
    lost += j.lost_gpu_seconds / 3600;
    waited += static_cast<double>(j.waited_within_guarantee) / 3600;
    if (j.first_start >= 0) delays.push_back(static_cast<double>(j.first_start - j.submit));
    if (j.finish >= 0) {
      completions.push_back(static_cast<double>(j.finish - j.submit));
      gpu_hours += j.gpus * static_cast<double>(j.runtime) / 3600;
    }
  }
  json d = Distribution(delays), c = Distribution(completions);
  c.erase("max");
  return {{"jobs", jobs},
          {"gpuHours", gpu_hours},
          {"meanGpusInUse", in_use},
          {"utilization", r.capacity > 0 ? in_use / r.capacity : 0.0},
          {"queueingDelaySeconds", d},
          {"jobCompletionSeconds", c},
          {"preemptions", preemptions},
          {"lostGpuHours", lost},
          {"waitedWithinGuaranteeHours", waited}};
}

int64_t EpochSeconds(const std::string& rfc3339) {
  std::tm tm{};
  std::istringstream in(rfc3339);
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
  return in.fail() ? -1 : static_cast<int64_t>(timegm(&tm));
}

std::string IntervalStart(const Replay& r, size_t i) {
  const int64_t offset = r.start + static_cast<int64_t>(i) * r.interval;
  const int64_t epoch = r.epoch.empty() ? -1 : EpochSeconds(r.epoch);
  if (epoch < 0) return std::to_string(offset);
  const std::time_t t = epoch + offset;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char out[32];
  std::strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return out;
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

json Summarize(const Replay& r) {
  int64_t finished = 0, never = 0;
  json why = json::object();  // reason -> jobs still waiting at the end for it
  for (const JobOutcome& j : r.jobs) {
    finished += j.finish >= 0, never += j.first_start < 0;
    if (!j.waiting_reason.empty()) {
      const std::string reason = j.waiting_reason.substr(0, j.waiting_reason.find(':'));
      why[reason] = why.value(reason, 0) + 1;
    }
  }
  json teams = json::object();
  double overall_in_use = 0, sum = 0, sum_sq = 0;
  int shares = 0;
  for (const std::string& team : r.teams) {
    auto s = r.series.find(team);
    const double in_use = s == r.series.end() ? 0 : Mean(r, s->second.in_use);
    overall_in_use += in_use;
    json t = Stats(
        r, [&](const JobOutcome& j) { return j.team == team; }, in_use);
    auto g = r.guarantee.find(team);
    const double guarantee = g == r.guarantee.end() ? 0 : g->second;
    t["guaranteeGpus"] = guarantee;
    t["guaranteeUse"] = guarantee > 0 ? json(in_use / guarantee) : json(nullptr);
    if (guarantee > 0) sum += in_use / guarantee, sum_sq += std::pow(in_use / guarantee, 2), ++shares;
    teams[team] = std::move(t);
  }
  return {{"label", r.label},
          {"trace",
           {{"start", r.start},
            {"end", r.end},
            {"epoch", r.epoch},
            {"jobs", r.jobs.size()},
            {"finished", finished},
            {"neverStarted", never},
            {"stillWaiting", why}}},
          {"capacityGpus", r.capacity},
          {"passes", r.passes},
          {"wallSeconds", r.wall_seconds},
          {"peakRssKiB", r.peak_rss_kib},
          {"overall", Stats(
                          r, [](const JobOutcome&) { return true; }, overall_in_use)},
          {"teams", teams},
          {"jainFairness", shares > 0 && sum_sq > 0 ? json(sum * sum / (shares * sum_sq)) : json(nullptr)},
          {"violations", r.violations}};
}

void WriteSeriesCsv(const Replay& r, std::ostream& out) {
  out << "interval_start,team,gpus_in_use,gpus_waiting\n";
  size_t intervals = 0;
  for (const auto& [team, s] : r.series) intervals = std::max(intervals, s.in_use.size());
  for (size_t i = 0; i < intervals; ++i) {
    for (const std::string& team : r.teams) {
      auto s = r.series.find(team);
      const bool has = s != r.series.end() && i < s->second.in_use.size();
      out << IntervalStart(r, i) << "," << CsvField(team) << "," << (has ? s->second.in_use[i] : 0.0) << ","
          << (has ? s->second.waiting[i] : 0.0) << "\n";
    }
  }
}

void WriteJobsCsv(const Replay& r, std::ostream& out) {
  out << "name,team,cluster_queue,submit,first_start,finish,runtime,gpus,preemptions,lost_gpu_seconds,"
         "waited_within_guarantee,waiting_reason\n";
  for (const JobOutcome& j : r.jobs) {
    out << CsvField(j.name) << "," << CsvField(j.team) << "," << CsvField(j.cluster_queue) << "," << j.submit << ","
        << j.first_start << "," << j.finish << "," << j.runtime << "," << j.gpus << "," << j.preemptions << ","
        << j.lost_gpu_seconds << "," << j.waited_within_guarantee << "," << CsvField(j.waiting_reason) << "\n";
  }
}

}  // namespace rota::replay
