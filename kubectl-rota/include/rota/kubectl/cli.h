#pragma once

// kubectl-rota's command line: kubectl's conventions (-n, -A, -o json|yaml|wide, --kubeconfig,
// --context) and the four commands. The flags are CLI11's; this file says what there is and how a
// parse ends.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace rota::kubectl {

enum class Command { kQueues, kWhy, kPreempted, kTop };
enum class Output { kTable, kWide, kJson, kYaml };
enum class GroupBy { kNamespace, kClusterQueue, kLocalQueue };

// One invocation, as parsed.
struct Invocation {
  Command command = Command::kQueues;
  std::string kubeconfig;  // empty: $KUBECONFIG, else ~/.kube/config
  std::string context;     // empty: the kubeconfig's current context
  std::string ns;          // empty: the context's namespace, else "default"
  bool all_namespaces = false;
  Output output = Output::kTable;
  std::string target;                // why: job/NAME, workload/NAME or NAME
  int64_t since_seconds = 0;         // preempted --since; 0: no limit
  GroupBy by = GroupBy::kNamespace;  // top --by
};

// Parses `args` (without the program name). Returns the exit code when the process is to end
// now: 0 after printing help to `out`, 2 (kubectl's usage error) after printing the error and a
// hint to `err`; nullopt when `inv` is to be run.
std::optional<int> ParseCommandLine(const std::vector<std::string>& args, Invocation& inv, std::ostream& out,
                                    std::ostream& err);

// kubectl's usage-error exit code.
inline constexpr int kUsageError = 2;

}  // namespace rota::kubectl
