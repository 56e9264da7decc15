#pragma once

// The admission engine's input: everything it needs to decide, as plain values. Built by the
// caller (the controller from its informers, `rota simulate` from files); the engine never reads
// anything else. Quantities are exact milli-units (rota::Quantity::milli()); times are opaque
// ordered integers (e.g. Unix seconds) that the engine only compares.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rota::admission {

// Per-pod (or per-pod-set) resource amounts: resource name -> milli-units.
using ResourceAmounts = std::map<std::string, int64_t>;

enum class TaintEffect { kNoSchedule, kPreferNoSchedule, kNoExecute };

struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::kNoSchedule;
  friend bool operator==(const Taint&, const Taint&) = default;
};

struct Toleration {
  std::string key;      // empty with exists: tolerates every taint
  bool exists = false;  // operator Exists (true) or Equal (false)
  std::string value;
  std::optional<TaintEffect> effect;  // absent: every effect
};

struct FlavorSpec {
  std::string name;
  std::map<std::string, std::string> node_labels;
  std::vector<Taint> node_taints;
  friend bool operator==(const FlavorSpec&, const FlavorSpec&) = default;
};

struct QuotaSpec {
  std::string resource;
  int64_t nominal = 0;
  std::optional<int64_t> borrowing_limit;  // absent: unlimited
  std::optional<int64_t> lending_limit;    // absent: all of the nominal quota may be lent
  friend bool operator==(const QuotaSpec&, const QuotaSpec&) = default;
};

struct FlavorQuotaSpec {
  std::string flavor;
  std::vector<QuotaSpec> resources;
  friend bool operator==(const FlavorQuotaSpec&, const FlavorQuotaSpec&) = default;
};

struct ResourceGroupSpec {
  std::vector<std::string> covered_resources;
  std::vector<FlavorQuotaSpec> flavors;  // in order of preference
  friend bool operator==(const ResourceGroupSpec&, const ResourceGroupSpec&) = default;
};

struct CohortSpec {
  std::string name;
  std::string parent;  // empty: a root
  std::vector<ResourceGroupSpec> resource_groups;
  int64_t fair_weight_milli = 1000;
  friend bool operator==(const CohortSpec&, const CohortSpec&) = default;
};

enum class QueueingStrategy { kStrictFIFO, kBestEffortFIFO };
enum class FungibilityPolicy { kMayStopSearch, kTryNextFlavor };
enum class FungibilityPreference { kBorrowingOverPreemption, kPreemptionOverBorrowing };
enum class WithinClusterQueue { kNever, kLowerPriority, kLowerOrNewerEqualPriority };
enum class ReclaimWithinCohort { kNever, kLowerPriority, kAny };
enum class BorrowWithinCohort { kNever, kLowerPriority };

struct ClusterQueueSpec {
  std::string name;
  std::string cohort;  // empty: no cohort (no borrowing or lending)
  std::vector<ResourceGroupSpec> resource_groups;
  QueueingStrategy queueing_strategy = QueueingStrategy::kBestEffortFIFO;
  FungibilityPolicy when_can_borrow = FungibilityPolicy::kMayStopSearch;
  FungibilityPolicy when_can_preempt = FungibilityPolicy::kTryNextFlavor;
  std::optional<FungibilityPreference> preference;
  WithinClusterQueue within_cluster_queue = WithinClusterQueue::kNever;
  ReclaimWithinCohort reclaim_within_cohort = ReclaimWithinCohort::kNever;
  BorrowWithinCohort borrow_within_cohort = BorrowWithinCohort::kNever;
  std::optional<int32_t> borrow_max_priority_threshold;
  bool stopped = false;  // stopPolicy Hold or HoldAndDrain: admits nothing new
  int64_t fair_weight_milli = 1000;
  // Why its spec cannot be used, or "": such a queue admits nothing and holds no quota of its own.
  std::string invalid;
  // Minimum runtime (seconds, 0: none): its workloads admitted less than this long before
  // Snapshot::now are not preempted by higher priority in this queue (preempt) or reclaimed by
  // another queue of the cohort (reclaim).
  int64_t preempt_min_runtime = 0;
  int64_t reclaim_min_runtime = 0;
  friend bool operator==(const ClusterQueueSpec&, const ClusterQueueSpec&) = default;
};

struct NodeSelectorRequirement {
  enum class Op { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };
  std::string key;
  Op op = Op::kIn;
  std::vector<std::string> values;
};

struct PodSetSpec {
  std::string name = "main";
  int32_t count = 1;
  std::optional<int32_t> min_count;  // partial admission allowed down to this count
  ResourceAmounts per_pod;           // requests of one pod (containers, init, overhead)
  std::map<std::string, std::string> node_selector;
  // Required node affinity: a list of terms, ORed; each term's requirements are ANDed.
  std::vector<std::vector<NodeSelectorRequirement>> required_affinity;
  std::vector<Toleration> tolerations;
};

struct PodSetAdmission {
  std::string name;
  int32_t count = 0;
  std::map<std::string, std::string> flavors;  // resource -> flavor
  ResourceAmounts usage;                       // total over `count` pods
};

