#include "scheduling/queue_metrics.h"

#include <algorithm>
#include <map>
#include <unordered_set>

namespace rota::controller {
namespace {

bool MissesFlavor(const api::ClusterQueue& cq, const std::unordered_set<std::string_view>& flavors) {
  for (const auto& g : cq.spec.resource_groups)
    for (const auto& f : g.flavors)
      if (!flavors.count(f.name)) return true;
  return false;
}

using Series = GaugeSeries;

const std::vector<std::string>& GaugeNames() {
  static const std::vector<std::string> kGauges = {"kueue_pending_workloads",
                                                   "kueue_cluster_queue_resource_usage",
                                                   "kueue_cluster_queue_resource_reservation",
                                                   "kueue_cluster_queue_nominal_quota",
                                                   "kueue_cluster_queue_borrowing_limit",
                                                   "kueue_cluster_queue_lending_limit",
                                                   "kueue_cluster_queue_status",
                                                   "kueue_reserving_active_workloads",
                                                   "kueue_admitted_active_workloads"};
  return kGauges;
}

// The series that follow a queue's counts, in the order of CountValues.
Series CountSeries(const api::ClusterQueue& cq) {
  const std::string& name = cq.metadata.name;
  Series series = {{"kueue_pending_workloads", {{"cluster_queue", name}, {"status", "active"}}},
                   {"kueue_pending_workloads", {{"cluster_queue", name}, {"status", "inadmissible"}}},
                   {"kueue_reserving_active_workloads", {{"cluster_queue", name}}},
                   {"kueue_admitted_active_workloads", {{"cluster_queue", name}}}};
  for (const auto& g : cq.spec.resource_groups) {
    for (const auto& f : g.flavors) {
      for (const auto& q : f.resources) {
        const Labels l = {{"cluster_queue", name}, {"flavor", f.name}, {"resource", q.name}};
        series.push_back({"kueue_cluster_queue_resource_usage", l});
        series.push_back({"kueue_cluster_queue_resource_reservation", l});
      }
    }
  }
  return series;
}

std::vector<double> CountValues(const api::ClusterQueue& cq, const QueueCounts& c) {
  std::vector<double> v = {static_cast<double>(c.waiting), static_cast<double>(c.inadmissible),
                           static_cast<double>(c.admitted), static_cast<double>(c.admitted)};
  for (const auto& g : cq.spec.resource_groups) {
    for (const auto& f : g.flavors) {
      for (const auto& q : f.resources) {
        const auto u = c.usage.find({std::string_view(f.name), std::string_view(q.name)});
        const double used = u == c.usage.end() ? 0 : static_cast<double>(u->second) / 1000.0;
        v.push_back(used);
        v.push_back(used);
      }
    }
  }
  return v;
}

}  // namespace

void QueueMetrics::Record(const api::ClusterState& state, const api::SnapshotBuilder& builder,
                          const admission::Decisions& d, const std::vector<Drained>& drained,
                          const CountsByName& counts, double pass_seconds, double now_seconds) {
  RecordDecisions(builder, d, drained, pass_seconds, now_seconds);
  RecordGauges(state, counts);
}

void QueueMetrics::RecordDecisions(const api::SnapshotBuilder& builder, const admission::Decisions& d,
                                   const std::vector<Drained>& drained, double pass_seconds, double now_seconds) {
  for (const Drained& e : drained) {
    m_.Add("kueue_evicted_workloads_total", {{"cluster_queue", e.cluster_queue}, {"reason", e.reason}});
  }
  // Admissions by ClusterQueue, so that each queue's series are updated once a pass.
  struct Admitted {
    double count = 0;
    std::vector<double> waits;  // seconds since creation, of those that have a creation time
  };
  std::map<std::string_view, Admitted> admitted;
  for (const auto& a : d.admitted) {
    Admitted& q = admitted[a.cluster_queue];
    ++q.count;
    const auto* w = builder.Find(a.workload);
    if (w->creation_time > 0) q.waits.push_back(std::max(0.0, now_seconds - static_cast<double>(w->creation_time)));
  }
  for (const auto& [name, q] : admitted) {
    const Labels cq = {{"cluster_queue", std::string(name)}};
    m_.Add("kueue_quota_reserved_workloads_total", cq, q.count);
    m_.Add("kueue_admitted_workloads_total", cq, q.count);
    if (q.waits.empty()) continue;
    m_.Observe("kueue_admission_wait_time_seconds", cq, q.waits);
    m_.Observe("kueue_quota_reserved_wait_time_seconds", cq, q.waits);
  }
  for (const auto& p : d.preempted) {
    m_.Add("kueue_evicted_workloads_total", {{"cluster_queue", p.cluster_queue}, {"reason", "Preempted"}});
    const auto* preemptor = builder.Find(p.preemptor);
    m_.Add("kueue_preempted_workloads_total",
           {{"preempting_cluster_queue", preemptor->cluster_queue}, {"reason", admission::ToString(p.reason)}});
  }
  m_.Add("kueue_admission_attempts_total", {{"result", "success"}}, static_cast<double>(d.admitted.size()));
  m_.Add("kueue_admission_attempts_total", {{"result", "inadmissible"}}, static_cast<double>(d.pending.size()));
  m_.Observe("kueue_admission_attempt_duration_seconds", {{"result", d.admitted.empty() ? "inadmissible" : "success"}},
             pass_seconds);
}

GaugeSeries QueueMetrics::MakeSeries(const api::ClusterQueue& cq, const std::vector<double>& values, bool flavors_found,
                                     Metrics::GaugeValues& gauges) const {
  const std::string& name = cq.metadata.name;
  Series series = CountSeries(cq);
  for (size_t i = 0; i < series.size(); ++i) gauges[series[i].first][series[i].second] = values[i];
  // (Active as its Active condition says: not stopped, a spec rota can use, every flavor there.)
  const bool active = cq.spec.stop_policy == api::StopPolicy::kNone && cq.unusable.empty() && flavors_found;
  for (const std::string st : {"pending", "active", "terminating"}) {
    gauges["kueue_cluster_queue_status"][{{"cluster_queue", name}, {"status", st}}] =
        (st == "active") == active && st != "terminating" ? 1 : 0;
  }
  for (const auto& g : cq.spec.resource_groups) {
    for (const auto& f : g.flavors) {
      for (const auto& q : f.resources) {
        const Labels l = {{"cluster_queue", name}, {"flavor", f.name}, {"resource", q.name}};
        gauges["kueue_cluster_queue_nominal_quota"][l] = static_cast<double>(q.nominal_quota.milli()) / 1000.0;
        if (q.borrowing_limit) {
          gauges["kueue_cluster_queue_borrowing_limit"][l] = static_cast<double>(q.borrowing_limit->milli()) / 1000.0;
        }
        if (q.lending_limit) {
          gauges["kueue_cluster_queue_lending_limit"][l] = static_cast<double>(q.lending_limit->milli()) / 1000.0;
        }
      }
    }
  }
  return series;
}

void QueueMetrics::RecordGauges(const api::ClusterState& state, const CountsByName& counts) {
  Metrics::GaugeValues gauges;
  std::vector<std::string> owners;  // the queues whose series are replaced
  std::vector<std::pair<Metrics::GaugeSlot, double>> by_slot;
  std::vector<std::pair<const api::ClusterQueue*, Series>> remade;  // with their count series
  std::unordered_set<std::string_view> present, flavors;
  for (const auto& f : state.flavors) flavors.insert(f.metadata.name);
  for (const auto& cq : state.cluster_queues) {
    const std::string& name = cq.metadata.name;
    present.insert(name);
    const QueueCounts& c = CountsOf(counts, name);
    // (The spec by its generation, which the status does not move; by resourceVersion without one;
    // and whether a flavor it names is missing, which makes it inactive as its status says.)
    const bool flavor_missing = MissesFlavor(cq, flavors);
    std::string version =
        cq.metadata.generation ? "#" + std::to_string(*cq.metadata.generation) : cq.metadata.resource_version;
    if (flavor_missing && !version.empty()) version += "/flavor-missing";
    auto memo = gauge_memo_.find(name);
    const bool same_spec = memo != gauge_memo_.end() && !version.empty() && memo->second.version == version;
    if (same_spec && memo->second.Same(c)) continue;
    const std::vector<double> values = CountValues(cq, c);
    if (same_spec && memo->second.slots.size() == values.size()) {
      for (size_t i = 0; i < values.size(); ++i) by_slot.emplace_back(memo->second.slots[i], values[i]);
      memo->second.Set(c);
      continue;
    }
    GaugeMemo& fresh = gauge_memo_[name] = GaugeMemo{version};
    fresh.Set(c);
    owners.push_back(name);
    remade.emplace_back(&cq, MakeSeries(cq, values, !flavor_missing, gauges));
  }
  for (auto it = gauge_memo_.begin(); it != gauge_memo_.end();) {
    if (present.count(it->first)) {
      ++it;
      continue;
    }
    owners.push_back(it->first);
    it = gauge_memo_.erase(it);
  }
  if (!by_slot.empty()) m_.SetGaugeValues(by_slot);
  if (!owners.empty()) m_.ReplaceGaugeSeries(GaugeNames(), "cluster_queue", owners, std::move(gauges));
  // The slots of the series just made (should one be missing, the queue's series are made again
  // at its next change rather than set by slot).
  for (const auto& [cq, series] : remade) {
    std::vector<Metrics::GaugeSlot> slots = m_.GaugeSlots(series);
    if (std::find(slots.begin(), slots.end(), nullptr) != slots.end()) slots.clear();
    gauge_memo_[cq->metadata.name].slots = std::move(slots);
  }
}

}  // namespace rota::controller
