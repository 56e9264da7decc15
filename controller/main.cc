// rota: a batch-queue controller for shared GPU clusters (Kueue's API, in C++).
//
//   rota run [--kubeconfig FILE] [--config rota.yaml]
//   rota simulate [--fair-sharing] FILE...
//   rota checkpoint-agent --annotations FILE --checkpoint-dir DIR
//                         (--signal SIGNAL --process NAME | --request-file PATH) [...]
//   rota version

#include <jemalloc/jemalloc.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include "cache/cluster_cache.h"
#include "checkpoint/agent.h"
#include "checkpoint/agent_io.h"
#include "job_controller.h"
#include "metrics.h"
#include "queue_controller.h"
#include "replay_command.h"
#include "rota/apiclient/config.h"
#include "rota/apiclient/leader.h"
#include "rota/apiclient/thread_name.h"
#include "run_config.h"
#include "scheduling/tuning.h"
#include "servers.h"
#include "simulate.h"
#include "visibility/leader_label.h"
#include "webhook/admission_review.h"
#include "webhook/cluster_view.h"
#include "webhook/webhooks.h"

#ifndef ROTA_VERSION
#define ROTA_VERSION "0.0.0-dev"
#endif

// jemalloc's options, read before main (MALLOC_CONF in the environment still overrides them). One
// arena for all threads: rota's threads allocate little at a time, so per-thread arenas mostly
// held freed pages apart. Freed pages go back to the system over 10 s: a pass allocates its
// working arrays afresh, and passes come at most 2 s apart, so pages returned sooner would be
// faulted in again by every pass (docs/performance.md has the measurements).
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

// Runs a command; an exception that escapes it (a bug: bad input is meant to be an error value)
// ends it with exit code 2 and a message, not an abort.
int Guarded(const char* command, const std::function<int()>& run) {
  try {
    return run();
  } catch (const std::exception& e) {
    std::cerr << command << ": internal error: " << e.what() << "\n";
    return 2;
  }
}

// Logs to stderr through spdlog: text for people, JSON lines for machines.
rota::controller::Logger MakeLogger(const rota::controller::RunConfig& c) {
  auto logger = spdlog::stderr_logger_mt("rota");
  logger->set_level(spdlog::level::from_str(c.log_level));
  const bool json = c.log_format == "json";
  logger->set_pattern(
      json ? R"({"time":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","msg":%v})" : "%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v",
      spdlog::pattern_time_type::utc);
  return [logger, json](const std::string& level, const std::string& message) {
    const std::string text =
        json ? nlohmann::json(message).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) : message;
    logger->log(spdlog::level::from_str(level), text);
  };
}

// The configuration file, or the default configuration without one; nullopt (after saying why on
// stderr) when it cannot be read or is not valid.
std::optional<rota::controller::RunConfig> LoadRunConfig(const std::string& config_file) {
  rota::controller::RunConfig config;
  if (config_file.empty()) return config;
  std::ifstream in(config_file);
  if (!in) {
    std::cerr << config_file << ": cannot be read\n";
    return std::nullopt;
  }
  std::stringstream text;
  text << in.rdbuf();
  auto parsed = rota::controller::ParseRunConfig(text.str(), config_file);
  if (!parsed.ok()) {
    std::cerr << parsed.status().message() << "\n";
    return std::nullopt;
  }
  return *parsed;
}

// A client for the apiserver from --kubeconfig, $KUBECONFIG or the in-cluster service account,
// with the configuration's rate limits; null (after saying why on stderr) when there is none.
std::unique_ptr<rota::apiclient::Client> Connect(const std::string& kubeconfig,
                                                 const rota::controller::RunConfig& config, std::string& server) {
  auto rest = kubeconfig.empty() && std::getenv("KUBERNETES_SERVICE_HOST") && !std::getenv("KUBECONFIG")
                  ? rota::apiclient::InClusterConfig()
                  : rota::apiclient::LoadKubeconfig(kubeconfig);
  if (!rest.ok()) {
    std::cerr << "kubeconfig: " << rest.status().message() << "\n";
    return nullptr;
  }
  rest->qps = config.qps;
  rest->burst = config.burst;
  rest->http2 = rest->http2 && config.http2;  // DISABLE_HTTP2 in the environment still wins
  rest->watch_idle_timeout = config.watch_idle_timeout;
  rest->user_agent = std::string("rota/") + ROTA_VERSION;
  server = rest->server;
  auto client = rota::apiclient::Client::Create(*rest);
  if (!client.ok()) {
    std::cerr << "kubeconfig: " << client.status().message() << "\n";
    return nullptr;
  }
  return std::move(*client);
}

