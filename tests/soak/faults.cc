#include "soak/faults.h"

#include <signal.h>

#include <fstream>
#include <iostream>
#include <thread>

#include "support/kube.h"

namespace rota::soak {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// The leader's pid, waiting up to 30 s for one of the replicas to hold the lease.
pid_t Leader(FaultTargets& t) {
  for (auto deadline = Clock::now() + 30s; Clock::now() < deadline; std::this_thread::sleep_for(200ms)) {
    auto lease = t.client.Get(apiclient::resources::kLeases, t.lease_namespace, t.lease_name);
    if (!lease.ok()) continue;
    if (pid_t pid = t.replicas.PidOf((*lease)["spec"].value("holderIdentity", "")); pid > 0) return pid;
  }
  std::cerr << "soak: no replica holds lease " << t.lease_namespace << "/" << t.lease_name << "\n";
  return 0;
}

bool RestartApiserver(FaultTargets& t) {
  const auto script = std::filesystem::path(ROTA_SOURCE_DIR) / "hack" / "cluster.sh";
  testing::CommandResult r =
      testing::Run({"env", "ROTA_CLUSTER_DIR=" + t.cluster_dir.string(), script.string(), "restart", "kube-apiserver"});
  if (!r.ok()) std::cerr << "soak: apiserver restart failed: " << r.err << "\n";
  return r.ok();
}

// Compacts etcd's history up to its current revision: every older resourceVersion is gone.
bool CompactEtcd(FaultTargets& t) {
  std::ifstream in(t.cluster_dir / "endpoints");
  std::string line, etcd;
  while (std::getline(in, line))
    if (line.rfind("etcd=", 0) == 0) etcd = line.substr(5);
  testing::CommandResult range =
      testing::Run({"curl", "-sf", "-X", "POST", etcd + "/v3/kv/range", "-d", R"({"key":"AA=="})"});
  if (!range.ok()) {
    std::cerr << "soak: etcd at '" << etcd << "' did not answer: " << range.err << "\n";
    return false;
  }
  const std::string revision = nlohmann::json::parse(range.out)["header"]["revision"];
  testing::CommandResult compact = testing::Run({"curl", "-sf", "-X", "POST", etcd + "/v3/kv/compaction", "-d",
                                                 R"({"revision":")" + revision + R"(","physical":true})"});
  if (!compact.ok()) std::cerr << "soak: etcd compaction failed: " << compact.err << "\n";
  return compact.ok();
}

}  // namespace

std::optional<Clock::time_point> Inject(const Fault& fault, FaultTargets& t) {
  switch (fault.kind) {
    case FaultKind::kKillLeader: {
      const pid_t leader = Leader(t);
      if (leader == 0) return std::nullopt;
      kill(leader, SIGKILL);
      return Clock::now() + t.lease_duration;
    }
    case FaultKind::kStopLeader: {
      const pid_t leader = Leader(t);
      if (leader == 0) return std::nullopt;
      kill(leader, SIGSTOP);
      std::this_thread::sleep_for(fault.length);
      kill(leader, SIGCONT);
      return Clock::now();
    }
    case FaultKind::kRestartApiserver:
      if (!RestartApiserver(t)) return std::nullopt;
      return Clock::now();
    case FaultKind::kCompactEtcd:
      if (!CompactEtcd(t)) return std::nullopt;
      t.proxy.CutAll();  // rota's watches reconnect from versions that are gone
      return Clock::now();
    case FaultKind::kStallProxy:
      t.proxy.Stall();
      std::this_thread::sleep_for(fault.length);
      t.proxy.Resume();
      return Clock::now();
    case FaultKind::kCutProxy:
      t.proxy.CutAll();
      return Clock::now();
    case FaultKind::kFreezeProxy:
      // The leader's Lease renewal hangs on a silent connection, so it steps down; no one can
      // lead again before its Lease runs out.
      t.proxy.FreezeAll();
      return Clock::now() + t.lease_duration;
  }
  return std::nullopt;
}

}  // namespace rota::soak
