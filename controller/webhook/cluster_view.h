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
    return Ask(apiclient::resources::kLocalQueues, ns, name, "LocalQueue " + ns + "/" + name).has_value();
  }
  bool PriorityClassExists(const std::string& name) const override {
    if (cache_.priority_classes().HasSynced()) return cache_.priority_classes().Get(name) != nullptr;
    return Ask(apiclient::resources::kWorkloadPriorityClasses, "", name, "WorkloadPriorityClass " + name).has_value();
  }
  std::optional<std::string> CohortParent(const std::string& name) const override {
    if (cache_.cohorts().HasSynced()) {
      auto c = cache_.cohorts().Get(name);
      if (!c) return std::nullopt;
      return c->spec.parent_name;
    }
    auto c = Ask(apiclient::resources::kCohorts, "", name, "Cohort " + name);
    if (!c) return std::nullopt;
    return c->value("spec", Json::object()).value("parentName", std::string());
  }

 private:
  // The object from the apiserver, or nullopt when it does not exist; throws LookupFailed when
  // the apiserver does not say (`what` names the object).
  std::optional<Json> Ask(const apiclient::Resource& r, const std::string& ns, const std::string& name,
                          const std::string& what) const {
    auto got = client_.Get(r, ns, name);
    if (got.ok()) return std::move(*got);
    if (got.error().IsNotFound()) return std::nullopt;
    throw LookupFailed("cannot tell whether " + what + " exists: " + got.error().ToString());
  }

  apiclient::Client& client_;
  const controller::ClusterCache& cache_;
};

}  // namespace rota::webhook
