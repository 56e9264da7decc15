#pragma once

// From API objects to the admission engine's Snapshot: resolves LocalQueues and priority classes,
// computes pod requests from pod templates as Kubernetes does, and turns quantities into exact
// milli-units. Shared by the controller (from its informers) and `rota simulate` (from files).

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "rota/admission/engine.h"
#include "rota/admission/snapshot.h"
#include "rota/admission/status.h"
#include "rota/api/budget.h"
#include "rota/api/codec.h"
#include "rota/api/kueue.h"

namespace rota::api {

// Kueue's admissionFairSharing config: a LocalQueue's usage decays by half every
// `usage_half_life` seconds and is sampled every `usage_sampling_interval` seconds; resources
// count by their weight (absent: 1).
struct AdmissionFairSharingConfig {
  int64_t usage_half_life = 0;
  int64_t usage_sampling_interval = 300;
  std::map<std::string, double> resource_weights;
};

// A LocalQueue's decayed usage (resource -> units) as of `last_update` (Unix seconds).
struct LocalQueueUsage {
  std::map<std::string, double> consumed;
  int64_t last_update = 0;
  friend bool operator==(const LocalQueueUsage&, const LocalQueueUsage&) = default;
};

// The share of a workload's requests that its admission adds to its LocalQueue's usage until the
// next sample (Kueue's entry penalty): 1 - 0.5^(sampling / half-life); 0 without a half-life.
double EntryPenaltyFactor(const AdmissionFairSharingConfig& config);

// Everything the engine's input is built from.
struct ClusterState {
  std::vector<ResourceFlavor> flavors;
  std::vector<Cohort> cohorts;
  std::vector<ClusterQueue> cluster_queues;
  std::vector<LocalQueue> local_queues;
  std::vector<WorkloadPriorityClass> priority_classes;
  // Shared and read-only: a controller passes its cache's objects without copying them.
  std::vector<std::shared_ptr<const Workload>> workloads;
  // Namespace labels, for ClusterQueue namespaceSelectors. A namespace not listed has only its
  // well-known label kubernetes.io/metadata.name.
  std::map<std::string, std::map<std::string, std::string>> namespace_labels;
  bool fair_sharing = false;
  // Seconds since the epoch, for requeueState.requeueAt (a workload evicted with backoff waits
  // until then). 0: ignore requeueAt.
  int64_t now = 0;
  // Minimum runtime (seconds) of every ClusterQueue that does not name its own with the
  // annotations rota.dev/preempt-min-runtime / rota.dev/reclaim-min-runtime.
  int64_t default_min_runtime = 0;
  // A workload rota cannot read (a quantity beyond int64 milli-units, a malformed time) fails
  // the whole snapshot unless this is set; then it stays pending, Inadmissible, with the error
  // as its message, so that one bad object cannot stop admission for everyone (the controller).
  bool keep_going = false;
  // By ClusterQueue name: the budgets that apply to it (docs/budgets.md). An exhausted Hold
  // budget keeps its new workloads pending (reason BudgetExhausted); an exhausted BestEffort one
  // makes them the lowest priority, admitted only into free capacity; requireFit pools charge
  // each admission its maximumExecutionTimeSeconds x resources.
  std::map<std::string, std::vector<BudgetGate>> budget_gates;
  // Admission fair sharing, when configured: the workloads of a ClusterQueue with admissionScope
  // UsageBasedAdmissionFairSharing go by their LocalQueues' usage (by "namespace/name"; a queue
  // not listed has used nothing), plus the entry penalty of each admission since its last sample.
  std::optional<AdmissionFairSharingConfig> admission_fair_sharing;
  std::map<std::string, LocalQueueUsage> local_queue_usage;
};

// The requests of one pod of `pod_template` (a PodTemplateSpec): the sum over containers (a
// request defaults to the limit when only the limit is set), at least each init container's
// (restartable sidecar init containers add to the sum), plus the pod overhead. Errors name the
// field under `path`.
Result<admission::ResourceAmounts> PodRequests(const Json& pod_template, const std::string& path);

// Seconds since the Unix epoch of an RFC 3339 time as the apiserver writes it
// ("2026-11-01T10:00:00Z", optionally with fractional seconds or an offset); 0 when empty.
Result<int64_t> ParseTime(const std::string& rfc3339);
// The other way round: "2026-11-01T10:00:00Z" for Unix seconds (UTC).
std::string FormatTime(int64_t unix_seconds);

// Builds the engine's snapshot. Workloads that are Finished are left out; workloads that cannot
// be queued (no LocalQueue, namespace not selected, inactive, unknown priority class) are passed
// with the reason and message a person will see. Errors name the object and the field.
Result<admission::Snapshot> BuildSnapshot(const ClusterState& state);

// The engine's snapshot kept from one build to the next, for a caller that builds it again and
// again from a cache (the controller, every pass), where making every workload's entry anew was
// most of a pass. A workload's entry is made again only when
// - its object is not the one of the last build (an informer replaces the object on every
//   change; the builder holds the objects it used, so an address is never reused meanwhile),
// - something it is resolved against changed (ClusterQueues, LocalQueues and priority classes by
//   name and generation, or resourceVersion when they have no generation; namespaces by their
//   labels),
// - it waits for a requeue time (the answer depends on state.now), or
// - the caller changed its entry (Mutable);
// and its pod templates are read again only when its uid or generation changed. The snapshot
// holds the same entries as BuildSnapshot's with keep_going (in another order), and gives their
// scheduling order (admission::Snapshot::order), kept from build to build: only new entries and
// entries whose priority or creation time changed are sorted and put in their places, where
// sorting every waiting workload again was a noticeable part of a pass. Not thread-safe.
class SnapshotBuilder {
 public:
  SnapshotBuilder() = default;
  // Not copied or moved: its index of keys refers to the builder itself.
  SnapshotBuilder(const SnapshotBuilder&) = delete;
  SnapshotBuilder& operator=(const SnapshotBuilder&) = delete;

