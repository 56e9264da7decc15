#pragma once

// A small cluster for the scheduling parts' tests: ResourceFlavor "gpu", ClusterQueue "team" with
// one GPU of nominal quota, LocalQueue ml/gpu pointing to it, and Workloads of one GPU each.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "rota/admission/engine.h"
#include "rota/api/snapshot.h"

namespace rota::controller::testing {

inline api::ClusterState SmallCluster() {
  using api::Json;
  api::ClusterState state;
  state.keep_going = true;
  state.flavors.push_back(*api::DecodeObject<api::ResourceFlavor>(Json::parse(R"({"metadata": {"name": "gpu"}})")));
  state.cluster_queues.push_back(*api::DecodeObject<api::ClusterQueue>(Json::parse(R"({
    "metadata": {"name": "team"},
    "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"],
      "flavors": [{"name": "gpu", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 1}]}]}]}})")));
  state.local_queues.push_back(*api::DecodeObject<api::LocalQueue>(
      Json::parse(R"({"metadata": {"name": "gpu", "namespace": "ml"}, "spec": {"clusterQueue": "team"}})")));
  state.namespace_labels["ml"] = {};
  return state;
}

// A Workload ml/NAME asking for one GPU in LocalQueue `queue`, created at `created` (RFC 3339).
inline std::shared_ptr<const api::Workload> GpuWorkload(const std::string& name, const std::string& created,
                                                        const std::string& queue = "gpu") {
  return std::make_shared<const api::Workload>(*api::DecodeObject<api::Workload>(api::Json::parse(
      R"({"metadata": {"name": ")" + name + R"(", "namespace": "ml", "creationTimestamp": ")" + created +
      R"("}, "spec": {"queueName": ")" + queue + R"(", "podSets": [{"name": "main", "count": 1, "template":
      {"spec": {"containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": 1}}}]}}}]}})")));
}

// A pass's first steps: the snapshot of `state` built, scheduled, and the admissions decided
// applied to the builder's entries (as the controller does before counting the queues).
inline admission::Decisions ScheduleAndApply(const api::ClusterState& state, api::SnapshotBuilder& builder,
                                             admission::Workspace& workspace) {
  EXPECT_TRUE(builder.Build(state).ok());
  admission::Decisions d = admission::Schedule(builder.snapshot(), workspace);
  for (const auto& a : d.admitted) {
    builder.Mutable(a.workload)->admission = admission::AdmissionSpec{a.cluster_queue, a.pod_sets};
  }
  return d;
}

}  // namespace rota::controller::testing
