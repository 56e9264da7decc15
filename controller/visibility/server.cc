#include "visibility/server.h"

#include <iostream>

#include "serving/self_signed.h"

namespace rota::visibility {

Visibility::Visibility(controller::ClusterCache& cache, controller::QueueController& controller, controller::Logger log)
    : cache_(cache), log_(std::move(log)) {
  board_ = std::make_unique<VisibilityBoard>(
      apiclient::RealClock(), [&controller] { controller.Wake(); }, VisibilityBoard::Options{});
  publisher_ = std::make_unique<ViewPublisher>(*board_, history_);
  controller.SetPassObserver(publisher_.get());
  cache.OnFinishedRun([this](const controller::FinishedRun& run) { history_.Observe(run); });
}

Visibility::~Visibility() {
  if (server_) server_->Stop();
}

bool Visibility::StartApi(const controller::RunConfig& config, apiclient::Client& client) {
  if (config.visibility_address == "0") return true;
  auto front_proxy = LoadFrontProxyConfig(client);
  if (!front_proxy.ok()) {
    std::cerr << "visibility: " << front_proxy.status().message() << "\n";
    return false;
  }
  controller::HttpsOptions opts;
  opts.name = "visibility";
  opts.address = config.visibility_address;
  opts.cert_file = config.visibility_cert_file;
  opts.key_file = config.visibility_key_file;
  opts.client_ca_pem = front_proxy->client_ca_pem;
  opts.threads = 4;  // (a request may wait for a fresh view; discovery must not wait behind it)
  if (opts.cert_file.empty()) {
    auto made = serving::MakeServingCert(
        {"rota-visibility", {"rota-visibility.rota-system.svc", "localhost"}, true, std::chrono::system_clock::now()});
    if (!made.ok()) {
      std::cerr << "visibility: " << made.status().message() << "\n";
      return false;
    }
    opts.cert_pem = made->cert_pem + made->ca_pem;
    opts.key_pem = made->key_pem;
  }
  reviewer_ = serving::NewApiReviewer(client);
  api_ = std::make_unique<VisibilityApi>(
      *front_proxy, *reviewer_, *board_,
      [this](const std::string& ns, const std::string& name) {
        return cache_.local_queues().Get(ns + "/" + name) != nullptr;
      },
      log_);
  opts.get_any = [this](const controller::HttpsRequest& r) { return api_->Serve(r); };
  auto s = controller::HttpsServer::Start(
      opts, {},
      [](const std::string&, std::string_view) {
        return controller::HttpReply{405, "application/json", R"({"kind":"Status","code":405})"};
      },
      log_);
  if (!s.ok()) {
    std::cerr << "visibility: " << s.status().message() << "\n";
    return false;
  }
  server_ = std::move(*s);
  log_("info", "visibility API over HTTPS on port " + std::to_string(server_->port()));
  return true;
}

}  // namespace rota::visibility
