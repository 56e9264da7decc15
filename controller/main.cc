// rota: a batch-queue controller for shared GPU clusters (Kueue's API, in C++).
//
//   rota run [--kubeconfig FILE] [--config rota.yaml]
//   rota simulate [--fair-sharing] FILE...
//   rota version

#include <CLI/CLI.hpp>
#include <jemalloc/jemalloc.h>
#include <nlohmann/json.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "http_server.h"
#include "https_server.h"
#include "job_controller.h"
#include "metrics.h"
#include "queue_controller.h"
#include "rota/apiclient/config.h"
#include "rota/apiclient/leader.h"
#include "rota/apiclient/thread_name.h"
#include "run_config.h"
#include "simulate.h"
#include "webhook/admission_review.h"
#include "webhook/cluster_view.h"
#include "webhook/webhooks.h"

#ifndef ROTA_VERSION
#define ROTA_VERSION "0.0.0-dev"
#endif

// jemalloc's options, read before main (MALLOC_CONF in the environment still overrides them). One
// arena for all threads: rota's threads allocate little at a time, so per-thread arenas mostly
// held freed pages apart (Kueue's baseline benchmark: peak RSS 65.9 -> 62.2 MiB, CPU unchanged).
// Freed pages go back to the system over 10 s: a pass allocates its working arrays afresh, and
// passes come at most 2 s apart, so with pages returned within a second every pass faulted its
// arrays in again (a tenth of the loop's CPU in Kueue's large-scale benchmark).
extern "C" const char* malloc_conf;
const char* malloc_conf = "narenas:1,dirty_decay_ms:10000,muzzy_decay_ms:0";

namespace {

std::atomic<bool> g_stop{false};

// Where this run's CPU went, by thread name, largest first.
std::string CpuByThread() {
  std::vector<std::pair<double, std::string>> sorted;
  for (const auto& [name, secs] : rota::apiclient::ThreadCpuSeconds()) sorted.emplace_back(secs, name);
  std::sort(sorted.rbegin(), sorted.rend());
  std::string out;
  char buf[96];
  for (const auto& [secs, name] : sorted) {
    std::snprintf(buf, sizeof buf, "%s%s %.2f s", out.empty() ? "" : ", ", name.c_str(), secs);
    out += buf;
  }
  return out;
}

void OnSignal(int) { g_stop = true; }

// One admission request: parse the review, run the path's rule, answer with a review. A request
// rota cannot read is a 400 with the reason (and a log line); an unknown path a 404.
rota::controller::HttpReply ServeWebhook(const std::string& path, std::string_view body, const rota::webhook::ClusterView& view,
                                         rota::controller::Metrics& metrics,
                                         const rota::controller::QueueController::Logger& log) {
  using rota::controller::HttpReply;
  const auto start = std::chrono::steady_clock::now();
  HttpReply reply;
  const rota::webhook::Route* route = nullptr;
  for (const auto& r : rota::webhook::Routes())
    if (r.path == path) route = &r;
  if (!route) {
    reply = {404, "text/plain; charset=utf-8", "no webhook at " + path + "\n"};
  } else if (auto req = rota::webhook::ParseAdmissionReview(body); !req.ok()) {
    log("warn", "webhook " + path + ": bad AdmissionReview (" + std::to_string(body.size()) + " bytes): " + req.status().message());
    reply = {400, "text/plain; charset=utf-8", "bad AdmissionReview: " + req.status().message() + "\n"};
  } else {
    try {
      const rota::webhook::AdmissionResponse res = route->handle(*req, view);
      if (!res.allowed) log("info", "webhook " + path + " denied " + req->operation + ": " + res.message);
      reply = {200, "application/json", rota::webhook::EncodeAdmissionReview(req->uid, res)};
    } catch (const std::exception& e) {
      // A bug in a rule (the fuzzer looks for them) must cost one request, not the process.
      log("error", "webhook " + path + " failed on " + req->operation + " " + req->kind + " " + req->namespace_ + "/" + req->name + ": " + e.what());
      reply = {500, "text/plain; charset=utf-8", std::string("internal error: ") + e.what() + "\n"};
    }
  }
  metrics.Add("controller_runtime_webhook_requests_total", {{"webhook", path}, {"code", std::to_string(reply.status)}});
  metrics.Observe("controller_runtime_webhook_latency_seconds", {{"webhook", path}},
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return reply;
}

// Logs to stderr through spdlog: text for people, JSON lines for machines.
rota::controller::QueueController::Logger MakeLogger(const rota::controller::RunConfig& c) {
  auto logger = spdlog::stderr_logger_mt("rota");
  logger->set_level(spdlog::level::from_str(c.log_level));
  const bool json = c.log_format == "json";
  logger->set_pattern(json ? R"({"time":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","msg":%v})" : "%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v",
                      spdlog::pattern_time_type::utc);
  return [logger, json](const std::string& level, const std::string& message) {
    const std::string text = json ? nlohmann::json(message).dump() : message;
    logger->log(spdlog::level::from_str(level), text);
  };
}

