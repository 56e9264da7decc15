#pragma once

// The Kueue API objects rota serves and reads (kueue.x-k8s.io/v1beta2), typed for the fields rota
// uses. Field names follow the API (camelCase in JSON, snake_case here); defaults are the CRD
// schema's, so an object decoded from a file that never went through the apiserver behaves as the
// stored object would. Everything untyped survives a round trip in `extra`.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rota/admission/quantity.h"
#include "rota/api/codec.h"
#include "rota/api/meta.h"

namespace rota::api {

inline constexpr std::string_view kGroup = "kueue.x-k8s.io";
inline constexpr std::string_view kVersion = "v1beta2";
inline constexpr std::string_view kApiVersion = "kueue.x-k8s.io/v1beta2";

// Well-known labels and annotations (Kueue's, plus rota's own).
inline constexpr std::string_view kQueueNameLabel = "kueue.x-k8s.io/queue-name";
inline constexpr std::string_view kPriorityClassLabel = "kueue.x-k8s.io/priority-class";
inline constexpr std::string_view kJobMinParallelismAnnotation = "kueue.x-k8s.io/job-min-parallelism";
// A Job's limit on how long it may run once admitted: the Workload's maximumExecutionTimeSeconds.
inline constexpr std::string_view kMaxExecTimeLabel = "kueue.x-k8s.io/max-exec-time-seconds";
inline constexpr std::string_view kPreemptibleAnnotation = "rota.dev/preemptible";

// ---- shared pieces -------------------------------------------------------------------------

struct ResourceQuota {
  std::string name;
  Quantity nominal_quota;
  std::optional<Quantity> borrowing_limit;  // absent: no limit
  std::optional<Quantity> lending_limit;    // absent: everything may be lent
  Extra extra;                              // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Required("name", s.name);
    v.Required("nominalQuota", s.nominal_quota);
    v.Optional("borrowingLimit", s.borrowing_limit);
    v.Optional("lendingLimit", s.lending_limit);
  }
};

struct FlavorQuotas {
  std::string name;  // a ResourceFlavor
  std::vector<ResourceQuota> resources;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Required("name", s.name);
    v.Required("resources", s.resources);
  }
};

struct ResourceGroup {
  std::vector<std::string> covered_resources;
  std::vector<FlavorQuotas> flavors;  // in order of preference
  Extra extra;                        // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Required("coveredResources", s.covered_resources);
    v.Required("flavors", s.flavors);
  }
};

struct FairSharing {
  Quantity weight = Quantity::FromUnits(1);
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("weight", s.weight);
  }
};

enum class StopPolicy { kNone, kHold, kHoldAndDrain };
template <>
struct EnumNames<StopPolicy> {
  static constexpr std::pair<StopPolicy, std::string_view> kValues[] = {
      {StopPolicy::kNone, "None"}, {StopPolicy::kHold, "Hold"}, {StopPolicy::kHoldAndDrain, "HoldAndDrain"}};
};

struct ResourceUsage {
  std::string name;
  Quantity total;
  Quantity borrowed;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Required("name", s.name);
    v.Optional("total", s.total);
    v.Optional("borrowed", s.borrowed);
  }
};

struct FlavorUsage {
  std::string name;
  std::vector<ResourceUsage> resources;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Required("name", s.name);
    v.Required("resources", s.resources);
  }
};

// ---- ClusterQueue --------------------------------------------------------------------------

enum class QueueingStrategy { kStrictFIFO, kBestEffortFIFO };
template <>
struct EnumNames<QueueingStrategy> {
  static constexpr std::pair<QueueingStrategy, std::string_view> kValues[] = {
      {QueueingStrategy::kStrictFIFO, "StrictFIFO"}, {QueueingStrategy::kBestEffortFIFO, "BestEffortFIFO"}};
};

enum class FungibilityPolicy { kMayStopSearch, kTryNextFlavor };
template <>
struct EnumNames<FungibilityPolicy> {
  static constexpr std::pair<FungibilityPolicy, std::string_view> kValues[] = {
      {FungibilityPolicy::kMayStopSearch, "MayStopSearch"}, {FungibilityPolicy::kTryNextFlavor, "TryNextFlavor"}};
};

