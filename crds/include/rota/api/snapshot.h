#pragma once

// From API objects to the admission engine's Snapshot: resolves LocalQueues and priority classes,
// computes pod requests from pod templates as Kubernetes does, and turns quantities into exact
// milli-units. Shared by the controller (from its informers) and `rota simulate` (from files).

#include <map>
#include <string>
#include <vector>

#include "rota/admission/snapshot.h"
#include "rota/admission/status.h"
#include "rota/api/codec.h"
#include "rota/api/kueue.h"

namespace rota::api {

// Everything the engine's input is built from.
struct ClusterState {
  std::vector<ResourceFlavor> flavors;
  std::vector<Cohort> cohorts;
  std::vector<ClusterQueue> cluster_queues;
  std::vector<LocalQueue> local_queues;
  std::vector<WorkloadPriorityClass> priority_classes;
  std::vector<Workload> workloads;
  // Namespace labels, for ClusterQueue namespaceSelectors. A namespace not listed has only its
  // well-known label kubernetes.io/metadata.name.
  std::map<std::string, std::map<std::string, std::string>> namespace_labels;
  bool fair_sharing = false;
  // Seconds since the epoch, for requeueState.requeueAt (a workload evicted with backoff waits
  // until then). 0: ignore requeueAt.
  int64_t now = 0;
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

}  // namespace rota::api