int RunController(const std::string& kubeconfig, const std::string& config_file) {
  rota::controller::RunConfig config;
  if (!config_file.empty()) {
    std::ifstream in(config_file);
    if (!in) {
      std::cerr << config_file << ": cannot be read\n";
      return 2;
    }
    std::stringstream text;
    text << in.rdbuf();
    auto parsed = rota::controller::ParseRunConfig(text.str(), config_file);
    if (!parsed.ok()) {
      std::cerr << parsed.status().message() << "\n";
      return 2;
    }
    config = *parsed;
  }
  auto log = MakeLogger(config);
  auto rest = kubeconfig.empty() && std::getenv("KUBERNETES_SERVICE_HOST") && !std::getenv("KUBECONFIG")
                  ? rota::apiclient::InClusterConfig()
                  : rota::apiclient::LoadKubeconfig(kubeconfig);
  if (!rest.ok()) {
    std::cerr << "kubeconfig: " << rest.status().message() << "\n";
    return 2;
  }
  rest->qps = config.qps;
  rest->burst = config.burst;
  rest->http2 = rest->http2 && config.http2;  // DISABLE_HTTP2 in the environment still wins
  rest->user_agent = std::string("rota/") + ROTA_VERSION;
  auto client = rota::apiclient::Client::Create(*rest);
  if (!client.ok()) {
    std::cerr << "kubeconfig: " << client.status().message() << "\n";
    return 2;
  }
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  log("info", std::string("rota ") + ROTA_VERSION + " starting against " + rest->server);

  rota::controller::Metrics metrics;
  metrics.Set("kueue_build_info", {{"git_version", ROTA_VERSION}, {"compiler", "rota (C++)"}, {"platform", "linux"}}, 1);
  rota::apiclient::EventRecorder events(**client, "rota");
  rota::controller::QueueController controller(**client, config, log, &metrics, &events);
  std::atomic<bool> standing_by{config.leader_election};
  using rota::controller::HttpReply;
  std::unique_ptr<rota::controller::HttpServer> metrics_server, health_server;
  if (config.metrics_address != "0") {
    auto s = rota::controller::HttpServer::Start(config.metrics_address, {{"/metrics", [&] {
      controller.ExportWriterMetrics();
      metrics.Set("rota_events_dropped_total", {}, static_cast<double>(events.dropped()));
      return HttpReply{200, "text/plain; version=0.0.4; charset=utf-8", metrics.Render()};
    }}});
    if (!s.ok()) {
      std::cerr << "metrics.bindAddress: " << s.status().message() << "\n";
      return 2;
    }
    metrics_server = std::move(*s);
    log("info", "serving /metrics on port " + std::to_string(metrics_server->port()));
  }
  if (config.health_address != "0") {
    auto s = rota::controller::HttpServer::Start(config.health_address, {
        {"/healthz", [] { return HttpReply{200, "text/plain; charset=utf-8", "ok\n"}; }},
        {"/readyz", [&] {
           // Ready once the caches are synced, or while standing by for the lease.
           const bool ready = standing_by || controller.HasSynced();
           return HttpReply{ready ? 200 : 503, "text/plain; charset=utf-8", ready ? "ok\n" : "caches not synced\n"};
         }}});
    if (!s.ok()) {
      std::cerr << "health.bindAddress: " << s.status().message() << "\n";
      return 2;
    }
    health_server = std::move(*s);
    log("info", "serving /healthz and /readyz on port " + std::to_string(health_server->port()));
  }
  // Admission webhooks: served by every replica (the apiserver may call any), leader or not.
  rota::webhook::InformerView view(**client, controller);
  std::unique_ptr<rota::controller::HttpsServer> webhook_server;
  if (config.webhook_address != "0") {
    controller.Start();  // the caches the webhooks read
    rota::controller::HttpsOptions opts;
    opts.address = config.webhook_address;
    opts.cert_file = config.webhook_cert_file;
    opts.key_file = config.webhook_key_file;
    auto s = rota::controller::HttpsServer::Start(
        opts, {{"/healthz", [] { return HttpReply{200, "text/plain; charset=utf-8", "ok\n"}; }}},
        [&](const std::string& path, std::string_view body) { return ServeWebhook(path, body, view, metrics, log); }, log);
    if (!s.ok()) {
      std::cerr << "webhook: " << s.status().message() << "\n";
      return 2;
    }
    webhook_server = std::move(*s);
    log("info", "serving admission webhooks over HTTPS on port " + std::to_string(webhook_server->port()));
  }
  rota::controller::JobController jobs(**client, controller, log, config, &events, &metrics);
  // Both loops until `stop`: the queue controller on this thread, the Job integration beside it.
  auto run_all = [&](const std::atomic<bool>& stop) {
    std::thread job_thread([&] {
      rota::apiclient::NameThisThread("jobs");
      jobs.Run(stop);
    });
    controller.Run(stop);
    job_thread.join();
  };
  if (!config.leader_election) {
    run_all(g_stop);
  } else {
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    rota::apiclient::LeaderElectionConfig le;
    le.lease_name = config.lease_name;
    le.lease_namespace = config.lease_namespace;
    le.identity = std::string(host) + "_" + std::to_string(getpid());
    rota::apiclient::LeaderElector elector(**client, le);
    std::thread worker;
    std::atomic<bool> stop_work{false};
    elector.Run(
        g_stop,
        [&] {
          log("info", "became the leader (" + le.identity + ")");
          standing_by = false;
          worker = std::thread([&] { run_all(stop_work); });
        },
        [&] {
          log("info", "stopped leading");
          stop_work = true;
          if (worker.joinable()) worker.join();
        });
  }
  // The peak resident size of this program image (VmHWM): what a harness that measures
  // rusage may not show, since a process started with vfork+exec inherits its parent's peak.
  std::string peak = "?";
  if (std::ifstream status("/proc/self/status"); status) {
    for (std::string line; std::getline(status, line);)
      if (line.rfind("VmHWM:", 0) == 0) peak = line.substr(line.find_first_not_of(" \t", 6));
  }
  log("info", "peak resident memory (VmHWM): " + peak);
  // Pages faulted in (minor faults): memory the allocator gave back and took again costs these.
  if (rusage usage{}; getrusage(RUSAGE_SELF, &usage) == 0)
    log("info", "minor page faults: " + std::to_string(usage.ru_minflt));
  log("info", "CPU by thread: " + CpuByThread());
  log("info", "apiserver requests: " + std::to_string((*client)->requests_sent()) + " over " +
                  std::to_string((*client)->connections_opened()) + " connections");
  {
    // How much of the heap is live now, against what the allocator keeps resident (fragmentation
    // and pages not yet returned). jemalloc's statistics are refreshed by writing "epoch".
    uint64_t epoch = 1;
    size_t allocated = 0, resident = 0, len = sizeof(size_t);
    mallctl("epoch", nullptr, nullptr, &epoch, sizeof(epoch));
    if (mallctl("stats.allocated", &allocated, &len, nullptr, 0) == 0 &&
        mallctl("stats.resident", &resident, &len, nullptr, 0) == 0) {
      log("info", "heap at stop: " + std::to_string(allocated >> 20) + " MiB in use of " + std::to_string(resident >> 20) +
                      " MiB resident");
    }
  }
  const auto s = controller.stats();
  log("info", "stopped after " + std::to_string(s.passes) + " passes: " + std::to_string(s.admitted) + " admitted, " +
                  std::to_string(s.preempted) + " preempted, " + std::to_string(s.status_writes) + " status writes (" + std::to_string(s.writer_wakes) + " writer wake-ups); pending reasons: " +
                  std::to_string(s.pending_first) + " first, " + std::to_string(s.pending_new_reason) + " new reasons, " +
                  std::to_string(s.pending_new_message) + " new messages");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rota: a batch-queue controller for shared GPU clusters, speaking Kueue's API"};
  app.require_subcommand(1);

  auto* version = app.add_subcommand("version", "Print rota's version");
  version->callback([] { std::cout << "rota " << ROTA_VERSION << "\n"; });

  int exit_code = 0;
  std::string kubeconfig, config_file;
  auto* run = app.add_subcommand("run", "Run the controller: admit Workloads by the queues' quotas and write status");
  run->add_option("--kubeconfig", kubeconfig, "kubeconfig file(s), colon-separated (default: $KUBECONFIG, ~/.kube/config, or in-cluster)");
  run->add_option("--config", config_file, "rota.yaml with client, leader election, fair sharing, scheduling and logging settings");
  run->callback([&] { exit_code = RunController(kubeconfig, config_file); });

  rota::simulate::Options options;
  std::vector<std::string> files;
  auto* simulate = app.add_subcommand(
      "simulate",
      "Schedule the Kueue objects in FILEs (ResourceFlavor, Cohort, ClusterQueue, LocalQueue, "
      "WorkloadPriorityClass, Workload; kueue.x-k8s.io/v1beta2) until nothing changes, and print "
      "the decisions as JSON");
  simulate->add_option("files", files, "YAML files, one or more documents each")->required();
  simulate->add_flag("--fair-sharing", options.fair_sharing,
                     "Order queues of a cohort by weighted share and preempt to even shares");
  simulate->add_option("--max-passes", options.max_passes, "Stop after this many passes")
      ->check(CLI::PositiveNumber);
  simulate->callback([&] { exit_code = rota::simulate::Run(files, options, std::cout, std::cerr); });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return exit_code;
}
