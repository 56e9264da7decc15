// A process that campaigns for a Lease with rota's LeaderElector, for the leader-election
// integration test: prints "leading" when it leads and "stopped" when it stops; releases the
// lease on SIGTERM (a SIGKILL leaves it to expire).
//
//   rota_test_lease_holder KUBECONFIG NAMESPACE LEASE IDENTITY LEASE_S RENEW_S RETRY_S

#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "rota/apiclient/leader.h"

namespace {
std::atomic<bool> g_stop{false};
void OnTerm(int) { g_stop = true; }
}  // namespace

int main(int argc, char** argv) {
  if (argc != 8) {
    std::fprintf(stderr, "usage: %s KUBECONFIG NAMESPACE LEASE IDENTITY LEASE_S RENEW_S RETRY_S\n", argv[0]);
    return 2;
  }
  std::signal(SIGTERM, OnTerm);
  auto cfg = rota::apiclient::LoadKubeconfig(argv[1]);
  if (!cfg.ok()) {
    std::fprintf(stderr, "%s\n", cfg.status().message().c_str());
    return 1;
  }
  auto client = rota::apiclient::Client::Create(*cfg);
  if (!client.ok()) return 1;
  rota::apiclient::LeaderElectionConfig le;
  le.lease_namespace = argv[2];
  le.lease_name = argv[3];
  le.identity = argv[4];
  le.lease_duration = std::chrono::seconds(std::atoi(argv[5]));
  le.renew_deadline = std::chrono::seconds(std::atoi(argv[6]));
  le.retry_period = std::chrono::seconds(std::atoi(argv[7]));
  rota::apiclient::LeaderElector elector(**client, le);
  elector.Run(
      g_stop,
      [] {
        std::printf("leading\n");
        std::fflush(stdout);
      },
      [] {
        std::printf("stopped\n");
        std::fflush(stdout);
      });
  return 0;
}