enum class FungibilityPreference { kBorrowingOverPreemption, kPreemptionOverBorrowing };
template <>
struct EnumNames<FungibilityPreference> {
  static constexpr std::pair<FungibilityPreference, std::string_view> kValues[] = {
      {FungibilityPreference::kBorrowingOverPreemption, "BorrowingOverPreemption"},
      {FungibilityPreference::kPreemptionOverBorrowing, "PreemptionOverBorrowing"}};
};

struct FlavorFungibility {
  FungibilityPolicy when_can_borrow = FungibilityPolicy::kMayStopSearch;
  FungibilityPolicy when_can_preempt = FungibilityPolicy::kTryNextFlavor;
  std::optional<FungibilityPreference> preference;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("whenCanBorrow", s.when_can_borrow);
    v.Optional("whenCanPreempt", s.when_can_preempt);
    v.Optional("preference", s.preference);
  }
};

enum class PreemptionPolicy { kNever, kLowerPriority, kLowerOrNewerEqualPriority, kAny };
template <>
struct EnumNames<PreemptionPolicy> {
  static constexpr std::pair<PreemptionPolicy, std::string_view> kValues[] = {
      {PreemptionPolicy::kNever, "Never"},
      {PreemptionPolicy::kLowerPriority, "LowerPriority"},
      {PreemptionPolicy::kLowerOrNewerEqualPriority, "LowerOrNewerEqualPriority"},
      {PreemptionPolicy::kAny, "Any"}};
};

struct BorrowWithinCohort {
  PreemptionPolicy policy = PreemptionPolicy::kNever;  // Never or LowerPriority
  std::optional<int32_t> max_priority_threshold;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("policy", s.policy);
    v.Optional("maxPriorityThreshold", s.max_priority_threshold);
  }
};

struct ClusterQueuePreemption {
  PreemptionPolicy reclaim_within_cohort = PreemptionPolicy::kNever;  // Never, LowerPriority, Any
  PreemptionPolicy within_cluster_queue = PreemptionPolicy::kNever;
  BorrowWithinCohort borrow_within_cohort;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("reclaimWithinCohort", s.reclaim_within_cohort);
    v.Optional("withinClusterQueue", s.within_cluster_queue);
    v.Optional("borrowWithinCohort", s.borrow_within_cohort);
  }
};

enum class AdmissionMode { kNoAdmissionFairSharing, kUsageBasedAdmissionFairSharing };
template <>
struct EnumNames<AdmissionMode> {
  static constexpr std::pair<AdmissionMode, std::string_view> kValues[] = {
      {AdmissionMode::kNoAdmissionFairSharing, "NoAdmissionFairSharing"},
      {AdmissionMode::kUsageBasedAdmissionFairSharing, "UsageBasedAdmissionFairSharing"}};
};

// Kueue's admissionScope: UsageBasedAdmissionFairSharing orders the queue's workloads by their
// LocalQueues' recent usage (with the admissionFairSharing config).
struct AdmissionScope {
  AdmissionMode admission_mode = AdmissionMode::kNoAdmissionFairSharing;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("admissionMode", s.admission_mode);
  }
};

struct ClusterQueueSpec {
  std::vector<ResourceGroup> resource_groups;
  std::string cohort_name;
  QueueingStrategy queueing_strategy = QueueingStrategy::kBestEffortFIFO;
  std::optional<LabelSelector> namespace_selector;  // absent: no namespace; {}: every namespace
  FlavorFungibility flavor_fungibility;
  ClusterQueuePreemption preemption;
  StopPolicy stop_policy = StopPolicy::kNone;
  std::optional<FairSharing> fair_sharing;
  std::optional<AdmissionScope> admission_scope;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("resourceGroups", s.resource_groups);
    v.Optional("cohortName", s.cohort_name);
    v.Optional("queueingStrategy", s.queueing_strategy);
    v.Optional("namespaceSelector", s.namespace_selector);
    v.Optional("flavorFungibility", s.flavor_fungibility);
    v.Optional("preemption", s.preemption);
    v.Optional("stopPolicy", s.stop_policy);
    v.Optional("fairSharing", s.fair_sharing);
    v.Optional("admissionScope", s.admission_scope);
  }
};

