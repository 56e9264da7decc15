// rota-soak: the chaos soak. Two rota replicas with leader election run against the local control
// plane through a TCP proxy, under a stream of Jobs and a seeded schedule of faults, while an
// independent auditor checks the invariants (soak/auditor.h). Prints its figures and the seed;
// exits 1 on any violation.
//
//   rota-soak --rota build/bin/rota --kubeconfig .cluster/kubeconfig --duration 180s [--seed N]

#include <yaml-cpp/yaml.h>
#include <CLI/CLI.hpp>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <set>
#include <thread>

#include "rota/apiclient/config.h"
#include "rota/apiclient/informer.h"
#include "soak/auditor.h"
#include "soak/fault_schedule.h"
#include "soak/faults.h"
#include "soak/job_stream.h"
#include "soak/replicas.h"
#include "soak/soak_setup.h"
#include "soak/trainer.h"
#include "support/kube.h"
#include "support/tcp_proxy.h"

namespace rota::soak {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

struct Options {
  std::string rota, kubeconfig, out = "soak-out";
  std::string duration = "180s";
  uint64_t seed = 0;
  int replicas = 2;
  int mean_gap_ms = 1500;
  int recovery_limit_s = 10;
  int drain_s = 240;
};

constexpr std::chrono::seconds kLease{5};
// The replicas' clientConnection.watchIdleTimeout: a frozen connection is noticed only after it,
// so a freeze is given that much more than the recovery limit.
constexpr std::chrono::seconds kWatchIdle{20};

std::chrono::seconds ParseSeconds(const std::string& s) {
  const int64_t n = std::stoll(s);
  return std::chrono::seconds(s.back() == 'm' ? n * 60 : n);
}

// The kubeconfig with its server replaced by the proxy's address.
std::string ProxiedKubeconfig(const std::string& kubeconfig, uint16_t port, const fs::path& out) {
  YAML::Node config = YAML::LoadFile(kubeconfig);
  for (YAML::Node cluster : config["clusters"])
    cluster["cluster"]["server"] = "https://127.0.0.1:" + std::to_string(port);
  const fs::path path = out / "kubeconfig-proxied";
  std::ofstream(path) << YAML::Dump(config) << "\n";
  return path.string();
}

std::string RotaConfig(const Setup& setup, const fs::path& out) {
  const fs::path path = out / "rota.yaml";
  std::ofstream(path) << "leaderElection: {enabled: true, leaseName: rota-soak, leaseNamespace: " << setup.ns
                      << ", leaseDuration: " << kLease.count() << "s, renewDeadline: 3s, retryPeriod: 1s}\n"
                      << "metrics: {bindAddress: \"0\"}\nhealth: {bindAddress: \"0\"}\n"
                      << "clientConnection: {watchIdleTimeout: " << kWatchIdle.count() << "s}\n";
  return path.string();
}

// Lists of the soak namespace's pods, Workloads and pods again, every second, for CheckPods.
void AuditPods(apiclient::Client& client, const Setup& setup, Auditor& auditor, const std::atomic<bool>& stop) {
  namespace r = apiclient::resources;
  while (!stop) {
    auto before = client.ListAll(r::kPods, setup.ns);
    auto workloads = client.ListAll(r::kWorkloads, setup.ns);
    auto after = client.ListAll(r::kPods, setup.ns);
    if (before.ok() && workloads.ok() && after.ok()) auditor.CheckPods(before->items, workloads->items, after->items);
    auditor.CheckSuspended(Clock::now(), 2s);
    for (int i = 0; i < 10 && !stop; ++i) std::this_thread::sleep_for(100ms);
  }
}

// Lists `resource` in the soak's namespace and watches it from there, handing the list to
// `on_list` and each event to `on_event`, until `stop`; lists again when a watch cannot resume.
// The auditor's own loop rather than rota's informer: it sees each list whole, so that it can
// judge the state a list shows rather than the states its items pass through one by one.
void ListAndWatch(apiclient::Client& client, const apiclient::Resource& resource, const Setup& setup,
                  const std::atomic<bool>& stop, const std::function<void(const std::vector<Json>&)>& on_list,
                  const std::function<void(const apiclient::WatchEvent&)>& on_event) {
  while (!stop) {
    auto list = client.ListAll(resource, setup.ns);
    if (!list.ok()) {
      std::this_thread::sleep_for(200ms);
      continue;
    }
    on_list(list->items);
    std::string rv = list->resource_version;
    while (!stop) {
      apiclient::WatchOptions wo;
      wo.resource_version = rv;
      wo.timeout_seconds = 60;
      auto watched = client.Watch(
          resource, setup.ns, wo,
          [&](apiclient::WatchEvent& e) {
            if (auto m = e.object.find("metadata"); m != e.object.end() && m->is_object())
              rv = m->value("resourceVersion", rv);
            if (e.type != "BOOKMARK") on_event(e);
            return true;
          },
          &stop);
      if (!watched.ok() && watched.error().retry == apiclient::Retry::kRelist) break;
      if (!watched.ok()) std::this_thread::sleep_for(200ms);
    }
  }
}

// The auditor's watches of the soak's Workloads and Jobs, straight to the apiserver.
std::vector<std::thread> WatchForAuditor(apiclient::Client& client, const Setup& setup, Auditor& auditor,
                                         const std::atomic<bool>& stop) {
  std::vector<std::thread> threads;
  threads.emplace_back([&] {
    ListAndWatch(
        client, apiclient::resources::kWorkloads, setup, stop,
        [&](const std::vector<Json>& all) { auditor.ReplaceWorkloads(all, Clock::now()); },
        [&](const apiclient::WatchEvent& e) { auditor.OnWorkload(e.object, e.type == "DELETED", Clock::now()); });
  });
  threads.emplace_back([&] {
    ListAndWatch(
        client, apiclient::resources::kJobs, setup, stop,
        [&](const std::vector<Json>& all) { auditor.ReplaceJobs(all); },
        [&](const apiclient::WatchEvent& e) {
          if (e.type != "DELETED") auditor.OnJob(e.object, Clock::now());
        });
  });
  return threads;
}

// Runs the schedule: each fault, then a probe timing the recovery. Returns faults by kind.
std::map<std::string, int> RunFaults(const std::vector<Fault>& schedule, FaultTargets& targets, const Setup& setup,
                                     Auditor& auditor, std::chrono::milliseconds limit,
                                     const std::filesystem::path& out_dir) {
  std::map<std::string, int> done;
  int probes = 0;
  for (const Fault& f : schedule) {
    std::this_thread::sleep_for(f.gap);
    std::cerr << "soak: " << ToString(f.kind)
              << (f.length.count() ? " for " + std::to_string(f.length.count()) + " s" : "") << "\n";
    const std::optional<Clock::time_point> lifted = Inject(f, targets);
    if (!lifted) {
      auditor.Violation("could not inject " + ToString(f.kind));
      continue;
    }
    ++done[ToString(f.kind)];
    const std::optional<Clock::time_point> admitted = Probe(targets.client, setup, ++probes, 60s);
    if (!admitted) {
      auditor.Violation("no admission within 60 s after " + ToString(f.kind));
      const std::filesystem::path stacks = out_dir / ("stacks-after-probe-" + std::to_string(probes) + ".txt");
      targets.replicas.DumpStacks(stacks);
      std::cerr << "soak:   the replicas' thread stacks are in " << stacks << "\n";
      continue;
    }
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(*admitted - std::min(*admitted, *lifted));
    std::cerr << "soak:   admissions resumed after " << took.count() << " ms\n";
    auditor.Recovered(ToString(f.kind), took, f.kind == FaultKind::kFreezeProxy ? limit + kWatchIdle : limit);
  }
  return done;
}

// Waits until every submitted Job is complete (or `timeout`), then checks them.
void Drain(apiclient::Client& client, const Setup& setup, const std::vector<std::string>& submitted, Auditor& auditor,
           std::chrono::seconds timeout) {
  namespace r = apiclient::resources;
  for (auto deadline = Clock::now() + timeout; Clock::now() < deadline; std::this_thread::sleep_for(1s)) {
    auto j = client.ListAll(r::kJobs, setup.ns);
    if (!j.ok()) continue;
    const std::set<std::string> names(submitted.begin(), submitted.end());
    size_t complete = 0;  // (of the stream's Jobs: a probe may not be deleted yet)
    for (const Json& job : j->items)
      for (const Json& c : job.value("status", Json::object()).value("conditions", Json::array()))
        if (c.value("type", "") == "Complete" && c.value("status", "") == "True" &&
            names.count(job["metadata"].value("name", "")))
          ++complete;
    if (complete >= submitted.size()) break;
  }
  auto w = client.ListAll(r::kWorkloads, setup.ns);
  auto j = client.ListAll(r::kJobs, setup.ns);
  if (!w.ok() || !j.ok()) return auditor.Violation("could not list Jobs and Workloads at the end");
  auditor.CheckFinished(submitted, j->items, w->items);
}

void Report(const Options& o, uint64_t seed, const std::vector<std::string>& submitted,
            const std::map<std::string, int>& faults, const Auditor& auditor, int starts, int checkpoints,
            const fs::path& out) {
  Json summary = {{"seed", seed},
                  {"duration", o.duration},
                  {"replicas", o.replicas},
                  {"jobs", submitted.size()},
                  {"admissions", auditor.admissions()},
                  {"evictions", auditor.evictions()},
                  {"replica_starts", starts},
                  {"checkpoints_answered", checkpoints},
                  {"faults", faults},
                  {"violations", auditor.violation_count()}};
  std::cout << "soak: seed " << seed << ", " << o.duration << ", " << o.replicas << " replicas (" << starts
            << " starts)\n";
  std::cout << "soak: " << submitted.size() << " Jobs; " << auditor.admissions() << " admissions and "
            << auditor.evictions() << " evictions seen; " << checkpoints << " checkpoint requests answered\n";
  for (const auto& [kind, n] : faults) std::cout << "soak: fault " << kind << ": " << n << "\n";
  for (const auto& [kind, worst] : auditor.worst_recovery()) {
    std::cout << "soak: worst recovery after " << kind << ": " << worst.count() << " ms\n";
    summary["worst_recovery_ms"][kind] = worst.count();
  }
  std::cout << "soak: " << auditor.violation_count() << " violations\n";
  for (const std::string& v : auditor.violations()) std::cout << "soak:   " << v << "\n";
  if (auditor.violation_count() > 0) std::cout << "soak: FAILED; replay with --seed " << seed << "\n";
  summary["violation_examples"] = auditor.violations();
  std::ofstream(out / "summary.json") << summary.dump(2) << "\n";
}

// Refuses a cluster that is not the local test control plane (the soak installs CRDs cluster-wide
// and restarts its apiserver), then installs rota's CRDs.
bool Prepare(apiclient::Client& client, const std::string& kubeconfig) {
  if (!client.Get(apiclient::resources::kConfigMaps, "kube-system", "rota-local-control-plane").ok()) {
    std::cerr << "soak: " << kubeconfig
              << " is not rota's local control plane (no ConfigMap kube-system/rota-local-control-plane); "
                 "start one with hack/cluster.sh up\n";
    return false;
  }
  const std::string crds = (fs::path(ROTA_SOURCE_DIR) / "crds").string();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"kubectl", "--kubeconfig", kubeconfig, "apply", "-f", crds},
        {"kubectl", "--kubeconfig", kubeconfig, "wait", "--for=condition=Established", "--timeout=60s", "-f", crds}}) {
    testing::CommandResult r = testing::Run(args);
    if (!r.ok()) {
      std::cerr << "soak: " << args[3] << " CRDs: " << r.err << "\n";
      return false;
    }
  }
  return true;
}

