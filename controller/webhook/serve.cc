#include "serve.h"

#include <exception>

#include "admission_review.h"

namespace rota::webhook {
namespace {

using controller::HttpReply;

HttpReply Handle(const Route& route, const std::string& path, std::string_view body, const ClusterView& view,
                 const controller::Logger& log) {
  auto req = ParseAdmissionReview(body);
  if (!req.ok()) {
    log("warn", "webhook " + path + ": bad AdmissionReview (" + std::to_string(body.size()) +
                    " bytes): " + req.status().message());
    return {400, "text/plain; charset=utf-8", "bad AdmissionReview: " + req.status().message() + "\n"};
  }
  try {
    const AdmissionResponse res = route.handle(*req, view);
    if (!res.allowed) log("info", "webhook " + path + " denied " + req->operation + ": " + res.message);
    return {200, "application/json", EncodeAdmissionReview(req->uid, res)};
  } catch (const LookupFailed& e) {
    log("warn", "webhook " + path + " could not decide " + req->operation + " " + req->kind + " " + req->namespace_ +
                    "/" + req->name + ": " + e.what());
    return {503, "text/plain; charset=utf-8", std::string(e.what()) + "\n"};
  } catch (const std::exception& e) {
    log("error", "webhook " + path + " failed on " + req->operation + " " + req->kind + " " + req->namespace_ + "/" +
                     req->name + ": " + e.what());
    return {500, "text/plain; charset=utf-8", std::string("internal error: ") + e.what() + "\n"};
  }
}

}  // namespace

HttpReply ServeWebhook(const std::string& path, std::string_view body, const ClusterView& view,
                       controller::Metrics& metrics, const controller::Logger& log, apiclient::Clock& clock) {
  const auto start = clock.Now();
  const Route* route = nullptr;
  for (const auto& r : Routes())
    if (r.path == path) route = &r;
  // Only requests to a webhook are counted, by its path: a path taken from the request as a label
  // would let any client grow /metrics without bound.
  if (!route) return HttpReply{404, "text/plain; charset=utf-8", "no webhook at " + path + "\n"};
  const HttpReply reply = Handle(*route, path, body, view, log);
  metrics.Add("controller_runtime_webhook_requests_total", {{"webhook", path}, {"code", std::to_string(reply.status)}});
  metrics.Observe("controller_runtime_webhook_latency_seconds", {{"webhook", path}},
                  std::chrono::duration<double>(clock.Now() - start).count());
  return reply;
}

}  // namespace rota::webhook
