#pragma once

// What every command runs with: the invocation, the cluster, the time, and where to write.

#include <cstdint>
#include <ostream>
#include <string>

#include "rota/kubectl/cli.h"
#include "rota/kubectl/cluster.h"

namespace rota::kubectl {

struct Context {
  const Invocation& inv;
  ClusterReader& cluster;
  std::string ns;   // the namespace resolved (-n, else the context's, else "default")
  int64_t now = 0;  // Unix seconds, read once by main
  std::ostream& out;
  std::ostream& err;

  // The namespace to list in: "" for -A.
  std::string ListNamespace() const { return inv.all_namespaces ? std::string() : ns; }
};

// Prints `failure` as kubectl does and returns the exit code for it (1).
int Fail(const Context& ctx, const Failure& failure);

int RunQueues(const Context& ctx);
int RunWhy(const Context& ctx);
int RunPreempted(const Context& ctx);
int RunTop(const Context& ctx);

}  // namespace rota::kubectl
