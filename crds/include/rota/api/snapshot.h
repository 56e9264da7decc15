#pragma once

// From API objects to the admission engine's Snapshot: resolves LocalQueues and priority classes,
// computes pod requests from pod templates as Kubernetes does, and turns quantities into exact
// milli-units. Shared by the controller (from its informers) and `rota simulate` (from files).

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
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
  // Shared and read-only: a controller passes its cache's objects without copying them.
  std::vector<std::shared_ptr<const Workload>> workloads;
  // Namespace labels, for ClusterQueue namespaceSelectors. A namespace not listed has only its
  // well-known label kubernetes.io/metadata.name.
  std::map<std::string, std::map<std::string, std::string>> namespace_labels;
  bool fair_sharing = false;
  // Seconds since the epoch, for requeueState.requeueAt (a workload evicted with backoff waits
  // until then). 0: ignore requeueAt.
  int64_t now = 0;
  // A workload rota cannot read (a quantity beyond int64 milli-units, a malformed time) fails
  // the whole snapshot unless this is set; then it stays pending, Inadmissible, with the error
  // as its message, so that one bad object cannot stop admission for everyone (the controller).
  bool keep_going = false;
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

// The engine's view of workloads' pod sets (and creation times), kept between snapshots by
// workload uid and generation: reading pod templates is most of the cost of a snapshot, and a
// workload's spec rarely changes while it waits. Not thread-safe; one per caller of BuildSnapshot.
class PodSetMemo {
 public:
  size_t size() const { return entries_.size(); }

 private:
  friend Result<admission::Snapshot> BuildSnapshot(const ClusterState&, PodSetMemo*);
  struct Entry {
    int64_t generation = 0;
    bool filled = false;
    int64_t creation_time = 0;
    std::vector<admission::PodSetSpec> pod_sets;
    uint64_t used = 0;  // the build that last used it
  };
  std::unordered_map<std::string, Entry> entries_;  // by uid (or namespace/name)
  uint64_t builds_ = 0;
};

// Builds the engine's snapshot. Workloads that are Finished are left out; workloads that cannot
// be queued (no LocalQueue, namespace not selected, inactive, unknown priority class) are passed
// with the reason and message a person will see. Errors name the object and the field. With a
// memo, pod sets of workloads seen before at the same generation are not read again (and the
// memo forgets workloads this snapshot no longer has).
Result<admission::Snapshot> BuildSnapshot(const ClusterState& state, PodSetMemo* memo = nullptr);

}  // namespace rota::api