  // Brings snapshot() up to `state` (whose keep_going is implied). An error (a ClusterQueue the
  // engine cannot use) names the object and field; snapshot() is then not to be used until a
  // later Build succeeds.
  Status Build(const ClusterState& state);
  const admission::Snapshot& snapshot() const { return snapshot_; }

  // For a caller that walks its cache before every build: tells the next Build that `object`
  // is still there, unchanged, when the builder holds it from an earlier build; that Build then
  // keeps its entry although `object` is not in its state.workloads, which spares the caller a
  // shared_ptr copy of each of thousands of objects per pass (their reference counts cost a
  // cache miss each). False when the builder does not hold it, or holds it for an entry to be
  // made again: it must then be in state.workloads. `place` is where the caller found it (its
  // cache's position, below a few times the number of workloads): where the object is the one
  // found there the last time, it is known without a hash lookup.
  bool StillHas(const Workload* object, size_t place);

  // By workload key ("namespace/name"), in the last build; null when it has no such workload.
  const Workload* Object(const std::string& key) const;
  const admission::WorkloadSpec* Find(const std::string& key) const;
  // The entry to change (before scheduling, or to apply a pass's decisions to it); it is made
  // again from its object at the next build. Its priority, creation time and key are not to be
  // changed: the snapshot's order keeps its place by them until the next build.
  admission::WorkloadSpec* Mutable(const std::string& key);
  // The object and the LocalQueue ("namespace/name") of snapshot().workloads[i].
  const Workload& ObjectAt(size_t i) const { return *slots_[i].object; }
  const std::string& LocalQueueOf(size_t i) const { return QueueName(slots_[i].local_queue); }

  // Queue names as numbers below QueueNumbers(), for a caller that counts workloads by queue
  // after every build (a pass counts thousands of pending workloads, and a hash of each one's
  // queue names cost more than the rest of the count). A number stays the same name until the
  // next build; kNoQueue stands for none.
  static constexpr uint32_t kNoQueue = UINT32_MAX;
  size_t QueueNumbers() const { return queue_names_.size(); }
  const std::string& QueueName(uint32_t n) const { return queue_names_[n]; }
  // Of snapshot().workloads[i]: its LocalQueue's, and the ClusterQueue that LocalQueue points to
  // (WorkloadSpec::cluster_queue, kNoQueue when empty) as resolved at the build.
  uint32_t LocalQueueNumberOf(size_t i) const { return slots_[i].local_queue; }
  uint32_t ClusterQueueNumberOf(size_t i) const { return slots_[i].cluster_queue; }

