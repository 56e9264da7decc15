#include "servers.h"

#include "status_page.h"
#include "visibility/status_source.h"

#include <iostream>

#include "self_signed.h"
#include "webhook/serve.h"
#include "webhook_certs.h"

namespace rota::controller {

namespace {

const HttpReply kOk{200, "text/plain; charset=utf-8", "ok\n"};

std::string Seconds(apiclient::Clock::Duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + "s";
}

}  // namespace

Servers::~Servers() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (renewer_.joinable()) renewer_.join();
  // Handlers run on the servers' threads: stop them before what they use goes.
  if (webhooks_) webhooks_->Stop();
  if (secure_metrics_) secure_metrics_->Stop();
  webhooks_.reset();
  secure_metrics_.reset();
  metrics_.reset();
  health_.reset();
}

HttpReply Servers::RenderMetrics() {
  p_.controller.ExportWriterMetrics();
  p_.metrics.Set("rota_events_dropped_total", {}, static_cast<double>(p_.events.dropped()));
  p_.metrics.Set("rota_leader", {}, p_.standing_by ? 0 : 1);
  return HttpReply{200, "text/plain; version=0.0.4; charset=utf-8", p_.metrics.Render()};
}

HttpReply Servers::RenderStatusPage() {
  const bool leader = !p_.standing_by.load();
  const int64_t now = std::chrono::system_clock::to_time_t(clock_.WallNow());
  visibility::StatusSources sources{p_.cache, p_.visibility.board(), p_.visibility.publisher()};
  return {200, "text/html; charset=utf-8",
          statuspage::RenderStatusPage(visibility::MakeStatusPage(sources, leader, now))};
}

bool Servers::StartMetrics() {
  auto s = HttpServer::Start(p_.config.metrics_address, {{"/metrics", [this] { return RenderMetrics(); }},
                                                         {"/", [this] { return RenderStatusPage(); }}});
  if (!s.ok()) {
    std::cerr << "metrics.bindAddress: " << s.status().message() << "\n";
    return false;
  }
  metrics_ = std::move(*s);
  p_.log("info", "serving /metrics and the status page (/) on port " + std::to_string(metrics_->port()));
  return true;
}

bool Servers::StartSecureMetrics() {
  HttpsOptions opts;
  opts.name = "metrics";
  opts.address = p_.config.metrics_address;
  opts.cert_file = p_.config.metrics_cert_file;
  opts.key_file = p_.config.metrics_key_file;
  if (opts.cert_file.empty()) {
    // As controller-runtime does without a certificate: one of its own, for this process only
    // (Prometheus then scrapes with insecure_skip_verify, or gives certFile to verify).
    auto made = serving::MakeServingCert({"rota-metrics", {"localhost"}, true, clock_.WallNow()});
    if (!made.ok()) {
      std::cerr << "metrics: " << made.status().message() << "\n";
      return false;
    }
    opts.cert_pem = made->cert_pem + made->ca_pem;
    opts.key_pem = made->key_pem;
  }
  reviewer_ = serving::NewApiReviewer(p_.client);
  authorizer_ = std::make_unique<serving::RequestAuthorizer>(*reviewer_, clock_, p_.log);
  opts.authorize = [this](const std::string& path, std::string_view authorization) {
    return authorizer_->Check(path, authorization);
  };
  auto s = HttpsServer::Start(
      opts, {{"/metrics", [this] { return RenderMetrics(); }}, {"/", [this] { return RenderStatusPage(); }}},
      [](const std::string&, std::string_view) {
        return HttpReply{405, "text/plain; charset=utf-8", "use GET\n"};
      },
      p_.log);
  if (!s.ok()) {
    std::cerr << "metrics: " << s.status().message() << "\n";
    return false;
  }
  secure_metrics_ = std::move(*s);
  p_.log("info", "serving /metrics over HTTPS on port " + std::to_string(secure_metrics_->port()) +
                     " to bearer tokens allowed get on /metrics" +
                     (opts.cert_file.empty() ? " (a self-signed certificate)" : ""));
  return true;
}