struct FairSharingStatus {
  int64_t weighted_share = 0;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("weightedShare", s.weighted_share);
  }
};

struct ClusterQueueStatus {
  std::vector<Condition> conditions;
  int32_t pending_workloads = 0;
  int32_t reserving_workloads = 0;
  int32_t admitted_workloads = 0;
  std::vector<FlavorUsage> flavors_reservation;
  std::vector<FlavorUsage> flavors_usage;
  std::optional<FairSharingStatus> fair_sharing;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("conditions", s.conditions);
    v.Optional("pendingWorkloads", s.pending_workloads);
    v.Optional("reservingWorkloads", s.reserving_workloads);
    v.Optional("admittedWorkloads", s.admitted_workloads);
    v.Optional("flavorsReservation", s.flavors_reservation);
    v.Optional("flavorsUsage", s.flavors_usage);
    v.Optional("fairSharing", s.fair_sharing);
  }
};

struct ClusterQueue {
  static constexpr std::string_view kKind = "ClusterQueue";
  static constexpr bool kNamespaced = false;
  ObjectMeta metadata;
  ClusterQueueSpec spec;
  std::optional<ClusterQueueStatus> status;
  Extra extra;  // null unless the object had fields rota does not type
  // Not part of the API: set by a decoder that keeps a ClusterQueue whose spec rota cannot read
  // (its metadata only, the spec empty), saying why; the queue then admits nothing, and says so.
  std::string unusable;

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("metadata", s.metadata);
    v.Optional("spec", s.spec);
    v.Optional("status", s.status);
  }
};

// ---- Cohort --------------------------------------------------------------------------------

struct CohortSpec {
  std::string parent_name;
  std::vector<ResourceGroup> resource_groups;
  std::optional<FairSharing> fair_sharing;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("parentName", s.parent_name);
    v.Optional("resourceGroups", s.resource_groups);
    v.Optional("fairSharing", s.fair_sharing);
  }
};

struct CohortStatus {
  std::vector<Condition> conditions;
  std::optional<FairSharingStatus> fair_sharing;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("conditions", s.conditions);
    v.Optional("fairSharing", s.fair_sharing);
  }
};

struct Cohort {
  static constexpr std::string_view kKind = "Cohort";
  static constexpr bool kNamespaced = false;
  ObjectMeta metadata;
  CohortSpec spec;
  std::optional<CohortStatus> status;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("metadata", s.metadata);
    v.Optional("spec", s.spec);
    v.Optional("status", s.status);
  }
};

// ---- LocalQueue ----------------------------------------------------------------------------

struct LocalQueueSpec {
  std::string cluster_queue;
  StopPolicy stop_policy = StopPolicy::kNone;
  std::optional<FairSharing> fair_sharing;  // its weight in admission fair sharing
  Extra extra;                              // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("clusterQueue", s.cluster_queue);
    v.Optional("stopPolicy", s.stop_policy);
    v.Optional("fairSharing", s.fair_sharing);
  }
};

// status.fairSharing.admissionFairSharingStatus of a LocalQueue: its decayed usage, as Kueue keeps it.
struct AdmissionFairSharingStatus {
  std::map<std::string, Quantity> consumed_resources;
  std::string last_update;  // RFC 3339
  Extra extra;              // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("consumedResources", s.consumed_resources);
    v.Optional("lastUpdate", s.last_update);
  }
};

struct LocalQueueFairSharingStatus {
  int64_t weighted_share = 0;
  std::optional<AdmissionFairSharingStatus> admission_fair_sharing_status;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("weightedShare", s.weighted_share);
    v.Optional("admissionFairSharingStatus", s.admission_fair_sharing_status);
  }
};

struct LocalQueueStatus {
  std::vector<Condition> conditions;
  int32_t pending_workloads = 0;
  int32_t reserving_workloads = 0;
  int32_t admitted_workloads = 0;
  std::vector<FlavorUsage> flavors_reservation;
  std::vector<FlavorUsage> flavors_usage;
  std::optional<LocalQueueFairSharingStatus> fair_sharing;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("conditions", s.conditions);
    v.Optional("pendingWorkloads", s.pending_workloads);
    v.Optional("reservingWorkloads", s.reserving_workloads);
    v.Optional("admittedWorkloads", s.admitted_workloads);
    v.Optional("flavorsReservation", s.flavors_reservation);
    v.Optional("flavorsUsage", s.flavors_usage);
    v.Optional("fairSharing", s.fair_sharing);
  }
};

