#pragma once

// The cluster cache: one informer per kind that rota reads (ResourceFlavor, Cohort, ClusterQueue,
// LocalQueue, WorkloadPriorityClass, Workload, Namespace, and rota's Budget), shared by the queue controller, the
// Job integration and the webhooks, as controller-runtime's manager cache is. `main` owns it; no
// controller owns a cache another depends on. Workloads are kept compact (compact_workload.h).
//
// Threads: listeners are registered before Start and then called on the informers' threads;
// the accessors may be used from any thread.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cache/compact_workload.h"
#include "rota/api/budget.h"
#include "rota/api/codec.h"
#include "rota/api/kueue.h"
#include "rota/apiclient/client.h"
#include "rota/apiclient/informer.h"

namespace rota::controller {

struct NamespaceInfo {
  std::string name;
  std::map<std::string, std::string> labels;
};

// The cache's ClusterQueue decoder. A ClusterQueue rota cannot read is kept by its metadata with
// the reason (ClusterQueue::unusable), so that it says so in its status and in its workloads'
// pending reasons rather than vanishing from the cache (or keeping its old spec after an update
// rota cannot read). Only one without a readable name is an error.
Result<api::ClusterQueue> DecodeCachedClusterQueue(const api::Json& document);

class ClusterCache {
 public:
  struct Options {
    // Watches read their events in batches within this long, rather than waking for each: the
    // scheduling loop gathers changes for its batch period anyway.
    std::chrono::milliseconds settle{50};
    std::function<void(const std::string& message)> on_error;  // a watch's warnings
  };
  // Called for every change of any kind. `may_decide` is false for a change that cannot give the
  // scheduler anything to decide while no workload waits for quota: a Workload finishing or going
  // away, or a queue whose status alone changed (rota's own status write coming back, mostly).
  using ChangeListener = std::function<void(bool may_decide)>;
  using WorkloadListener = std::function<void(const api::Workload&)>;
  // A Workload seen finished (maybe again: on a relist, or an update after it finished).
  using FinishedRunListener = std::function<void(const FinishedRun&)>;

  ClusterCache(apiclient::Client& client, Options options);
  ~ClusterCache();
  ClusterCache(const ClusterCache&) = delete;
  ClusterCache& operator=(const ClusterCache&) = delete;

  // Listeners, registered before Start.
  void OnChange(ChangeListener listener) { change_listeners_.push_back(std::move(listener)); }
  void OnWorkloadChange(WorkloadListener listener) { workload_listeners_.push_back(std::move(listener)); }
  void OnFinishedRun(FinishedRunListener listener) { finished_listeners_.push_back(std::move(listener)); }
  // A Budget added, deleted, or changed but for its status.
  void OnBudgetChange(std::function<void()> listener) { budget_listeners_.push_back(std::move(listener)); }

  // Starts every informer (idempotent).
  void Start();
  bool HasSynced() const;
  // Stops every informer: all asked at once, then each waited for. Idempotent.
  void Stop();

  const apiclient::Informer<api::ResourceFlavor>& flavors() const { return *flavors_; }
  const apiclient::Informer<api::Cohort>& cohorts() const { return *cohorts_; }
  const apiclient::Informer<api::ClusterQueue>& cluster_queues() const { return *cluster_queues_; }
  const apiclient::Informer<api::LocalQueue>& local_queues() const { return *local_queues_; }
  const apiclient::Informer<api::WorkloadPriorityClass>& priority_classes() const { return *priority_classes_; }
  // Its view holds the Workloads that are not finished: those a scheduling pass looks at.
  const apiclient::Informer<api::Workload>& workloads() const { return *workloads_; }
  const apiclient::Informer<NamespaceInfo>& namespaces() const { return *namespaces_; }
  const apiclient::Informer<api::Budget>& budgets() const { return *budgets_; }

 private:
  void Changed(bool may_decide) const;
  std::vector<apiclient::Reflector*> Reflectors() const;

  std::vector<ChangeListener> change_listeners_;
  std::vector<WorkloadListener> workload_listeners_;
  std::vector<FinishedRunListener> finished_listeners_;
  std::vector<std::function<void()>> budget_listeners_;
  api::JsonInterner templates_;  // the cached Workloads' pod templates, one copy of each
  std::unique_ptr<apiclient::Informer<api::ResourceFlavor>> flavors_;
  std::unique_ptr<apiclient::Informer<api::Cohort>> cohorts_;
  std::unique_ptr<apiclient::Informer<api::ClusterQueue>> cluster_queues_;
  std::unique_ptr<apiclient::Informer<api::LocalQueue>> local_queues_;
  std::unique_ptr<apiclient::Informer<api::WorkloadPriorityClass>> priority_classes_;
  std::unique_ptr<apiclient::Informer<api::Workload>> workloads_;
  std::unique_ptr<apiclient::Informer<NamespaceInfo>> namespaces_;
  std::unique_ptr<apiclient::Informer<api::Budget>> budgets_;
};

}  // namespace rota::controller
