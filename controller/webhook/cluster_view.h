#pragma once

// The webhooks' view of the cluster, from rota's informer caches. Until a cache has synced (just
// after start) a question goes to the apiserver instead, so that a Job created in the first
// seconds is still suspended when its namespace has a default LocalQueue.

#include "queue_controller.h"
#include "rota/apiclient/client.h"
#include "webhooks.h"

namespace rota::webhook {

class InformerView : public ClusterView {
 public:
  InformerView(apiclient::Client& client, const controller::QueueController& queues) : client_(client), queues_(queues) {}

  bool LocalQueueExists(const std::string& ns, const std::string& name) const override {
    if (queues_.local_queues().HasSynced()) return queues_.local_queues().Get(ns + "/" + name) != nullptr;
    return client_.Get(apiclient::resources::kLocalQueues, ns, name).ok();
  }
  bool PriorityClassExists(const std::string& name) const override {
    if (queues_.priority_classes().HasSynced()) return queues_.priority_classes().Get(name) != nullptr;
    return client_.Get(apiclient::resources::kWorkloadPriorityClasses, "", name).ok();
  }
  std::optional<std::string> CohortParent(const std::string& name) const override {
    if (queues_.cohorts().HasSynced()) {
      auto c = queues_.cohorts().Get(name);
      if (!c) return std::nullopt;
      return c->spec.parent_name;
    }
    auto c = client_.Get(apiclient::resources::kCohorts, "", name);
    if (!c.ok()) return std::nullopt;
    return c->value("spec", Json::object()).value("parentName", std::string());
  }

 private:
  apiclient::Client& client_;
  const controller::QueueController& queues_;
};

}  // namespace rota::webhook