  // A number that changes whenever snapshot().workloads[i] is made again or given out by
  // Mutable, and is never given to another entry: a caller that derives something from an entry
  // after every build (a pass counts each admitted workload's usage) can keep what it derived
  // for as long as the entry's stamp stays the same. Never 0.
  uint64_t StampOf(size_t i) const { return slots_[i].stamp; }

 private:
  struct Slot {
    std::shared_ptr<const Workload> object;
    uint32_t local_queue = kNoQueue;  // numbers of queue_names_
    uint32_t cluster_queue = kNoQueue;
    bool remake = false;         // make the entry again at the next build
    bool pod_sets_read = false;  // the entry's pod sets can be reused at the same generation
    bool placed = false;         // in snapshot_.order, by the entry's priority and creation time
    uint64_t seen = 0;           // the last build whose state had it
    uint32_t hint = kNoHint;     // its place in hints_, if it has one
    uint64_t stamp = 0;          // StampOf
  };
  admission::Snapshot snapshot_;
  std::vector<Slot> slots_;  // slots_[i] belongs to snapshot_.workloads[i]
  // Where each slot is in snapshot_.order (order_pos_[i] for slots_[i], when placed).
  std::vector<uint32_t> order_pos_;
  // The build StillHas last vouched for each slot for (vouched_[i] for slots_[i]).
  std::vector<uint64_t> vouched_;
  // By the caller's place (StillHas): the object last vouched for there and its slot, while that
  // slot holds it unchanged (an entry is cleared when its slot's object changes or goes, so that
  // an address reused by a new object never matches).
  struct Hint {
    const Workload* object = nullptr;
    uint32_t slot = 0;
  };
  static constexpr uint32_t kNoHint = UINT32_MAX;
  std::vector<Hint> hints_;
  void Unhint(size_t slot);
  static constexpr uint32_t kGone = UINT32_MAX;  // an order entry whose slot left or moved on
  // Puts the slots not placed into snapshot_.order and drops its kGone entries.
  void PlaceInOrder();
  std::unordered_map<const Workload*, size_t> by_object_;
  // Slots by their entry's key, hashed and compared through snapshot_.workloads, so that each
  // key is held once, in its entry, not again in a map of copies. A slot's entry keeps its key
  // from when it joins the set until it leaves it.
  struct KeyHash {
    using is_transparent = void;
    const SnapshotBuilder* builder;
    // (Not noexcept: libstdc++ then keeps each slot's hash in the set, and a rehash reads no keys.)
    size_t operator()(std::string_view key) const { return std::hash<std::string_view>()(key); }
    size_t operator()(uint32_t slot) const { return (*this)(builder->snapshot_.workloads[slot].key); }
  };
  struct KeyEqual {
    using is_transparent = void;
    const SnapshotBuilder* builder;
    bool operator()(uint32_t a, uint32_t b) const { return a == b; }  // (keys are unique)
    bool operator()(std::string_view key, uint32_t slot) const { return key == builder->snapshot_.workloads[slot].key; }
    bool operator()(uint32_t slot, std::string_view key) const { return (*this)(key, slot); }
  };
  std::unordered_set<uint32_t, KeyHash, KeyEqual> by_key_{0, KeyHash{this}, KeyEqual{this}};
  // The slot of the entry with `key`, or null.
  const uint32_t* SlotOf(std::string_view key) const;
  uint32_t NumberOf(std::string_view queue_name);
  // Numbers every slot's queues again from scratch (once names no slot uses have piled up).
  void RenumberQueues();
  std::deque<std::string> queue_names_;                           // by number; a deque keeps them in place
  std::unordered_map<std::string_view, uint32_t> queue_numbers_;  // views into queue_names_
  admission::ShapeTable shapes_;  // the entries' shape numbers, for as long as the builder lives
  std::string resolved_against_;
  uint64_t builds_ = 0;
  uint64_t stamps_ = 0;  // the last stamp given
};

}  // namespace rota::api
