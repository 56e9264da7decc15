#pragma once

// A pass's count of each queue's workloads once its decisions are applied: pending (waiting for
// quota, or inadmissible as things are), admitted, and the admitted usage by flavor and
// resource. Queue status and queue metrics are made from it.
//
// Workloads are counted by their queues' numbers (SnapshotBuilder::QueueNumbers) rather than by
// name, and what an admitted workload adds is kept from pass to pass while its snapshot entry
// stays the same (SnapshotBuilder::StampOf): reading every admission's flavors and usage by name
// again each pass was a large part of the loop's work. An admitted workload whose admission
// names another ClusterQueue than its LocalQueue points to now is counted by name.
//
// Loop thread only.

#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rota/admission/engine.h"
#include "rota/api/snapshot.h"
#include "scheduling/tuning.h"

namespace rota::controller {

struct QueueCounts {
  int32_t pending = 0, admitted = 0;
  // Of `pending`, by the pass's reason (ClusterQueues only): waiting for quota, or not
  // admissible as things are (Kueue's "active" and "inadmissible" pending workloads).
  int32_t waiting = 0, inadmissible = 0;
  std::map<std::pair<std::string_view, std::string_view>, int64_t> usage;  // (flavor, resource) -> milli
  bool idle() const { return pending == 0 && admitted == 0; }
};
// A queue's pending and admitted counts and usage kept past the pass (owning its strings), to
// tell whether a later pass's are the same.
struct CountsMemo {
  int32_t pending = 0, admitted = 0;
  std::vector<std::tuple<std::string, std::string, int64_t>> usage;  // (flavor, resource, milli)

  static CountsMemo Of(const QueueCounts& c);
  bool Same(const QueueCounts& c) const;
};

// By queue name: a ClusterQueue's, or a LocalQueue's "namespace/name". The views point into the
// builder's snapshot and queue names and the tally's key table, unchanged until the next Count.
using CountsByName = std::unordered_map<std::string_view, QueueCounts>;

// The counts of `name`, or empty ones when it has none.
const QueueCounts& CountsOf(const CountsByName& counts, std::string_view name);

class QueueTally {
 public:
  explicit QueueTally(const SchedulingTuning& tuning) : max_usage_keys_(tuning.max_usage_keys) {}

  struct Result {
    CountsByName cluster_queues, local_queues;
    size_t waiting = 0;  // workloads waiting for quota, in all
  };
  // The counts over the builder's snapshot, to which the pass's decisions `d` have been applied
  // (admissions set and cleared), with each pending workload's reason from `d`.
  Result Count(const api::SnapshotBuilder& builder, const admission::Decisions& d);

 private:
  // What an admitted workload adds to its queues' counts, made from the snapshot's entry i and
  // kept while the entry's stamp stays the same. Flavor and resource are a number in the key
  // table, so that counting compares numbers.
  struct EntryUsage {
    uint64_t stamp = 0;
    bool in_own_cluster_queue = false;                // its admission names the ClusterQueue its LocalQueue points to
    std::vector<std::pair<uint32_t, int64_t>> usage;  // (usage key, milli)
  };
  struct Tally {
    int32_t pending = 0, waiting = 0, inadmissible = 0, admitted = 0;
    std::vector<std::pair<uint32_t, int64_t>> usage;  // (usage key, milli); few: a list
  };
  EntryUsage UsageOf(const api::SnapshotBuilder& builder, size_t i);
  void AddAdmitted(QueueCounts& c, const Tally& t) const;
  void Merge(QueueCounts& c, const Tally& t) const;

  size_t max_usage_keys_;
  std::vector<EntryUsage> entry_usage_;
  std::map<std::pair<std::string, std::string>, uint32_t> usage_key_numbers_;  // (flavor, resource) -> number
  std::vector<const std::pair<std::string, std::string>*> usage_keys_;         // by number: its key there
};

}  // namespace rota::controller
