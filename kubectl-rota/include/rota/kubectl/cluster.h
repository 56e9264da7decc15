#pragma once

// What the commands read from the cluster, behind an interface so that the commands can be run on
// objects given by a test. Objects come decoded into rota's typed Kueue API (rota/api/kueue.h);
// one that cannot be decoded is left out with a warning, so that one bad object does not hide the
// others.

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "rota/admission/status.h"
#include "rota/api/kueue.h"
#include "rota/apiclient/client.h"

namespace rota::kubectl {

using Json = nlohmann::json;

// A read that failed, worded as kubectl words it ("Error from server (NotFound): jobs.batch "x"
// not found", "Unable to connect to the server: ...").
struct Failure {
  std::string message;
  bool not_found = false;
};

template <typename T>
using Fetched = Expected<T, Failure>;

// The Job a `why job/NAME` names: enough to find the Workload rota made for it.
struct JobRef {
  std::string ns, name, uid;
};

class ClusterReader {
 public:
  virtual ~ClusterReader() = default;
  // `ns` empty means every namespace.
  virtual Fetched<std::vector<api::ClusterQueue>> ClusterQueues() = 0;
  virtual Fetched<std::vector<api::LocalQueue>> LocalQueues(const std::string& ns) = 0;
  virtual Fetched<std::vector<api::Workload>> Workloads(const std::string& ns) = 0;
  virtual Fetched<std::vector<api::WorkloadPriorityClass>> PriorityClasses() = 0;
  virtual Fetched<api::Workload> GetWorkload(const std::string& ns, const std::string& name) = 0;
  virtual Fetched<JobRef> GetJob(const std::string& ns, const std::string& name) = 0;
  // The Workloads rota made for the Job with `job_uid` (label kueue.x-k8s.io/job-uid).
  virtual Fetched<std::vector<api::Workload>> WorkloadsOfJob(const std::string& ns, const std::string& job_uid) = 0;
  // core/v1 Events about Workloads (involvedObject.kind=Workload), as the apiserver returns them.
  virtual Fetched<std::vector<Json>> WorkloadEvents(const std::string& ns) = 0;
  // The visibility API's PendingWorkloadsSummary of LocalQueue `ns`/`local_queue`. A failure's
  // message says why it is not available (the API may not be served).
  virtual Fetched<Json> PendingWorkloads(const std::string& ns, const std::string& local_queue) = 0;
};

// A reader over the apiserver. Warnings (objects left out) go to `warnings`.
std::unique_ptr<ClusterReader> NewApiClusterReader(apiclient::Client& client, std::ostream& warnings);

// kubectl's words for a failed request.
Failure FailureOf(const apiclient::ApiError& error);

}  // namespace rota::kubectl
