#pragma once

// Kueue's admission fair sharing, the usage side: on the leader, every sampling interval, each
// LocalQueue of a ClusterQueue with admissionScope UsageBasedAdmissionFairSharing has its
// decayed usage updated from the resources its admitted workloads hold (new = old x (1 - a) +
// now x a, a = 1 - 0.5^(elapsed / half-life)) and written to its
// status.fairSharing.admissionFairSharingStatus, from which a restart or a new leader goes on.
// The queue controller puts the usage in each pass's snapshot (api::ClusterState).
//
// Threads: Run() on a thread of its own; Usage() from any thread.

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "cache/cluster_cache.h"
#include "logger.h"
#include "rota/api/snapshot.h"
#include "rota/apiclient/client.h"
#include "rota/apiclient/clock.h"

namespace rota::controller {

using LocalQueueUsages = std::map<std::string, api::LocalQueueUsage>;  // by "namespace/name"

// The usage `old` decays to after `elapsed` seconds while `now` was held (the half-life's rule;
// a half-life of 0 keeps no usage at all).
api::LocalQueueUsage DecayedUsage(const api::LocalQueueUsage& old, const std::map<std::string, double>& now,
                                  int64_t now_seconds, int64_t half_life);

class AdmissionUsage {
 public:
  AdmissionUsage(ClusterCache& cache, apiclient::Client& client, Logger log, apiclient::Clock& clock,
                 api::AdmissionFairSharingConfig config);

  // Samples every sampling interval until `stop`.
  void Run(const std::atomic<bool>& stop);
  // One sample of every fair-shared LocalQueue, written to its status.
  void Sample();
  const api::AdmissionFairSharingConfig& config() const { return config_; }
  std::shared_ptr<const LocalQueueUsages> Usage() const;
  bool Synced() const { return synced_.load(); }

 private:
  // What each fair-shared LocalQueue's admitted workloads hold now (resource -> units).
  std::map<std::string, std::map<std::string, double>> HeldNow() const;
  void Write(const api::LocalQueue& lq, const api::LocalQueueUsage& usage);

  ClusterCache& cache_;
  apiclient::Client& client_;
  Logger log_;
  apiclient::Clock& clock_;
  const api::AdmissionFairSharingConfig config_;
  LocalQueueUsages kept_;  // Run's thread
  mutable std::mutex mu_;
  std::shared_ptr<const LocalQueueUsages> usage_ = std::make_shared<LocalQueueUsages>();  // mu_
  std::atomic<bool> synced_{false};
};

}  // namespace rota::controller
