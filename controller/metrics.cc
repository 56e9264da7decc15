#include "metrics.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace rota::controller {
namespace {

std::string Escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out;
}

std::string LabelText(const Labels& labels, const std::string& extra_key = "", const std::string& extra = "") {
  std::string out;
  for (const auto& [k, v] : labels) out += (out.empty() ? "" : ",") + k + "=\"" + Escape(v) + "\"";
  if (!extra_key.empty()) out += (out.empty() ? "" : ",") + extra_key + "=\"" + extra + "\"";
  return out.empty() ? "" : "{" + out + "}";
}

std::string Number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

Metrics::Metrics() {
  const std::vector<double> wait = {1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 10800, 43200, 86400};
  Define("rota_budget_used_hours", Type::kGauge, "Hours used in the current window, per 'budget' and 'resource'");
  Define("rota_budget_limit_hours", Type::kGauge, "The hours a budget allows per window, per 'budget' and 'resource'");
  Define("rota_budget_exhausted", Type::kGauge, "1 while a 'budget' is used up, else 0");
  Define("kueue_pending_workloads", Type::kGauge, "The number of pending workloads, per 'cluster_queue' and 'status'");
  Define("kueue_quota_reserved_workloads_total", Type::kCounter,
         "The total number of quota reserved workloads per 'cluster_queue'");
  Define("kueue_admitted_workloads_total", Type::kCounter,
         "The total number of admitted workloads per 'cluster_queue'");
  Define("kueue_evicted_workloads_total", Type::kCounter,
         "The number of evicted workloads per 'cluster_queue' and 'reason'");
  Define("kueue_preempted_workloads_total", Type::kCounter,
         "The number of preempted workloads per 'preempting_cluster_queue' and 'reason'");
  Define("kueue_admission_wait_time_seconds", Type::kHistogram,
         "The time between a workload was created or requeued until admission, per 'cluster_queue'", wait);
  Define("kueue_quota_reserved_wait_time_seconds", Type::kHistogram,
         "The time between a workload was created or requeued until it got quota reservation, per 'cluster_queue'",
         wait);
  Define("kueue_admission_attempts_total", Type::kCounter,
         "The total number of attempts to admit workloads, per 'result' (success or inadmissible)");
  Define("kueue_admission_attempt_duration_seconds", Type::kHistogram,
         "The latency of an admission attempt (one scheduling pass), per 'result'",
         {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5});
  Define("kueue_cluster_queue_resource_usage", Type::kGauge,
         "Reports the cluster_queue's total resource usage, per 'flavor' and 'resource'");
  Define("kueue_cluster_queue_resource_reservation", Type::kGauge,
         "Reports the cluster_queue's total resource reservation, per 'flavor' and 'resource'");
  Define("kueue_cluster_queue_nominal_quota", Type::kGauge,
         "Reports the cluster_queue's nominal quota, per 'flavor' and 'resource'");
  Define("kueue_cluster_queue_borrowing_limit", Type::kGauge,
         "Reports the cluster_queue's borrowing limit, per 'flavor' and 'resource'");
  Define("kueue_cluster_queue_lending_limit", Type::kGauge,
         "Reports the cluster_queue's lending limit, per 'flavor' and 'resource'");
  Define("kueue_cluster_queue_status", Type::kGauge,
         "Reports the 'cluster_queue' with its 'status' (pending, active or terminated)");
  Define("kueue_reserving_active_workloads", Type::kGauge,
         "The number of workloads reserving quota, per 'cluster_queue'");
  Define("kueue_admitted_active_workloads", Type::kGauge,
         "The number of admitted workloads that are active, per 'cluster_queue'");
  // The webhook server's, with controller-runtime's names (which Kueue exposes).
  Define("controller_runtime_webhook_requests_total", Type::kCounter,
         "Total number of admission requests by HTTP status code, per 'webhook' path and 'code'");
  Define("controller_runtime_webhook_latency_seconds", Type::kHistogram,
         "Time rota took to answer an admission request, per 'webhook' path",
         {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10});
  Define("kueue_build_info", Type::kGauge, "Kueue-compatible build information (rota)");
  // rota's own.
  Define("rota_events_dropped_total", Type::kCounter,
         "Events not written because too many were waiting (Events are best effort)");
  Define("rota_leader", Type::kGauge,
         "1 on the replica that holds the leader Lease and schedules, 0 on one standing by for it");
  Define("rota_status_writes_total", Type::kCounter,
         "Status writes sent by the queue controller, per 'result' (success, error)");
  Define("rota_status_writes_queued", Type::kGauge,
         "Status writes waiting to be sent, per 'priority' (admission, queue, pending)");
  Define("rota_scheduling_batch_seconds", Type::kGauge,
         "How long the scheduler lets changes gather before its next pass: the configured batch period, or more after "
         "a costly pass");
  Define("rota_scheduling_pass_cpu_seconds", Type::kGauge, "CPU time the scheduler's last pass took");
  Define("rota_checkpoint_requests_total", Type::kCounter,
         "Checkpoint requests that ended, per 'cluster_queue' and 'result' (acknowledged, timed_out, cancelled)");
  Define("rota_checkpoint_wait_seconds", Type::kHistogram,
         "Seconds from a checkpoint request to its answer or its deadline",
         {1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600});
  Define("rota_preemption_lost_resource_seconds_total", Type::kCounter,
         "Work thrown away by preemptions: each victim's admitted amount of 'resource' times the seconds since it "
         "last saved its work, per the victim's 'cluster_queue'");
  Define("rota_apiserver_behind", Type::kGauge,
         "1 while admissions wait for the apiserver (queue status and Events are then written at half their rates), "
         "else 0");
}

