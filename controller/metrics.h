#pragma once

// Prometheus metrics with Kueue's names and labels, so that Kueue's dashboards work on rota. A
// small registry of counters, gauges and histograms keyed by label values, rendered in the
// Prometheus text exposition format (version 0.0.4). Thread-safe.

#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace rota::controller {

using Labels = std::vector<std::pair<std::string, std::string>>;

class Metrics {
 public:
  Metrics();

  void Add(const std::string& counter, const Labels& labels, double v = 1);
  void Set(const std::string& gauge, const Labels& labels, double v);
  using GaugeValues = std::map<std::string, std::map<Labels, double>>;
  // Replaces, at once, the series of the named gauges whose first label is (`label`, one of
  // `owners`) with those in `series` (whose labels start that way); the others stay as they are.
  // For gauges of many objects of which few change at a time.
  void ReplaceGaugeSeries(const std::vector<std::string>& gauges, const std::string& label,
                          const std::vector<std::string>& owners, GaugeValues series);
  // Where a gauge series' value is kept: it stays valid until ReplaceGaugeSeries replaces or
  // drops that series. For series set again and again (a queue's counts, every pass) without
  // making and looking up their label sets each time.
  using GaugeSlot = double*;
  // The slots of the named series (gauge, labels), in order; nullptr for a series that does not
  // exist.
  std::vector<GaugeSlot> GaugeSlots(const std::vector<std::pair<const char*, Labels>>& series);
  // Sets several series by their slots, at once as a scrape sees them.
  void SetGaugeValues(const std::vector<std::pair<GaugeSlot, double>>& values);
  void Observe(const std::string& histogram, const Labels& labels, double v);
  // Many observations of one series at once.
  void Observe(const std::string& histogram, const Labels& labels, const std::vector<double>& values);

  std::string Render() const;

 private:
  enum class Type { kCounter, kGauge, kHistogram };
  struct Family {
    Type type;
    std::string help;
    std::vector<double> buckets;      // histograms
    std::map<Labels, double> values;  // counters and gauges
    struct Hist {
      std::vector<uint64_t> counts;
      double sum = 0;
      uint64_t count = 0;
    };
    std::map<Labels, Hist> hists;
  };
  void Define(const std::string& name, Type type, std::string help, std::vector<double> buckets = {});

  mutable std::mutex mu_;
  std::map<std::string, Family> families_;
};

}  // namespace rota::controller