struct LocalQueue {
  static constexpr std::string_view kKind = "LocalQueue";
  static constexpr bool kNamespaced = true;
  ObjectMeta metadata;
  LocalQueueSpec spec;
  std::optional<LocalQueueStatus> status;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("metadata", s.metadata);
    v.Optional("spec", s.spec);
    v.Optional("status", s.status);
  }
};

// ---- ResourceFlavor ------------------------------------------------------------------------

struct ResourceFlavorSpec {
  std::map<std::string, std::string> node_labels;
  std::vector<Taint> node_taints;
  std::vector<Toleration> tolerations;
  std::string topology_name;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("nodeLabels", s.node_labels);
    v.Optional("nodeTaints", s.node_taints);
    v.Optional("tolerations", s.tolerations);
    v.Optional("topologyName", s.topology_name);
  }
};

struct ResourceFlavor {
  static constexpr std::string_view kKind = "ResourceFlavor";
  static constexpr bool kNamespaced = false;
  ObjectMeta metadata;
  ResourceFlavorSpec spec;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("metadata", s.metadata);
    v.Optional("spec", s.spec);
  }
};

// ---- WorkloadPriorityClass -----------------------------------------------------------------

struct WorkloadPriorityClass {
  static constexpr std::string_view kKind = "WorkloadPriorityClass";
  static constexpr bool kNamespaced = false;
  ObjectMeta metadata;
  int32_t value = 0;
  std::string description;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("metadata", s.metadata);
    v.Required("value", s.value);
    v.Optional("description", s.description);
  }

  // False for a critical tier (annotation rota.dev/preemptible: "false"): its workloads are never
  // preemption victims.
  bool preemptible() const;
};

// ---- Workload ------------------------------------------------------------------------------

struct PriorityClassRef {
  std::string group;  // kueue.x-k8s.io or scheduling.k8s.io
  std::string kind;   // WorkloadPriorityClass or PriorityClass
  std::string name;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Required("group", s.group);
    v.Required("kind", s.kind);
    v.Required("name", s.name);
  }
};

struct PodSet {
  std::string name = "main";
  int32_t count = 1;
  std::optional<int32_t> min_count;
  SharedJson template_;  // a PodTemplateSpec, kept whole (and shared by copies of the Workload)
  Extra extra;           // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("name", s.name);
    v.Optional("count", s.count);
    v.Optional("minCount", s.min_count);
    v.Required("template", s.template_);
  }
};

struct WorkloadSpec {
  std::vector<PodSet> pod_sets;
  std::string queue_name;
  Boxed<PriorityClassRef> priority_class_ref;  // (on the heap: few Workloads name one)
  std::optional<int32_t> priority;
  bool active = true;
  std::optional<int32_t> maximum_execution_time_seconds;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Required("podSets", s.pod_sets);
    v.Optional("queueName", s.queue_name);
    v.Optional("priorityClassRef", s.priority_class_ref);
    v.Optional("priority", s.priority);
    v.Optional("active", s.active);
    v.Optional("maximumExecutionTimeSeconds", s.maximum_execution_time_seconds);
  }
};

struct PodSetAssignment {
  std::string name = "main";
  std::map<std::string, std::string> flavors;      // resource -> ResourceFlavor
  std::map<std::string, Quantity> resource_usage;  // resource -> total over all pods
  std::optional<int32_t> count;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("name", s.name);
    v.Optional("flavors", s.flavors);
    v.Optional("resourceUsage", s.resource_usage);
    v.Optional("count", s.count);
  }
};

struct Admission {
  std::string cluster_queue;
  std::vector<PodSetAssignment> pod_set_assignments;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Required("clusterQueue", s.cluster_queue);
    v.Required("podSetAssignments", s.pod_set_assignments);
  }
};

struct RequeueState {
  std::optional<int32_t> count;
  std::string requeue_at;  // RFC 3339
  Extra extra;             // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("count", s.count);
    v.Optional("requeueAt", s.requeue_at);
  }
};

