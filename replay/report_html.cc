#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>

#include "html.h"
#include "rota/replay/report.h"

namespace rota::replay {
namespace {

using nlohmann::json;

constexpr int kWidth = 860, kHeight = 300, kLeft = 60, kRight = 160, kTop = 14, kBottom = 34;
constexpr size_t kMaxPoints = 800, kMaxCdfPoints = 200;
const char* const kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                               "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939"};

using statuspage::Escape;  // (the status page's HTML escaping)

const char* Color(size_t i) { return kColors[i % (sizeof kColors / sizeof *kColors)]; }

std::string Fixed(double v, int digits = 1) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(digits) << v;
  return o.str();
}

// Seconds for a person: "45 s", "12.5 min", "3.2 h", "2.1 d"; "-" for null.
std::string Duration(const json& seconds) {
  if (!seconds.is_number()) return "-";
  const double s = seconds.get<double>();
  if (s < 60) return Fixed(s, 0) + " s";
  if (s < 3600) return Fixed(s / 60) + " min";
  if (s < 86400 * 2) return Fixed(s / 3600) + " h";
  return Fixed(s / 86400) + " d";
}

// Hours with two decimals below 10, one above.
std::string Hours(double h) { return Fixed(h, h < 10 ? 2 : 1); }

std::string Percent(const json& share) { return share.is_number() ? Fixed(share.get<double>() * 100) + "%" : "-"; }

void Head(const std::vector<const Replay*>& replays, std::ostream& out) {
  std::string title = "rota replay:";
  for (size_t i = 0; i < replays.size(); ++i) title += (i ? " vs " : " ") + replays[i]->label;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << Escape(title)
      << "</title>\n<style>body{font-family:sans-serif;margin:24px;color:#222}table{border-collapse:collapse;"
         "margin:8px 0 20px}td,th{border:1px solid #ccc;padding:3px "
         "8px;text-align:right;white-space:nowrap}th:first-child,td:first-"
         "child{text-align:left}tr.overall{font-weight:bold}.violations{border:2px solid #c00;background:#fee;"
         "padding:8px 16px;margin:12px 0}svg{display:block;margin:6px 0 18px}svg text{font-size:11px}</style>\n"
         "</head><body>\n<h1>"
      << Escape(title) << "</h1>\n";
}

void Violations(const std::vector<const Replay*>& replays, std::ostream& out) {
  for (const Replay* r : replays) {
    if (r->violations.empty()) continue;
    out << "<div class=\"violations\" id=\"violations\"><strong>" << Escape(r->label)
        << " broke an invariant: its figures cannot be trusted.</strong><ul>";
    for (const std::string& v : r->violations) out << "<li>" << Escape(v) << "</li>";
    out << "</ul></div>\n";
  }
}

void StatsCells(const json& s, std::ostream& out) {
  out << "<td>" << s.value("jobs", 0) << "</td><td>" << Percent(s["utilization"]) << "</td><td>"
      << Duration(s["queueingDelaySeconds"]["mean"]) << "</td><td>" << Duration(s["queueingDelaySeconds"]["p50"])
      << "</td><td>" << Duration(s["queueingDelaySeconds"]["p95"]) << "</td><td>"
      << Duration(s["queueingDelaySeconds"]["p99"]) << "</td><td>" << Duration(s["jobCompletionSeconds"]["p50"])
      << "</td><td>" << s.value("preemptions", 0) << "</td><td>" << Fixed(s.value("lostGpuHours", 0.0)) << "</td><td>"
      << Fixed(s.value("waitedWithinGuaranteeHours", 0.0)) << "</td>";
}

void Table(const json& summary, size_t n, std::ostream& out) {
  out << "<table id=\"summary-" << n << "\"><tr><th>team</th><th>guarantee (GPUs)</th><th>jobs</th>"
      << "<th>share of the cluster</th><th>delay mean</th><th>delay p50</th><th>delay p95</th><th>delay p99</th>"
      << "<th>completion p50</th><th>preemptions</th><th>lost GPU-h</th><th>waited within guarantee (h)</th></tr>\n";
  out << "<tr class=\"overall\"><td>all</td><td>" << Fixed(summary.value("capacityGpus", 0.0)) << "</td>";
  StatsCells(summary["overall"], out);
  out << "</tr>\n";
  for (const auto& [team, s] : summary["teams"].items()) {
    out << "<tr class=\"team-row\"><td>" << Escape(team) << "</td><td>" << Fixed(s.value("guaranteeGpus", 0.0))
        << "</td>";
    StatsCells(s, out);
    out << "</tr>\n";
  }
  out << "</table>\n";
}

// Means of `v` over runs of `stride` points.
std::vector<double> Downsample(const std::vector<double>& v, size_t stride) {
  std::vector<double> out;
  for (size_t i = 0; i < v.size(); i += stride) {
    double sum = 0;
    size_t n = 0;
    for (size_t j = i; j < v.size() && j < i + stride; ++j) sum += v[j], ++n;
    out.push_back(sum / static_cast<double>(n));
  }
  return out;
}