struct AdmissionSpec {
  std::string cluster_queue;
  std::vector<PodSetAdmission> pod_sets;
};

// A budget's remainder that admissions draw on, in the unit of its charges (e.g. milli
// GPU-seconds), and the words a workload that does not fit in it is given.
struct BudgetPool {
  int64_t remaining = 0;
  std::string message;
};

struct BudgetCharge {
  uint32_t pool = 0;  // index into Snapshot::budget_pools
  int64_t amount = 0;
};

struct WorkloadSpec {
  std::string key;            // "namespace/name": unique, and the final tie-breaker in ordering
  std::string cluster_queue;  // resolved from its LocalQueue; empty when it could not be
  int32_t priority = 0;
  bool preemptible = true;  // false: critical tier, never a victim, never borrows
  int64_t creation_time = 0;
  std::vector<PodSetSpec> pod_sets;
  // Set when the workload holds quota. An admitted workload is never re-scheduled.
  std::optional<AdmissionSpec> admission;
  int64_t admission_time = 0;  // when it got its admission; later ones are preempted first
  // When it last saved a checkpoint (0: never): a victim loses the work done since the later of
  // this and its admission.
  int64_t last_checkpoint = 0;
  bool evicted = false;  // being evicted but still holding quota: a victim of first choice
  // Why the caller already knows it cannot be admitted (no LocalQueue, namespace not selected,
  // ...): passed through as the pending reason and message.
  std::string inadmissible_reason;
  std::string inadmissible_message;
  // Its look-alike class, when the snapshot's maker knows it (admission::ShapeTable): workloads
  // with the same nonzero `shape` have the same `preemptible` and equal pod sets (names, counts,
  // minCounts, per-pod requests), none of which has a node selector, affinity or toleration. The
  // engine then tells look-alikes apart by this number instead of comparing their pod sets on
  // every pass. 0: not known (the engine compares).
  uint32_t shape = 0;
  // False: it is admitted only into free capacity and preempts no one (a queue over a BestEffort
  // budget: the maker also gives it the lowest priority, so that it goes last and is the first
  // victim).
  bool may_preempt = true;
  // What its admission draws from Snapshot::budget_pools (a budget with requireFit): it waits,
  // with reason BudgetExhausted, unless every pool still holds its charge.
  std::vector<BudgetCharge> budget_charges;
  // Its LocalQueue in Snapshot::fair_queues when its ClusterQueue orders by admission fair
  // sharing (Kueue's UsageBasedAdmissionFairSharing); -1 otherwise.
  int32_t fair_queue = -1;
};

// Kueue's admission fair sharing: within a ClusterQueue whose admissionScope asks for it, the
// pending workloads of the LocalQueue with the least recent usage go first (then scheduling
// order). Each workload taken from a LocalQueue adds its entry penalty to that queue's usage, so
// that one queue's backlog does not take every admission of a pass.
struct FairQueue {
  double usage = 0;   // its decayed usage, resource-weighted (and any penalty not yet sampled)
  double weight = 1;  // LocalQueue spec.fairSharing.weight; usage / weight is compared
};
struct AdmissionFairSharing {
  std::vector<FairQueue> queues;
  std::map<std::string, double> resource_weights;  // absent: 1
  double entry_penalty = 0;                        // the share of a workload's requests added to its queue's usage
};

struct Snapshot {
  std::vector<FlavorSpec> flavors;
  std::vector<CohortSpec> cohorts;  // cohorts named only by ClusterQueues exist implicitly
  std::vector<ClusterQueueSpec> cluster_queues;
  std::vector<WorkloadSpec> workloads;  // pending and admitted
  // Instead of `workloads` (used when that is empty): the workloads where the maker keeps them,
  // unchanged while the pass runs and its decisions are read. Indices (`order`,
  // PendingDecision::index) then count in this list.
  std::vector<const WorkloadSpec*> workload_refs;
  bool fair_sharing = false;
  std::vector<BudgetPool> budget_pools;         // what WorkloadSpec::budget_charges draw on
  AdmissionFairSharing admission_fair_sharing;  // WorkloadSpec::fair_queue indexes its queues
  // The time of the pass, in the unit of the workloads' times: victims are chosen by the work they
  // lose up to now, and minimum runtimes are measured to it. 0: not known (no minimum runtime
  // applies, and victims are chosen by Kueue's order alone).
  int64_t now = 0;
  // Optional: every index of `workloads` once, in scheduling order (InSchedulingOrder). A maker
  // that keeps its snapshot from pass to pass can keep this order too, and spare each pass the
  // sort of thousands of waiting workloads. Empty, or not a permutation of the indices: the
  // engine sorts. An order that is a permutation but not this order makes the pass consider
  // workloads in that order instead.
  std::vector<uint32_t> order;
};

// The scheduling order: higher priority first, then earlier creation, then key. For a
// WorkloadSpec, or any entry with those three fields (the engine sorts compact copies of them).
template <typename Entry>
bool InSchedulingOrder(const Entry& a, const Entry& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.creation_time != b.creation_time) return a.creation_time < b.creation_time;
  return a.key < b.key;
}

}  // namespace rota::admission