struct ReclaimablePod {
  std::string name;
  int32_t count = 0;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Required("name", s.name);
    v.Required("count", s.count);
  }
};

struct PodSetRequest {
  std::string name;
  std::map<std::string, Quantity> resources;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Required("name", s.name);
    v.Optional("resources", s.resources);
  }
};

struct WorkloadStatus {
  std::vector<Condition> conditions;
  std::optional<Admission> admission;
  std::optional<RequeueState> requeue_state;
  std::vector<ReclaimablePod> reclaimable_pods;
  std::vector<PodSetRequest> resource_requests;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("conditions", s.conditions);
    v.Optional("admission", s.admission);
    v.Optional("requeueState", s.requeue_state);
    v.Optional("reclaimablePods", s.reclaimable_pods);
    v.Optional("resourceRequests", s.resource_requests);
  }
};

// Workload condition types and reasons (Kueue's words; dashboards match on them).
namespace workload_condition {
inline constexpr std::string_view kQuotaReserved = "QuotaReserved";
inline constexpr std::string_view kAdmitted = "Admitted";
inline constexpr std::string_view kEvicted = "Evicted";
inline constexpr std::string_view kPreempted = "Preempted";
inline constexpr std::string_view kPodsReady = "PodsReady";
inline constexpr std::string_view kFinished = "Finished";
inline constexpr std::string_view kRequeued = "Requeued";
inline constexpr std::string_view kDeactivationTarget = "DeactivationTarget";
// rota's: a victim asked to checkpoint before its eviction (docs/checkpoint.md).
inline constexpr std::string_view kCheckpointRequested = "CheckpointRequested";
}  // namespace workload_condition

struct Workload {
  static constexpr std::string_view kKind = "Workload";
  static constexpr bool kNamespaced = true;
  ObjectMeta metadata;
  WorkloadSpec spec;
  Boxed<WorkloadStatus> status;  // (on the heap: most Workloads in a busy cache wait without one)
  Extra extra;                   // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("metadata", s.metadata);
    v.Required("spec", s.spec);
    v.Optional("status", s.status);
  }
};

// ---- whole objects -------------------------------------------------------------------------

template <typename T>
concept ApiObject = HasFields<T> && requires {
  { T::kKind } -> std::convertible_to<std::string_view>;
  { T::kNamespaced } -> std::convertible_to<bool>;
};

// The apiVersion of T: its own kApiVersion (rota's kinds, e.g. rota.dev/v1alpha1), else Kueue's.
template <ApiObject T>
constexpr std::string_view ApiVersionOf() {
  if constexpr (requires { T::kApiVersion; }) {
    return T::kApiVersion;
  } else {
    return kApiVersion;
  }
}

// `Kind "name"` or `Kind "namespace/name"`, for messages.
std::string DescribeObject(std::string_view kind, const Json& object);

// Decodes one whole object of kind T. Errors read `Kind "ns/name": field.path: what was wrong`,
// including a wrong apiVersion or kind.
template <ApiObject T>
Result<T> DecodeObject(const Json& object) {
  const std::string who = DescribeObject(T::kKind, object);
  if (!object.is_object()) return InvalidArgument(who + ": must be a JSON object");
  auto api_version = object.find("apiVersion");
  if (api_version != object.end() && *api_version != ApiVersionOf<T>()) {
    return InvalidArgument(who + ": apiVersion: " + api_version->dump() + " is not served; use " +
                           std::string(ApiVersionOf<T>()));
  }
  auto kind = object.find("kind");
  if (kind != object.end() && *kind != T::kKind) {
    return InvalidArgument(who + ": kind: expected " + std::string(T::kKind) + ", got " + kind->dump());
  }
  T out;
  Status s = DecodeValue(object, "", out);
  if (!s.ok()) return s.WithContext(who);
  if (out.extra.is_object()) {
    out.extra.erase("apiVersion");
    out.extra.erase("kind");
    if (out.extra.empty()) out.extra = Json();
  }
  return out;
}

// Encodes a whole object, with apiVersion and kind.
template <ApiObject T>
Json EncodeObject(const T& object) {
  Json out = EncodeValue(object);
  out["apiVersion"] = ApiVersionOf<T>();
  out["kind"] = T::kKind;
  return out;
}

}  // namespace rota::api
