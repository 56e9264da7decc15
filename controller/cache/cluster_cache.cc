#include "cache/cluster_cache.h"

#include "cache/compact_workload.h"

namespace rota::controller {
namespace {

// Handlers that report every add, update and delete as a change that may decide.
template <typename T>
typename apiclient::Informer<T>::Handlers AnyChange(std::function<void(bool)> changed) {
  typename apiclient::Informer<T>::Handlers h;
  h.on_add = [changed](const T&) { changed(true); };
  h.on_update = [changed](const T&, const T&) { changed(true); };
  h.on_delete = [changed](const T&) { changed(true); };
  return h;
}

// An update of a queue or Budget decides nothing when only its status changed: its generation,
// labels, annotations and deletion are as they were.
template <typename T>
typename apiclient::Informer<T>::Handlers SpecChange(std::function<void(bool)> changed) {
  auto h = AnyChange<T>(changed);
  h.on_update = [changed](const T& old, const T& now) {
    const api::ObjectMeta &a = old.metadata, &b = now.metadata;
    const bool status_only = a.generation && a.generation == b.generation && a.labels == b.labels &&
                             a.annotations == b.annotations && a.deletion_timestamp == b.deletion_timestamp;
    changed(!status_only);
  };
  return h;
}

Result<NamespaceInfo> DecodeNamespace(const api::Json& j) {
  api::ObjectMeta m;
  Status s = api::DecodeValue(j.contains("metadata") ? j["metadata"] : api::Json::object(), "metadata", m);
  if (!s.ok()) return s;
  return NamespaceInfo{m.name, m.labels};
}

}  // namespace

Result<api::ClusterQueue> DecodeCachedClusterQueue(const api::Json& j) {
  Result<api::ClusterQueue> q = api::DecodeObject<api::ClusterQueue>(j);
  if (q.ok()) return q;
  api::ClusterQueue kept;
  const api::Json& metadata = j.contains("metadata") ? j["metadata"] : api::Json::object();
  if (!api::DecodeValue(metadata, "metadata", kept.metadata).ok() || kept.metadata.name.empty()) return q;
  kept.unusable = q.status().message();
  return kept;
}

ClusterCache::ClusterCache(apiclient::Client& client, Options options) {
  namespace r = apiclient::resources;
  apiclient::InformerOptions io;
  io.settle = options.settle;
  if (options.on_error) io.on_error = options.on_error;
  auto changed = [this](bool may_decide) { Changed(may_decide); };
  flavors_ = std::make_unique<apiclient::Informer<api::ResourceFlavor>>(client, r::kResourceFlavors, "",
                                                                        api::DecodeObject<api::ResourceFlavor>,
                                                                        AnyChange<api::ResourceFlavor>(changed), io);
  cohorts_ = std::make_unique<apiclient::Informer<api::Cohort>>(client, r::kCohorts, "", api::DecodeObject<api::Cohort>,
                                                                AnyChange<api::Cohort>(changed), io);
  cluster_queues_ = std::make_unique<apiclient::Informer<api::ClusterQueue>>(
      client, r::kClusterQueues, "", DecodeCachedClusterQueue, SpecChange<api::ClusterQueue>(changed), io);
  local_queues_ = std::make_unique<apiclient::Informer<api::LocalQueue>>(
      client, r::kLocalQueues, "", api::DecodeObject<api::LocalQueue>, SpecChange<api::LocalQueue>(changed), io);
  priority_classes_ = std::make_unique<apiclient::Informer<api::WorkloadPriorityClass>>(
      client, r::kWorkloadPriorityClasses, "", api::DecodeObject<api::WorkloadPriorityClass>,
      AnyChange<api::WorkloadPriorityClass>(changed), io);
  // A Workload that finished or went away frees quota, which matters only to pending workloads.
  // Every Workload change also goes to the Workload listeners (the Job integration follows its
  // Workloads).
  auto tell = [this](const api::Workload& w, bool may_decide) {
    Changed(may_decide);
    for (const auto& l : workload_listeners_) l(w);
  };
  apiclient::Informer<api::Workload>::Handlers wh;
  wh.on_add = [tell](const api::Workload& w) { tell(w, !IsFinished(w)); };
  wh.on_update = [tell](const api::Workload&, const api::Workload& w) { tell(w, !IsFinished(w)); };
  wh.on_delete = [tell](const api::Workload& w) { tell(w, false); };
  workloads_ = std::make_unique<apiclient::Informer<api::Workload>>(
      client, r::kWorkloads, "",
      [this](api::Json& j) {
        // (The cache keeps little of a finished Workload: what its run took is read before that.)
        if (!finished_listeners_.empty())
          if (std::optional<FinishedRun> run = FinishedRunOf(j))
            for (const auto& l : finished_listeners_) l(*run);
        return DecodeCachedWorkload(j, templates_);
      },
      wh, io);
  workloads_->SetView([](const api::Workload& w) { return !IsFinished(w); });
  namespaces_ = std::make_unique<apiclient::Informer<NamespaceInfo>>(client, r::kNamespaces, "", DecodeNamespace,
                                                                     AnyChange<NamespaceInfo>(changed), io);
  // (A Budget changes admission only through the budget controller's gates, which wake the loop.
  // Its status is the controller's own writing: seeing it again must not wake the controller.)
  auto budget_changed = [this](bool spec_changed) {
    if (!spec_changed) return;
    for (const auto& l : budget_listeners_) l();
  };
  budgets_ = std::make_unique<apiclient::Informer<api::Budget>>(client, r::kBudgets, "", api::DecodeObject<api::Budget>,
                                                                SpecChange<api::Budget>(budget_changed), io);
}

ClusterCache::~ClusterCache() { Stop(); }

void ClusterCache::Changed(bool may_decide) const {
  for (const auto& l : change_listeners_) l(may_decide);
}

void ClusterCache::Start() {
  for (auto* r : Reflectors()) r->Start();
}

bool ClusterCache::HasSynced() const {
  for (auto* r : Reflectors())
    if (!r->HasSynced()) return false;
  return true;
}

void ClusterCache::Stop() {
  for (auto* r : Reflectors()) r->RequestStop();
  for (auto* r : Reflectors()) r->Stop();
}

std::vector<apiclient::Reflector*> ClusterCache::Reflectors() const {
  return {flavors_.get(),          cohorts_.get(),   cluster_queues_.get(), local_queues_.get(),
          priority_classes_.get(), workloads_.get(), namespaces_.get(),     budgets_.get()};
}

}  // namespace rota::controller
