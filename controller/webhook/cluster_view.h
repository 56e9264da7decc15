#pragma once

// The webhooks' view of the cluster, from rota's informer caches. Until a cache has synced (just
// after start) a question goes to the apiserver instead, so that a Job created in the first
// seconds is still suspended when its namespace has a default LocalQueue.

#include "cache/cluster_cache.h"
#include "rota/apiclient/client.h"
#include "webhooks.h"

namespace rota::webhook {

class InformerView : public ClusterView {
 public:
  InformerView(apiclient::Client& client, const controller::ClusterCache& cache) : client_(client), cache_(cache) {}

  bool LocalQueueExists(const std::string& ns, const std::string& name) const override {
    if (cache_.local_queues().HasSynced()) return cache_.local_queues().Get(ns + "/" + name) != nullptr;
    return client_.Get(apiclient::resources::kLocalQueues, ns, name).ok();
  }
  bool PriorityClassExists(const std::string& name) const override {
    if (cache_.priority_classes().HasSynced()) return cache_.priority_classes().Get(name) != nullptr;
    return client_.Get(apiclient::resources::kWorkloadPriorityClasses, "", name).ok();
  }
  std::optional<std::string> CohortParent(const std::string& name) const override {
    if (cache_.cohorts().HasSynced()) {
      auto c = cache_.cohorts().Get(name);
      if (!c) return std::nullopt;
      return c->spec.parent_name;
    }
    auto c = client_.Get(apiclient::resources::kCohorts, "", name);
    if (!c.ok()) return std::nullopt;
    return c->value("spec", Json::object()).value("parentName", std::string());
  }

 private:
  apiclient::Client& client_;
  const controller::ClusterCache& cache_;
};

}  // namespace rota::webhook
