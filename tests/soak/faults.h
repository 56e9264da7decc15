#pragma once

// Injects the soak's faults into the local control plane, the replicas and the proxy.

#include <chrono>
#include <filesystem>
#include <string>

#include "rota/apiclient/client.h"
#include "soak/fault_schedule.h"
#include "soak/replicas.h"
#include "support/tcp_proxy.h"

namespace rota::soak {

struct FaultTargets {
  apiclient::Client& client;  // straight to the apiserver
  Replicas& replicas;
  testing::TcpProxy& proxy;
  std::filesystem::path cluster_dir;  // hack/cluster.sh's state directory
  std::string lease_namespace, lease_name;
  std::chrono::seconds lease_duration;
};

// Injects `fault`, waits out its length and lifts it. Returns when rota could first be expected
// to work again (for a kill, when the dead leader's lease has run out), or nullopt (after saying
// why on stderr) when the fault could not be injected.
std::optional<std::chrono::steady_clock::time_point> Inject(const Fault& fault, FaultTargets& targets);

}  // namespace rota::soak