// Runs `work` while this process holds the configuration's Lease, until g_stop. False when
// leader election could not start.
bool RunWhileLeading(rota::apiclient::Client& client, const rota::controller::RunConfig& config,
                     const rota::controller::Logger& log, std::atomic<bool>& standing_by,
                     const std::function<void(const std::atomic<bool>&)>& work) {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  rota::apiclient::LeaderElectionConfig le;
  le.lease_name = config.lease_name;
  le.lease_namespace = config.lease_namespace;
  le.lease_duration = std::chrono::duration_cast<std::chrono::seconds>(config.lease_duration);
  le.renew_deadline = config.renew_deadline;
  le.retry_period = config.retry_period;
  le.identity = std::string(host) + "_" + std::to_string(getpid());
  // The Lease has a client of its own, as client-go's leader election has: its requests never
  // wait behind the controller's for the rate limit, and a try (a read, then a write) gives up
  // within renewDeadline, so a request stuck on a connection that died without a word does not
  // keep the loop from stepping down.
  rota::apiclient::RestConfig lease_rest = client.config();
  lease_rest.timeout = config.renew_deadline / 2;
  lease_rest.attempts = 1;  // the elector tries again every retryPeriod
  lease_rest.qps = 5;
  lease_rest.burst = 10;
  auto lease_client = rota::apiclient::Client::Create(lease_rest);
  if (!lease_client.ok()) {
    log("error", "leader election: " + lease_client.status().message());
    return false;
  }
  // Shared with the fence, which the client keeps after this returns (as is the lease client).
  std::shared_ptr<rota::apiclient::Client> shared_lease_client = std::move(*lease_client);
  auto shared_elector = std::shared_ptr<rota::apiclient::LeaderElector>(
      new rota::apiclient::LeaderElector(*shared_lease_client, le),
      [shared_lease_client](rota::apiclient::LeaderElector* e) { delete e; });
  rota::apiclient::LeaderElector& elector = *shared_elector;
  rota::visibility::LabelOwnPod(client, false, log);  // (before the fence: a follower writes nothing)
  client.SetWriteFence([shared_elector] { return shared_elector->HoldsLease(); });
  std::thread worker;
  std::atomic<bool> stop_work{false};
  elector.Run(
      g_stop,
      [&] {
        log("info", "became the leader (" + le.identity + ")");
        rota::visibility::LabelOwnPod(client, true, log);
        standing_by = false;
        worker = std::thread([&] { work(stop_work); });
      },
      [&] {
        log("info", "stopped leading");
        stop_work = true;
        if (worker.joinable()) worker.join();
      });
  return true;
}

// What the run cost, logged at exit: peak memory, page faults, CPU by thread, requests, heap.
void LogRunCost(const rota::apiclient::Client& client, const rota::controller::Logger& log) {
  // The peak resident size of this program image (VmHWM): what a harness that measures rusage
  // may not show, since a process started with vfork+exec inherits its parent's peak.
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
  log("info", "apiserver requests: " + std::to_string(client.requests_sent()) + " over " +
                  std::to_string(client.connections_opened()) + " connections");
  // How much of the heap is live now, against what the allocator keeps resident (fragmentation
  // and pages not yet returned). jemalloc's statistics are refreshed by writing "epoch".
  uint64_t epoch = 1;
  size_t allocated = 0, resident = 0, len = sizeof(size_t);
  mallctl("epoch", nullptr, nullptr, &epoch, sizeof(epoch));
  if (mallctl("stats.allocated", &allocated, &len, nullptr, 0) == 0 &&
      mallctl("stats.resident", &resident, &len, nullptr, 0) == 0) {
    log("info", "heap at stop: " + std::to_string(allocated >> 20) + " MiB in use of " +
                    std::to_string(resident >> 20) + " MiB resident");
  }
}