void Legend(const std::vector<std::string>& names, std::ostream& out) {
  for (size_t i = 0; i < names.size(); ++i) {
    const int y = kTop + 8 + static_cast<int>(i) * 15;
    out << "<rect x=\"" << kWidth - kRight + 12 << "\" y=\"" << y - 8 << "\" width=\"10\" height=\"10\" fill=\""
        << Color(i) << "\"/><text x=\"" << kWidth - kRight + 26 << "\" y=\"" << y + 1 << "\">" << Escape(names[i])
        << "</text>";
  }
}

// GPUs in use per team over time, stacked, with the cluster's capacity as a line.
void Utilization(const Replay& r, size_t n, std::ostream& out) {
  size_t points = 0;
  for (const auto& [team, s] : r.series) points = std::max(points, s.in_use.size());
  const size_t stride = std::max<size_t>(1, (points + kMaxPoints - 1) / kMaxPoints);
  std::vector<std::vector<double>> layers;
  for (const std::string& team : r.teams) {
    auto s = r.series.find(team);
    std::vector<double> v = s == r.series.end() ? std::vector<double>() : s->second.in_use;
    v.resize(points);
    layers.push_back(Downsample(v, stride));
  }
  const size_t m = layers.empty() ? 0 : layers[0].size();
  const double top = std::max(1.0, r.capacity) * 1.05, w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  // Each point is the mean over its interval: a step from the interval's start to its end.
  auto x = [&](size_t i) { return kLeft + (m > 0 ? w * static_cast<double>(i) / static_cast<double>(m) : 0); };
  auto y = [&](double v) { return kTop + h - h * std::min(v, top) / top; };
  out << "<h3>GPUs in use by team</h3>\n<svg id=\"utilization-" << n << "\" xmlns=\"http://www.w3.org/2000/svg\" "
      << "width=\"" << kWidth << "\" height=\"" << kHeight << "\" role=\"img\">";
  std::vector<double> base(m, 0);
  for (size_t t = 0; t < layers.size(); ++t) {
    std::ostringstream pts;
    for (size_t i = 0; i < m; ++i) {
      const std::string top_y = Fixed(y(base[i] + layers[t][i]));
      pts << Fixed(x(i)) << "," << top_y << " " << Fixed(x(i + 1)) << "," << top_y << " ";
    }
    for (size_t i = m; i-- > 0;) {
      pts << Fixed(x(i + 1)) << "," << Fixed(y(base[i])) << " " << Fixed(x(i)) << "," << Fixed(y(base[i])) << " ";
    }
    for (size_t i = 0; i < m; ++i) base[i] += layers[t][i];
    out << "<polygon class=\"team-area\" fill=\"" << Color(t) << "\" fill-opacity=\"0.75\" points=\"" << pts.str()
        << "\"/>";
  }
  out << "<line x1=\"" << kLeft << "\" x2=\"" << kLeft + w << "\" y1=\"" << Fixed(y(r.capacity)) << "\" y2=\""
      << Fixed(y(r.capacity)) << "\" stroke=\"#000\" stroke-dasharray=\"4 3\"/><text x=\"" << kLeft + 4 << "\" y=\""
      << Fixed(y(r.capacity) - 3) << "\">capacity " << Fixed(r.capacity, 0) << " GPUs</text>";
  out << "<line x1=\"" << kLeft << "\" x2=\"" << kLeft << "\" y1=\"" << kTop << "\" y2=\"" << kTop + h
      << "\" stroke=\"#444\"/><line x1=\"" << kLeft << "\" x2=\"" << kLeft + w << "\" y1=\"" << kTop + h << "\" y2=\""
      << kTop + h << "\" stroke=\"#444\"/><text x=\"" << kLeft << "\" y=\"" << kHeight - 10 << "\">0</text><text x=\""
      << kLeft + w - 60 << "\" y=\"" << kHeight - 10 << "\">" << Duration(static_cast<double>(r.end - r.start))
      << "</text><text x=\"4\" y=\"" << kTop + 10 << "\">" << Fixed(top, 0) << "</text>";
  Legend(r.teams, out);
  out << "</svg>\n";
}

