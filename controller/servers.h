#pragma once

// rota run's endpoints, each off when its address is "0":
// - /metrics: plain HTTP (on this host by default), or, with metrics.secureServing, HTTPS for
//   bearer tokens allowed `get` on /metrics (serving/request_auth.h) with the configured
//   certificate or one rota makes for itself;
// - /healthz (fails when the scheduling loop is stuck) and /readyz (caches synced, or standing
//   by for the lease), plain HTTP for the kubelet's probes;
// - the admission webhooks over HTTPS, served by every replica, leader or not.

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "cache/cluster_cache.h"
#include "http_server.h"
#include "https_server.h"
#include "metrics.h"
#include "queue_controller.h"
#include "request_auth.h"
#include "rota/apiclient/client.h"
#include "rota/apiclient/events.h"
#include "run_config.h"
#include "self_signed.h"
#include "visibility/server.h"
#include "webhook/cluster_view.h"

namespace rota::controller {

class Servers {
 public:
  struct Parts {
    const RunConfig& config;
    apiclient::Client& client;  // for the reviews of secure metrics
    QueueController& controller;
    const ClusterCache& cache;
    Metrics& metrics;
    apiclient::EventRecorder& events;
    const std::atomic<bool>& standing_by;  // a follower waiting for the lease is ready and live
    const Logger& log;
    visibility::Visibility& visibility;  // for the status page
  };
  explicit Servers(Parts parts) : p_(parts) {}
  ~Servers();

  // /metrics, /healthz and /readyz. False (after saying why on stderr) when one cannot start.
  bool StartHttp();
  // The webhooks, reading `view`. False (after saying why on stderr) when they cannot start.
  bool StartWebhooks(const webhook::ClusterView& view);

 private:
  HttpReply RenderMetrics();
  HttpReply RenderStatusPage();
  bool StartMetrics();
  bool StartSecureMetrics();
  // internalCertManagement: the certificate from the Secret (made if need be), waiting a while
  // for the webhook configurations to exist.
  Result<serving::ServingCert> WebhookCert();
  // Every hour, renews the webhook certificate when due and serves the new one.
  void RenewWebhookCert(std::string serving_pem);

  Parts p_;
  apiclient::Clock& clock_ = apiclient::RealClock();
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;  // guarded by mu_
  std::thread renewer_;
  std::unique_ptr<serving::Reviewer> reviewer_;
  std::unique_ptr<serving::RequestAuthorizer> authorizer_;
  // (After what their handlers use, so that they stop first.)
  std::unique_ptr<HttpServer> metrics_, health_;
  std::unique_ptr<HttpsServer> secure_metrics_, webhooks_;
};

}  // namespace rota::controller