void LogStats(const rota::controller::QueueController::Stats& s, const rota::controller::Logger& log) {
  log("info", "stopped after " + std::to_string(s.passes) + " passes: " + std::to_string(s.admitted) + " admitted, " +
                  std::to_string(s.preempted) + " preempted, " + std::to_string(s.status_writes) + " status writes (" +
                  std::to_string(s.writer_wakes) + " writer wake-ups); pending reasons: " +
                  std::to_string(s.pending_first) + " first, " + std::to_string(s.pending_new_reason) +
                  " new reasons, " + std::to_string(s.pending_new_message) + " new messages");
}

int RunController(const std::string& kubeconfig, const std::string& config_file) {
  const std::optional<rota::controller::RunConfig> loaded = LoadRunConfig(config_file);
  if (!loaded) return 2;
  const rota::controller::RunConfig& config = *loaded;
  auto log = MakeLogger(config);
  std::string server;
  std::unique_ptr<rota::apiclient::Client> client = Connect(kubeconfig, config, server);
  if (!client) return 2;
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  log("info", std::string("rota ") + ROTA_VERSION + " starting against " + server);

  rota::controller::Metrics metrics;
  metrics.Set("kueue_build_info", {{"git_version", ROTA_VERSION}, {"compiler", "rota (C++)"}, {"platform", "linux"}},
              1);
  rota::apiclient::EventRecorder events(*client, "rota");
  // The cache every part reads; each registers its listeners before it starts, and it stops
  // (its threads call those listeners) before any of them is destroyed.
  rota::controller::ClusterCache cache(
      *client, {std::min(rota::controller::SchedulingTuning{}.max_watch_settle, config.batch_period / 2),
                [&log](const std::string& m) { log("warn", m); }});
  rota::controller::QueueController controller(cache, *client, config, log, &metrics, &events);
  rota::controller::JobController jobs(*client, cache, log, config, &events, &metrics);
  rota::visibility::Visibility visibility(cache, controller, log);  // (registers with the cache)
  rota::controller::BudgetController budgets(cache, *client, log, &metrics, &events, rota::apiclient::RealClock(),
                                             config.budget_sync_period);
  budgets.OnGatesChanged([&controller] { controller.Wake(); });
  controller.SetBudgets(&budgets);
  std::optional<rota::controller::AdmissionUsage> admission_usage;
  if (config.admission_fair_sharing) {
    const auto& afs = *config.admission_fair_sharing;
    auto seconds = [](std::chrono::milliseconds d) {
      return std::chrono::duration_cast<std::chrono::seconds>(d).count();
    };
    admission_usage.emplace(cache, *client, log, rota::apiclient::RealClock(),
                            rota::api::AdmissionFairSharingConfig{
                                seconds(afs.half_life), seconds(afs.sampling_interval), afs.resource_weights});
    controller.SetAdmissionUsage(&*admission_usage);
  }
  struct StopFirst {
    rota::controller::ClusterCache& cache;
    ~StopFirst() { cache.Stop(); }
  } stop_cache_first{cache};
  std::atomic<bool> standing_by{config.leader_election};
  rota::webhook::InformerView view(*client, cache);
  // (After what their handlers use: they stop first.)
  rota::controller::Servers servers(
      {config, *client, controller, cache, metrics, events, standing_by, log, visibility});
  if (!servers.StartHttp()) return 2;
  if (!visibility.StartApi(config, *client)) return 2;
  if (config.webhook_address != "0") cache.Start();  // (the webhooks read it, leader or not)
  if (!servers.StartWebhooks(view)) return 2;
  // Both loops until `stop`: the queue controller on this thread, the Job integration beside it.
  auto run_all = [&](const std::atomic<bool>& stop) {
    std::thread job_thread([&] {
      rota::apiclient::NameThisThread("jobs");
      jobs.Run(stop);
    });
    std::thread budget_thread([&] {
      rota::apiclient::NameThisThread("budgets");
      budgets.Run(stop);
    });
    std::thread usage_thread([&] {
      rota::apiclient::NameThisThread("fairsharing");
      if (admission_usage) admission_usage->Run(stop);
    });
    controller.Run(stop);
    usage_thread.join();
    budget_thread.join();
    job_thread.join();
  };
  if (config.leader_election) {
    if (!RunWhileLeading(*client, config, log, standing_by, run_all)) return 2;
  } else {
    rota::visibility::LabelOwnPod(*client, true, log);  // (the only replica schedules)
    run_all(g_stop);
  }
  cache.Stop();
  LogRunCost(*client, log);
  LogStats(controller.stats(), log);
  return 0;
}