// Queueing delay CDFs: one curve per team (or per replay), log seconds from 1 s.
void DelayCdf(const std::vector<std::pair<std::string, std::vector<double>>>& curves, const std::string& id,
              std::ostream& out) {
  double most = 10;
  for (const auto& [name, d] : curves)
    if (!d.empty()) most = std::max(most, d.back());
  const double decades = std::ceil(std::log10(most)), w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  auto x = [&](double s) { return kLeft + w * std::log10(std::max(1.0, s)) / decades; };
  auto y = [&](double f) { return kTop + h - h * f; };
  out << "<h3>Queueing delay (share of jobs that waited at most)</h3>\n<svg id=\"" << id
      << "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
      << "\" role=\"img\">";
  for (int d = 0; d <= decades; ++d) {
    const double at = x(std::pow(10, d));
    out << "<line x1=\"" << Fixed(at) << "\" x2=\"" << Fixed(at) << "\" y1=\"" << kTop << "\" y2=\"" << kTop + h
        << "\" stroke=\"#eee\"/><text x=\"" << Fixed(at - 8) << "\" y=\"" << kHeight - 10 << "\">"
        << Duration(std::pow(10, d)) << "</text>";
  }
  std::vector<std::string> names;
  for (size_t c = 0; c < curves.size(); ++c) {
    const std::vector<double>& d = curves[c].second;
    names.push_back(curves[c].first);
    if (d.empty()) continue;
    std::ostringstream pts;
    const size_t step = std::max<size_t>(1, d.size() / kMaxCdfPoints);
    for (size_t i = 0; i < d.size(); i += step) pts << Fixed(x(d[i])) << "," << Fixed(y((i + 1.0) / d.size())) << " ";
    pts << Fixed(x(d.back())) << "," << Fixed(y(1));
    out << "<polyline class=\"cdf\" fill=\"none\" stroke-width=\"2\" stroke=\"" << Color(c) << "\" points=\""
        << pts.str() << "\"/>";
  }
  out << "<line x1=\"" << kLeft << "\" x2=\"" << kLeft + w << "\" y1=\"" << kTop + h << "\" y2=\"" << kTop + h
      << "\" stroke=\"#444\"/><text x=\"4\" y=\"" << kTop + 10 << "\">100%</text><text x=\"4\" y=\"" << kTop + h
      << "\">0%</text>";
  Legend(names, out);
  out << "</svg>\n";
}

std::vector<double> Delays(const Replay& r, const std::string* team) {
  std::vector<double> d;
  for (const JobOutcome& j : r.jobs)
    if (j.first_start >= 0 && (!team || j.team == *team)) d.push_back(static_cast<double>(j.first_start - j.submit));
  std::sort(d.begin(), d.end());
  return d;
}

void Comparison(const std::vector<const Replay*>& replays, const std::vector<json>& summaries, std::ostream& out) {
  out << "<h2>Side by side</h2>\n<table id=\"comparison\"><tr><th>overall</th>";
  for (const Replay* r : replays) out << "<th>" << Escape(r->label) << "</th>";
  out << "<th>difference</th></tr>\n";
  const std::vector<std::pair<std::string, json::json_pointer>> rows = {
      {"share of the cluster in use (%)", json::json_pointer("/overall/utilization")},
      {"queueing delay mean (s)", json::json_pointer("/overall/queueingDelaySeconds/mean")},
      {"queueing delay p95 (s)", json::json_pointer("/overall/queueingDelaySeconds/p95")},
      {"completion time p50 (s)", json::json_pointer("/overall/jobCompletionSeconds/p50")},
      {"preemptions", json::json_pointer("/overall/preemptions")},
      {"lost GPU-hours", json::json_pointer("/overall/lostGpuHours")},
      {"waited within guarantee (h)", json::json_pointer("/overall/waitedWithinGuaranteeHours")},
      {"Jain's fairness index", json::json_pointer("/jainFairness")}};
  for (const auto& [name, at] : rows) {
    out << "<tr><td>" << name << "</td>";
    std::vector<double> v;
    for (const json& s : summaries) {
      const json& x = s.contains(at) ? s[at] : json();
      const double scale = name.find("(%)") != std::string::npos ? 100 : 1;
      if (x.is_number()) v.push_back(x.get<double>() * scale);
      out << "<td>" << (x.is_number() ? Fixed(x.get<double>() * scale, 2) : "-") << "</td>";
    }
    out << "<td>" << (v.size() == summaries.size() && v.size() > 1 ? Fixed(v[1] - v[0], 2) : "-") << "</td></tr>\n";
  }
  out << "</table>\n";
}

}  // namespace

void WriteHtml(const std::vector<const Replay*>& replays, std::ostream& out) {
  Head(replays, out);
  Violations(replays, out);
  std::vector<json> summaries;
  for (const Replay* r : replays) summaries.push_back(Summarize(*r));
  if (replays.size() > 1) {
    Comparison(replays, summaries, out);
    std::vector<std::pair<std::string, std::vector<double>>> curves;
    for (const Replay* r : replays) curves.emplace_back(r->label, Delays(*r, nullptr));
    DelayCdf(curves, "delay-cdf-compare", out);
  }
  for (size_t n = 0; n < replays.size(); ++n) {
    const Replay& r = *replays[n];
    out << "<h2>" << Escape(r.label) << "</h2>\n<p>" << r.jobs.size() << " jobs"
        << (r.epoch.empty() ? "" : " from " + Escape(r.epoch)) << ", " << r.passes << " engine passes in "
        << Fixed(r.wall_seconds) << " s.</p>\n";
    Table(summaries[n], n, out);
    Utilization(r, n, out);
    std::vector<std::pair<std::string, std::vector<double>>> curves;
    for (const std::string& team : r.teams) curves.emplace_back(team, Delays(r, &team));
    DelayCdf(curves, "delay-cdf-" + std::to_string(n), out);
  }
  out << "</body></html>\n";
}

}  // namespace rota::replay
