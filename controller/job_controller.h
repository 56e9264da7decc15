#pragma once

// The batch/v1 Job integration, with Kueue's conventions: a Job labelled
// kueue.x-k8s.io/queue-name (or in a namespace with a LocalQueue named "default") runs only when
// admitted. rota creates its Workload (owned by the Job, pod set "main", count = parallelism,
// minCount from kueue.x-k8s.io/job-min-parallelism, priority from kueue.x-k8s.io/priority-class)
// and keeps the Job suspended; on admission it merges the flavors' node labels into the pod
// template's nodeSelector, adds their tolerations, sets parallelism to the admitted count, and
// unsuspends it; when the Workload loses its admission (preemption) it suspends the Job again and
// restores the template, so the pods get their termination grace period; a Job annotated
// rota.dev/checkpoint takes part in the checkpoint handshake first (jobs/checkpoint_relay.h); a finished
// Job marks its Workload Finished, which releases the quota at once. A deleted Job takes its
// Workload with it (owner reference, garbage collector).
//
// Threads: informer threads enqueue Job keys; Run() reconciles them on worker threads.

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "cache/cluster_cache.h"
#include "logger.h"
#include "metrics.h"
#include "rota/apiclient/clock.h"
#include "rota/apiclient/events.h"
#include "rota/apiclient/informer.h"
#include "rota/apiclient/workqueue.h"
#include "run_config.h"

namespace rota::controller {

// What rota keeps of a Job.
struct JobInfo {
  std::string ns, name, uid;
  std::map<std::string, std::string> labels, annotations;
  bool suspend = false;
  int32_t parallelism = 1;
  std::optional<int32_t> completions;
  bool started = false;          // status.startTime is set
  int32_t active = 0;            // pods running or terminating (status.active + status.terminating)
  bool suspension_seen = false;  // condition Suspended=True: the Job controller has acted on it
  std::string suspended_since;   // that condition's lastTransitionTime (RFC 3339)
  int32_t succeeded = 0;         // status.succeeded
  std::string finished;          // "Succeeded" / "Failed" once the Job has finished, else ""
  std::string finished_message;
  apiclient::Json pod_template;

  static Result<JobInfo> Decode(const apiclient::Json& job);
};

// What rota keeps of a Job's pod (for gang readiness and the checkpoint handshake).
struct PodInfo {
  std::string ns, name, job;
  bool ready = false;                                    // condition Ready=True
  bool succeeded = false;                                // phase Succeeded
  std::string checkpointed_at, checkpoint_requested_at;  // its rota.dev/ annotations
  static Result<PodInfo> Decode(const apiclient::Json& pod);
};

// The Workload name for a Job: job-<name>-<5 hex digits of its uid's hash>.
std::string WorkloadNameForJob(const std::string& job_name, const std::string& job_uid);

class JobController {
 public:
  // Reads Workloads, LocalQueues, priority classes and flavors from `cache` (construct it before
  // the cache starts: it follows the cache's Workload changes); requeue delays and time stamps go
  // through `clock`.
  JobController(apiclient::Client& client, ClusterCache& cache, Logger log, RunConfig config = {},
                apiclient::EventRecorder* events = nullptr, Metrics* metrics = nullptr,
                apiclient::Clock& clock = apiclient::RealClock());
  ~JobController();

  // Starts the Job informer and `workers` reconcilers; returns when `stop` is set.
  void Run(const std::atomic<bool>& stop, int workers = 2);

 private:
  // Brings one Job and its Workload together; false to retry with backoff.
  bool Reconcile(const std::string& key);
  bool CreateWorkload(const JobInfo& job, const std::string& queue);
  // Deactivates the Workload of a Job that ran past its maximumExecutionTimeSeconds.
  bool DeactivateForMaxExecTime(const JobInfo& job, const api::Workload& wl);
  // The Job's kueue.x-k8s.io/max-exec-time-seconds label, when it is a positive number.
  std::optional<int32_t> MaxExecutionTime(const JobInfo& job) const;
  bool Start(const JobInfo& job, const api::Workload& wl);
  // Suspends the Job of an evicted Workload and, once none of its pods is active, releases the
  // Workload's quota (jobs/quota_release.h).
  bool StopThenRelease(const JobInfo& job, const api::Workload& wl);
  bool Stop(const JobInfo& job, const api::Workload& wl);
  bool MarkFinished(const JobInfo& job, const api::Workload& wl);
  // waitForPodsReady: PodsReady once the gang is up; evict and requeue it after the timeout.
  bool CheckPodsReady(const JobInfo& job, const api::Workload& wl);
  bool EvictForPodsReadyTimeout(const JobInfo& job, const api::Workload& wl);
  // The checkpoint handshake (jobs/checkpoint_relay.h): reports to the Workload, requests to the
  // pods.
  bool RelayCheckpoint(const JobInfo& job, const api::Workload& wl);
  std::vector<std::shared_ptr<const PodInfo>> PodsOf(const JobInfo& job) const;

  apiclient::Client& client_;
  ClusterCache& cache_;
  Logger log_;
  RunConfig config_;
  apiclient::EventRecorder* events_;
  Metrics* metrics_;
  apiclient::Clock& clock_;
  int64_t WallSeconds() const;
  std::string WallNow() const;  // RFC 3339
  void Event(const JobInfo& job, const std::string& reason, const std::string& message);
  apiclient::WorkQueue queue_;
  std::unique_ptr<apiclient::Informer<JobInfo>> jobs_;
  std::unique_ptr<apiclient::Informer<PodInfo>> pods_;  // the Jobs' pods
};

}  // namespace rota::controller