// `rota checkpoint-agent`'s flags.
struct CheckpointAgentFlags {
  rota::checkpoint::AgentOptions agent;
  int64_t poll_ms = 1000;
  std::string signal, process, request_file;
  std::string pod, pod_namespace, kubeconfig;
  std::string log_level = "info", log_format = "text";
};

// Runs the checkpoint agent (checkpoint/agent.h) for its pod until SIGTERM or SIGINT.
int RunCheckpointAgent(CheckpointAgentFlags& f) {
  rota::controller::RunConfig config;  // (the client's defaults; only the logging is set)
  config.log_level = f.log_level;
  config.log_format = f.log_format;
  const auto pod = rota::checkpoint::ResolvePodName(
      f.pod, f.pod_namespace, [](const char* key) { return std::getenv(key); },
      "/var/run/secrets/kubernetes.io/serviceaccount/namespace");
  if (!pod.ok()) {
    std::cerr << "rota checkpoint-agent: " << pod.status().message() << "\n";
    return 2;
  }
  std::string server;
  std::unique_ptr<rota::apiclient::Client> client = Connect(f.kubeconfig, config, server);
  if (!client) return 2;
  std::unique_ptr<rota::checkpoint::TrainerChannel> trainer;
  if (f.request_file.empty())
    trainer = std::make_unique<rota::checkpoint::SignalChannel>(f.process, *rota::checkpoint::ParseSignal(f.signal));
  else
    trainer = std::make_unique<rota::checkpoint::RequestFileChannel>(f.request_file);
  rota::checkpoint::PodAnnotationReporter reporter(*client, pod->pod_namespace, pod->name);
  f.agent.poll = std::chrono::milliseconds(f.poll_ms);
  f.agent.own_file = f.request_file;
  auto log = MakeLogger(config);
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  log("info", std::string("rota checkpoint-agent ") + ROTA_VERSION + " for pod " + pod->pod_namespace + "/" +
                  pod->name + " against " + server + ": requests from " + f.agent.annotations_file + " go to " +
                  (f.request_file.empty() ? f.signal + " to " + f.process : f.request_file) + ", checkpoints from " +
                  f.agent.checkpoint_dir + " are reported");
  rota::checkpoint::Agent agent(f.agent, *trainer, reporter, rota::apiclient::RealClock(), log);
  agent.Run(g_stop);
  log("info", "stopped");
  return 0;
}

