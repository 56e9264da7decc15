#include "scheduling/stopped_queues.h"

#include <gtest/gtest.h>

namespace rota::controller {
namespace {

using api::Json;
using namespace std::chrono_literals;

// ml/a, admitted in ClusterQueue team, Evicted=True when `evicted`.
api::Workload Admitted(bool evicted) {
  Json doc = Json::parse(R"({"metadata": {"name": "a", "namespace": "ml"}, "spec": {"queueName": "gpu",
      "podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": [{"name": "c"}]}}}]},
      "status": {"admission": {"clusterQueue": "team", "podSetAssignments": []}, "conditions": []}})");
  if (evicted) {
    doc["status"]["conditions"].push_back({{"type", "Evicted"},
                                           {"status", "True"},
                                           {"reason", "ClusterQueueStopped"},
                                           {"message", "The ClusterQueue is stopped"},
                                           {"lastTransitionTime", "2026-11-01T10:00:00Z"}});
  }
  return *api::DecodeObject<api::Workload>(doc);
}

std::vector<Drained> OneDrain() { return {Drained{"ml/a", "team", "ClusterQueueStopped", {}, true}}; }

// A drain that keeps the quota is written once, not again by the passes before the cache shows
// it; a drain the cache never shows (its write failed) is made again after a while.
TEST(DrainsInFlightTest, ADrainIsWrittenOnceUntilTheCacheShowsIt) {
  DrainsInFlight in_flight;
  const apiclient::Clock::TimePoint t0{};
  api::Workload cached = Admitted(false);
  auto object_of = [&](const std::string& key) { return key == "ml/a" ? &cached : nullptr; };
  std::vector<Drained> d = OneDrain();
  in_flight.Filter(d, object_of, t0);
  EXPECT_EQ(d.size(), 1u) << "the first drain is written";
  d = OneDrain();
  in_flight.Filter(d, object_of, t0 + 1s);
  EXPECT_TRUE(d.empty()) << "not again while its write is on its way";
  d = OneDrain();
  in_flight.Filter(d, object_of, t0 + 11s);
  EXPECT_EQ(d.size(), 1u) << "made again when the cache never showed it";

  cached = Admitted(true);  // the cache shows the eviction: forgotten (the next drain is new)
  d = OneDrain();
  in_flight.Filter(d, object_of, t0 + 12s);
  EXPECT_EQ(d.size(), 1u);
}

}  // namespace
}  // namespace rota::controller