void Metrics::Define(const std::string& name, Type type, std::string help, std::vector<double> buckets) {
  families_[name] = Family{type, std::move(help), std::move(buckets), {}, {}};
}

void Metrics::Add(const std::string& counter, const Labels& labels, double v) {
  std::lock_guard<std::mutex> l(mu_);
  families_.at(counter).values[labels] += v;
}

void Metrics::Set(const std::string& gauge, const Labels& labels, double v) {
  std::lock_guard<std::mutex> l(mu_);
  families_.at(gauge).values[labels] = v;
}

void Metrics::ReplaceGaugeSeries(const std::vector<std::string>& gauges, const std::string& label,
                                 const std::vector<std::string>& owners, GaugeValues series) {
  std::lock_guard<std::mutex> l(mu_);
  for (const std::string& name : gauges) {
    auto& values = families_.at(name).values;
    for (const std::string& owner : owners) {
      // Label sets compare in order, so an owner's series follow its first label alone.
      auto it = values.lower_bound(Labels{{label, owner}});
      while (it != values.end() && !it->first.empty() && it->first[0].first == label && it->first[0].second == owner) {
        it = values.erase(it);
      }
    }
  }
  // (The new series' nodes move over whole: their label sets are not copied.)
  for (auto& [name, values] : series) {
    auto& family = families_.at(name).values;
    while (!values.empty()) {
      auto moved = family.insert(values.extract(values.begin()));
      if (!moved.inserted) moved.position->second = moved.node.mapped();
    }
  }
}

std::vector<Metrics::GaugeSlot> Metrics::GaugeSlots(const std::vector<std::pair<const char*, Labels>>& series) {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<GaugeSlot> slots;
  slots.reserve(series.size());
  for (const auto& [gauge, labels] : series) {
    auto& values = families_.at(gauge).values;
    auto it = values.find(labels);
    slots.push_back(it == values.end() ? nullptr : &it->second);
  }
  return slots;
}

void Metrics::SetGaugeValues(const std::vector<std::pair<GaugeSlot, double>>& values) {
  std::lock_guard<std::mutex> l(mu_);
  for (const auto& [slot, v] : values)
    if (slot) *slot = v;
}

void Metrics::Observe(const std::string& histogram, const Labels& labels, double v) {
  Observe(histogram, labels, std::vector<double>{v});
}

void Metrics::Observe(const std::string& histogram, const Labels& labels, const std::vector<double>& values) {
  std::lock_guard<std::mutex> l(mu_);
  Family& f = families_.at(histogram);
  auto& h = f.hists[labels];
  if (h.counts.empty()) h.counts.assign(f.buckets.size(), 0);
  for (const double v : values) {
    for (size_t i = 0; i < f.buckets.size(); ++i)
      if (v <= f.buckets[i]) ++h.counts[i];
    h.sum += v;
    ++h.count;
  }
}

std::string Metrics::Render() const {
  std::lock_guard<std::mutex> l(mu_);
  std::ostringstream out;
  for (const auto& [name, f] : families_) {
    out << "# HELP " << name << " " << f.help << "\n";
    out << "# TYPE " << name << " "
        << (f.type == Type::kCounter ? "counter"
            : f.type == Type::kGauge ? "gauge"
                                     : "histogram")
        << "\n";
    for (const auto& [labels, v] : f.values) out << name << LabelText(labels) << " " << Number(v) << "\n";
    for (const auto& [labels, h] : f.hists) {
      for (size_t i = 0; i < f.buckets.size(); ++i) {
        out << name << "_bucket" << LabelText(labels, "le", Number(f.buckets[i])) << " " << h.counts[i] << "\n";
      }
      out << name << "_bucket" << LabelText(labels, "le", "+Inf") << " " << h.count << "\n";
      out << name << "_sum" << LabelText(labels) << " " << Number(h.sum) << "\n";
      out << name << "_count" << LabelText(labels) << " " << h.count << "\n";
    }
  }
  return out.str();
}

}  // namespace rota::controller