// Adds `rota checkpoint-agent`; exactly one way of passing requests on must be given.
void AddCheckpointAgentCommand(CLI::App& app, CheckpointAgentFlags& f, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "checkpoint-agent",
      "Sidecar for a trainer that only knows signals or files: passes rota's checkpoint requests "
      "(rota.dev/checkpoint-requested-at) on to it, and reports the checkpoints it saves by annotating the pod "
      "rota.dev/checkpointed-at");
  cmd->add_option("--annotations", f.agent.annotations_file,
                  "The pod's annotations: a downward API volume file of metadata.annotations")
      ->required();
  cmd->add_option("--checkpoint-dir", f.agent.checkpoint_dir,
                  "Where the trainer saves checkpoints; a regular file modified later than the last one reported is "
                  "a new checkpoint (subdirectories included, names starting with '.' skipped)")
      ->required();
  auto* signal = cmd->add_option("--signal", f.signal, "Ask by sending this signal (SIGUSR1, USR1 or a number)")
                     ->check([](const std::string& v) {
                       auto s = rota::checkpoint::ParseSignal(v);
                       return s.ok() ? std::string() : s.status().message();
                     });
  auto* process = cmd->add_option("--process", f.process,
                                  "The trainer's process to signal, by its name (/proc/PID/comm) or first argument "
                                  "(needs shareProcessNamespace: true)");
  auto* request_file =
      cmd->add_option("--request-file", f.request_file, "Ask by writing the request's time to this file");
  signal->needs(process);
  process->needs(signal);
  request_file->excludes(signal)->excludes(process);
  cmd->add_option("--done-file", f.agent.done_file,
                  "Only files of this name under --checkpoint-dir count, written once a checkpoint is complete");
  cmd->add_option("--poll", f.poll_ms, "How often to look at the annotations and the directory (e.g. 500ms, 1s)")
      ->transform(CLI::AsNumberWithUnit(std::map<std::string, int64_t>{{"ms", 1}, {"s", 1000}, {"m", 60000}},
                                        CLI::AsNumberWithUnit::UNIT_REQUIRED)
                      .description(""))
      ->check([](const std::string& ms) { return std::stoll(ms) > 0 ? std::string() : "must be more than 0"; })
      ->type_name("DURATION")
      ->default_str("1s");
  cmd->add_option("--pod", f.pod, "This pod's name (default: $POD_NAME, else $HOSTNAME)");
  cmd->add_option("--namespace", f.pod_namespace,
                  "This pod's namespace (default: $POD_NAMESPACE, else the service account's namespace)");
  cmd->add_option("--kubeconfig", f.kubeconfig,
                  "kubeconfig file(s), colon-separated (default: in-cluster, else $KUBECONFIG or ~/.kube/config)");
  cmd->add_option("--log-level", f.log_level, "debug, info, warn or error")
      ->check(CLI::IsMember({"debug", "info", "warn", "error"}));
  cmd->add_option("--log-format", f.log_format, "text or json")->check(CLI::IsMember({"text", "json"}));
  cmd->callback([&f, &exit_code] {
    if (f.signal.empty() && f.request_file.empty())
      throw CLI::RequiredError("checkpoint-agent needs --signal SIGNAL with --process NAME, or --request-file PATH",
                               CLI::ExitCodes::RequiredError);
    exit_code = Guarded("rota checkpoint-agent", [&f] { return RunCheckpointAgent(f); });
  });
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
  run->add_option("--kubeconfig", kubeconfig,
                  "kubeconfig file(s), colon-separated (default: $KUBECONFIG, ~/.kube/config, or in-cluster)");
  run->add_option("--config", config_file,
                  "rota.yaml: client, leader election, fair sharing, scheduling, logging, metrics, health, webhook and "
                  "waitForPodsReady settings");
  run->callback([&] { exit_code = Guarded("rota run", [&] { return RunController(kubeconfig, config_file); }); });

  rota::simulate::Options options;
  std::vector<std::string> files;
  auto* simulate =
      app.add_subcommand("simulate",
                         "Schedule the Kueue objects in FILEs (ResourceFlavor, Cohort, ClusterQueue, LocalQueue, "
                         "WorkloadPriorityClass, Workload; kueue.x-k8s.io/v1beta2) until nothing changes, and print "
                         "the decisions as JSON");
  simulate->add_option("files", files, "YAML files, one or more documents each")->required();
  simulate->add_flag("--fair-sharing", options.fair_sharing,
                     "Order queues of a cohort by weighted share and preempt to even shares");
  simulate->add_option("--max-passes", options.max_passes, "Stop after this many passes")->check(CLI::PositiveNumber);
  std::string now;
  simulate->add_option("--now", now,
                       "The time of the simulation (RFC 3339; default: now): victims are chosen by the work they "
                       "would lose by then");
  simulate->callback([&] {
    exit_code = Guarded("rota simulate", [&] {
      auto t = now.empty()
                   ? rota::Result<int64_t>(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now()))
                   : rota::api::ParseTime(now);
      if (!t.ok() || *t <= 0) {
        std::cerr << "rota simulate: --now: \"" << now << "\" is not an RFC 3339 time such as 2026-11-26T12:00:00Z\n";
        return 2;
      }
      options.now = *t;
      return rota::simulate::Run(files, options, std::cout, std::cerr);
    });
  });

  CheckpointAgentFlags checkpoint_agent;
  AddCheckpointAgentCommand(app, checkpoint_agent, exit_code);
  rota::replay::AddReplayCommand(app, exit_code, Guarded);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return exit_code;
}
