#pragma once

// Kueue's Prometheus metrics of a pass (Kueue's pkg/metrics): counters and histograms of its
// admissions and evictions, and per ClusterQueue the gauges of the state after it.
//
// A ClusterQueue's gauges are made again only when its spec or counts change; when only its
// counts change, the series that follow them are set in place through slots kept in its memo, so
// that a thousand busy queues do not cost a thousand sets of label sets every pass. The gauges of
// a queue gone are dropped.
//
// Loop thread only.

#include <string>
#include <unordered_map>
#include <vector>

#include "metrics.h"
#include "rota/admission/engine.h"
#include "rota/api/snapshot.h"
#include "scheduling/queue_tally.h"
#include "scheduling/stopped_queues.h"

namespace rota::controller {

// Gauge series by metric name and labels.
using GaugeSeries = std::vector<std::pair<const char*, Labels>>;

class QueueMetrics {
 public:
  explicit QueueMetrics(Metrics& metrics) : m_(metrics) {}

  // One pass: `state` and `builder` as the pass left them (its decisions applied), `counts` its
  // ClusterQueues' tally, `pass_seconds` how long the pass took to decide and `now_seconds` the
  // wall time (for the admitted workloads' wait since creation).
  void Record(const api::ClusterState& state, const api::SnapshotBuilder& builder, const admission::Decisions& d,
              const std::vector<Drained>& drained, const CountsByName& counts, double pass_seconds, double now_seconds);

 private:
  void RecordDecisions(const api::SnapshotBuilder& builder, const admission::Decisions& d,
                       const std::vector<Drained>& drained, double pass_seconds, double now_seconds);
  void RecordGauges(const api::ClusterState& state, const CountsByName& counts);
  // Makes all of a ClusterQueue's gauge series into `gauges`, with `values` for those that
  // follow its counts (`flavors_found`: every flavor it names exists); returns those (kept to
  // find their slots once the registry holds them).
  GaugeSeries MakeSeries(const api::ClusterQueue& cq, const std::vector<double>& values, bool flavors_found,
                         Metrics::GaugeValues& gauges) const;

  // What each ClusterQueue's gauges were last made from: the spec's generation (or
  // resourceVersion) and the counts.
  struct GaugeMemo {
    std::string version;
    int32_t waiting = 0, inadmissible = 0;
    CountsMemo counts;
    // Where the registry keeps the series that follow the counts; valid until the queue's series
    // are replaced. Empty: the series are made again on the next change.
    std::vector<Metrics::GaugeSlot> slots;
    bool Same(const QueueCounts& c) const {
      return waiting == c.waiting && inadmissible == c.inadmissible && counts.Same(c);
    }
    void Set(const QueueCounts& c) {
      waiting = c.waiting;
      inadmissible = c.inadmissible;
      counts = CountsMemo::Of(c);
    }
  };
  Metrics& m_;
  std::unordered_map<std::string, GaugeMemo> gauge_memo_;
};

}  // namespace rota::controller