bool Servers::StartHttp() {
  if (p_.config.metrics_address != "0" && !(p_.config.metrics_secure ? StartSecureMetrics() : StartMetrics())) {
    return false;
  }
  if (p_.config.health_address == "0") return true;
  auto s =
      HttpServer::Start(p_.config.health_address,
                        {{"/healthz",
                          [this] {
                            const auto stalled = p_.controller.Stalled();
                            if (!stalled) return kOk;
                            return HttpReply{500, "text/plain; charset=utf-8",
                                             "scheduling loop: no progress for " + Seconds(*stalled) + "\n"};
                          }},
                         {"/readyz", [this] {
                            // Ready once the caches are synced, or while standing by for the lease.
                            const bool ready = p_.standing_by || p_.cache.HasSynced();
                            return ready ? kOk : HttpReply{503, "text/plain; charset=utf-8", "caches not synced\n"};
                          }}});
  if (!s.ok()) {
    std::cerr << "health.bindAddress: " << s.status().message() << "\n";
    return false;
  }
  health_ = std::move(*s);
  p_.log("info", "serving /healthz and /readyz on port " + std::to_string(health_->port()));
  return true;
}

bool Servers::StartWebhooks(const webhook::ClusterView& view) {
  if (p_.config.webhook_address == "0") return true;
  HttpsOptions opts;
  opts.address = p_.config.webhook_address;
  opts.cert_file = p_.config.webhook_cert_file;
  opts.key_file = p_.config.webhook_key_file;
  if (p_.config.internal_cert_management) {
    auto cert = WebhookCert();
    if (!cert.ok()) {
      std::cerr << "internalCertManagement: " << cert.status().message() << "\n";
      return false;
    }
    opts.cert_pem = cert->cert_pem;
    opts.key_pem = cert->key_pem;
    p_.log("info", "webhook certificate from Secret " + p_.config.cert_namespace + "/" + p_.config.webhook_secret_name +
                       ", trusted by rota's webhook configurations");
  }
  auto s = HttpsServer::Start(
      opts, {{"/healthz", [] { return kOk; }}},
      [this, &view](const std::string& path, std::string_view body) {
        return webhook::ServeWebhook(path, body, view, p_.metrics, p_.log);
      },
      p_.log);
  if (!s.ok()) {
    std::cerr << "webhook: " << s.status().message() << "\n";
    return false;
  }
  webhooks_ = std::move(*s);
  p_.log("info", "serving admission webhooks over HTTPS on port " + std::to_string(webhooks_->port()));
  if (p_.config.internal_cert_management) {
    renewer_ = std::thread([this, pem = opts.cert_pem] { RenewWebhookCert(pem); });
  }
  return true;
}

Result<serving::ServingCert> Servers::WebhookCert() {
  serving::WebhookCertConfig certs;
  certs.ns = p_.config.cert_namespace;
  certs.service_name = p_.config.webhook_service_name;
  certs.secret_name = p_.config.webhook_secret_name;
  auto cert = serving::EnsureWebhookCert(p_.client, certs, clock_.WallNow());
  // (kubectl apply creates the webhook configurations after the Deployment: wait a minute.)
  for (int i = 0; i < 30 && !cert.ok() && cert.status().code() == StatusCode::kNotFound; ++i) {
    if (i == 0) p_.log("info", cert.status().message() + "; waiting for it");
    clock_.SleepFor(std::chrono::seconds(2));
    cert = serving::EnsureWebhookCert(p_.client, certs, clock_.WallNow());
  }
  return cert;
}

void Servers::RenewWebhookCert(std::string serving_pem) {
  std::unique_lock<std::mutex> l(mu_);
  while (!stopping_) {
    clock_.WaitUntil(stop_cv_, l, clock_.Now() + std::chrono::hours(1));
    if (stopping_) return;
    l.unlock();
    auto cert = WebhookCert();
    if (!cert.ok()) {
      p_.log("warn", "renewing the webhook certificate: " + cert.status().message());
    } else if (cert->cert_pem != serving_pem) {
      Status set = webhooks_->SetCertificate(cert->cert_pem, cert->key_pem);
      if (set.ok()) serving_pem = cert->cert_pem;
      p_.log(set.ok() ? "info" : "warn",
             set.ok() ? "serving the renewed webhook certificate" : "renewed webhook certificate: " + set.message());
    }
    l.lock();
  }
}

}  // namespace rota::controller
