#pragma once

// Kueue objects for the plugin's tests, as the apiserver would return them, and a ClusterReader
// that serves them.

#include <map>
#include <string>
#include <vector>

#include "rota/kubectl/cluster.h"

namespace rota::kubectl::samples {

using Json = nlohmann::json;

// A ClusterQueue with `gpus` nvidia.com/gpu in flavor a100 and 64 cpu in flavor cpu, in `cohort`
// ("" for none), preempting as `preemption` says (a JSON object, {} for Kueue's defaults).
Json ClusterQueueJson(const std::string& name, const std::string& cohort, int gpus, Json preemption = Json::object());
// Sets its status: `used` and `borrowed` GPUs of flavor a100, and the workload counts.
void SetQueueStatus(Json& cq, int used_gpus, int borrowed_gpus, int pending, int admitted);

// A Workload of Job `job` in `ns` (named job-JOB-00000), `gpus` nvidia.com/gpu and 1 cpu in one
// pod, in LocalQueue `queue`, at `priority`, created at `created` (RFC 3339).
Json WorkloadJson(const std::string& ns, const std::string& job, int gpus, int priority,
                  const std::string& queue = "main", const std::string& created = "2026-11-01T09:00:00Z");
// Admits it to `cluster_queue` (flavors a100 and cpu) at `at`.
void Admit(Json& w, const std::string& cluster_queue, const std::string& at);
// Adds (or replaces) a condition.
void SetCondition(Json& w, const std::string& type, const std::string& status, const std::string& reason,
                  const std::string& message, const std::string& at);

Json LocalQueueJson(const std::string& ns, const std::string& name, const std::string& cluster_queue);
// A core/v1 Event about Workload ns/name.
Json EventJson(const std::string& ns, const std::string& workload, const std::string& reason,
               const std::string& message, const std::string& first, const std::string& last);

template <typename T>
T Decode(const Json& j) {
  return std::move(api::DecodeObject<T>(j)).value();
}

// Serves the objects it holds; Jobs by name with their uid, the visibility API as `pending` says.
class FakeCluster : public ClusterReader {
 public:
  std::vector<Json> cluster_queues, local_queues, workloads, priority_classes, events;
  std::map<std::string, std::string> job_uids;  // "ns/name" -> uid
  std::optional<Json> pending;                  // absent: the visibility API answers 404

  Fetched<std::vector<api::ClusterQueue>> ClusterQueues() override;
  Fetched<std::vector<api::LocalQueue>> LocalQueues(const std::string& ns) override;
  Fetched<std::vector<api::Workload>> Workloads(const std::string& ns) override;
  Fetched<std::vector<api::WorkloadPriorityClass>> PriorityClasses() override;
  Fetched<api::Workload> GetWorkload(const std::string& ns, const std::string& name) override;
  Fetched<JobRef> GetJob(const std::string& ns, const std::string& name) override;
  Fetched<std::vector<api::Workload>> WorkloadsOfJob(const std::string& ns, const std::string& job_uid) override;
  Fetched<std::vector<Json>> WorkloadEvents(const std::string& ns) override;
  Fetched<Json> PendingWorkloads(const std::string& ns, const std::string& local_queue) override;
};

}  // namespace rota::kubectl::samples
