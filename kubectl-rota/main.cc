// kubectl-rota: the kubectl plugin for rota's queues (`kubectl rota --help`). The only code here
// is what a test does not share: reading the process's arguments, environment and clock.

#include <chrono>
#include <iostream>

#include "rota/apiclient/client.h"
#include "rota/apiclient/config.h"
#include "rota/kubectl/cli.h"
#include "rota/kubectl/context.h"
#include "rota/kubectl/kubeconfig_namespace.h"

namespace {

using namespace rota::kubectl;

int Dispatch(const Context& ctx) {
  switch (ctx.inv.command) {
    case Command::kQueues:
      return RunQueues(ctx);
    case Command::kWhy:
      return RunWhy(ctx);
    case Command::kPreempted:
      return RunPreempted(ctx);
    case Command::kTop:
      return RunTop(ctx);
  }
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  Invocation inv;
  if (auto code = ParseCommandLine(std::vector<std::string>(argv + 1, argv + argc), inv, std::cout, std::cerr)) {
    return *code;
  }
  auto config = rota::apiclient::LoadKubeconfig(inv.kubeconfig, inv.context);
  if (!config.ok()) {
    std::cerr << "error: " << config.status().message() << "\n";
    return 1;
  }
  config->user_agent = "kubectl-rota";
  auto client = rota::apiclient::Client::Create(*config);
  if (!client.ok()) {
    std::cerr << "error: " << client.status().message() << "\n";
    return 1;
  }
  auto cluster = NewApiClusterReader(**client, std::cerr);
  const std::string ns = inv.ns.empty() ? ContextNamespace(inv.kubeconfig, inv.context) : inv.ns;
  const int64_t now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  return Dispatch(Context{inv, *cluster, ns, now, std::cout, std::cerr});
}