int Soak(const Options& o) {
  const uint64_t seed = o.seed ? o.seed : std::random_device{}();
  const fs::path out = fs::absolute(o.out);
  fs::create_directories(out);
  auto config = apiclient::LoadKubeconfig(o.kubeconfig);
  if (!config.ok()) {
    std::cerr << "soak: " << config.status().message() << "\n";
    return 2;
  }
  auto client = std::move(apiclient::Client::Create(*config).value());
  if (!Prepare(*client, o.kubeconfig)) return 2;
  const Setup setup = MakeSetup(std::to_string(seed % 100000));
  if (!Apply(*client, setup)) return 2;
  std::cerr << "soak: seed " << seed << ", namespace " << setup.ns << ", output in " << out << "\n";

  const std::string server = config->server;  // https://127.0.0.1:PORT
  auto proxy =
      testing::TcpProxy::Start("127.0.0.1", static_cast<uint16_t>(std::stoi(server.substr(server.rfind(':') + 1))));
  Auditor auditor(setup.limits);
  auditor.OnViolation([](const std::string& what) {
    const auto now = std::chrono::system_clock::now();
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    const int ms =
        static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%H:%M:%S", std::gmtime(&t));
    std::fprintf(stderr, "soak: %s.%03d VIOLATION %s\n", stamp, ms, what.c_str());
  });
  std::atomic<bool> stop{false}, stop_stream{false};
  std::vector<std::thread> watches = WatchForAuditor(*client, setup, auditor, stop);
  Replicas replicas(o.rota, ProxiedKubeconfig(o.kubeconfig, proxy->port(), out), RotaConfig(setup, out), out,
                    o.replicas);
  std::thread supervisor([&] {
    while (!stop) {
      replicas.Supervise();
      std::this_thread::sleep_for(500ms);
    }
  });
  std::thread pods([&] { AuditPods(*client, setup, auditor, stop); });
  JobStream stream(*client, setup, seed, std::chrono::milliseconds(o.mean_gap_ms));
  std::thread load([&] { stream.Run(stop_stream); });
  Trainers trainers(*client, setup);
  std::thread trainer([&] { trainers.Run(stop); });

  ScheduleOptions so;
  so.duration = ParseSeconds(o.duration);
  FaultTargets targets{*client, replicas, *proxy, fs::path(o.kubeconfig).parent_path(), setup.ns, "rota-soak", kLease};
  const auto faults =
      RunFaults(MakeSchedule(seed, so), targets, setup, auditor, std::chrono::seconds(o.recovery_limit_s), out);
  stop_stream = true;
  load.join();
  Drain(*client, setup, stream.submitted(), auditor, std::chrono::seconds(o.drain_s));
  stop = true;
  pods.join();
  trainer.join();
  supervisor.join();
  for (std::thread& t : watches) t.join();
  Report(o, seed, stream.submitted(), faults, auditor, replicas.starts(), trainers.answered(), out);
  Delete(*client, setup);
  return auditor.violation_count() == 0 ? 0 : 1;
}

}  // namespace
}  // namespace rota::soak

int main(int argc, char** argv) {
  rota::soak::Options o;
  CLI::App app{"rota-soak: rota under a stream of Jobs and seeded faults, with an invariant auditor"};
  app.add_option("--rota", o.rota, "the rota binary")->required();
  if (const char* env = std::getenv("KUBECONFIG")) o.kubeconfig = env;
  app.add_option("--kubeconfig", o.kubeconfig, "the local control plane's kubeconfig (default: $KUBECONFIG)");
  app.add_option("--duration", o.duration, "how long faults are injected, e.g. 180s or 30m");
  app.add_option("--seed", o.seed, "replays a run (default: a random one, printed)");
  app.add_option("--out", o.out, "directory for the replicas' logs and summary.json");
  app.add_option("--replicas", o.replicas, "rota replicas");
  app.add_option("--mean-gap-ms", o.mean_gap_ms, "mean time between Jobs");
  app.add_option("--recovery-limit", o.recovery_limit_s, "seconds within which admissions must resume after a fault");
  CLI11_PARSE(app, argc, argv);
  return rota::soak::Soak(o);
}
