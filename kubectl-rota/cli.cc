#include "rota/kubectl/cli.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <map>

#include "rota/api/checkpoint.h"
#include "rota/kubectl/why.h"

namespace rota::kubectl {
namespace {

constexpr const char* kRootFooter = R"(Examples:
  kubectl rota queues                  # every ClusterQueue: quota, borrowed, in use, pending
  kubectl rota why job/train-7b -n ml  # why this Job waits, and what would make room for it
  kubectl rota preempted -A --since 1h # who was preempted by whom, and the GPU-hours lost
  kubectl rota top -A --by clusterqueue

Exit codes: 0 done, 1 the cluster could not be read or the object was not found, 2 usage error.)";

// A command's help ends with its examples and where the global flags are described.
std::string Footer(const std::string& text) {
  return text + "\n\nGlobal flags (-n, -A, -o json|yaml|wide, --kubeconfig, --context): see 'kubectl rota --help'.";
}

// kubectl's flags, inherited by every command (they may come before or after it).
void DeclareGlobalFlags(CLI::App& app, Invocation& inv) {
  const std::string group = "Global flags";
  app.add_option("--kubeconfig", inv.kubeconfig, "Path to the kubeconfig file (default: $KUBECONFIG, ~/.kube/config)")
      ->group(group);
  app.add_option("--context", inv.context, "The kubeconfig context to use (default: its current-context)")
      ->group(group);
  app.add_option("-n,--namespace", inv.ns, "Namespace of the Job or Workload (default: the context's, else default)")
      ->group(group);
  app.add_flag("-A,--all-namespaces", inv.all_namespaces, "Every namespace (preempted, top)")->group(group);
  app.add_option_function<std::string>(
         "-o,--output",
         [&inv](const std::string& format) {
           const std::map<std::string, Output> formats = {
               {"json", Output::kJson}, {"yaml", Output::kYaml}, {"wide", Output::kWide}};
           auto it = formats.find(format);
           if (it == formats.end()) {
             throw CLI::ValidationError("--output", "unknown format \"" + format + "\": use json, yaml or wide");
           }
           inv.output = it->second;
         },
         "Output format: json, yaml or wide (more columns)")
      ->option_text("json|yaml|wide")
      ->group(group);
}

void DeclareQueues(CLI::App& app) {
  auto* cmd = app.add_subcommand("queues", "Each ClusterQueue: nominal quota, borrowed, in use, pending, with bars");
  cmd->footer(
      Footer("Shows the GPU resources of each queue (a queue without GPUs: all its resources), flavors added up;\n"
             "-o wide shows every resource of every flavor, with reservations and borrowing/lending limits.\n"
             "In the bar, '#' is use within the nominal quota and '+' use borrowed beyond it.\n\n"
             "Examples:\n  kubectl rota queues\n  kubectl rota queues -o wide"));
}

void DeclareWhy(CLI::App& app, Invocation& inv) {
  auto* cmd = app.add_subcommand("why", "Why a Job or Workload waits (or runs): reason, position, holders, preemption");
  cmd->add_option("TARGET", inv.target, "job/NAME, workload/NAME, or NAME (a Job, else a Workload)")
      ->required()
      ->check([](const std::string& text) {
        auto target = ParseTarget(text);
        return target.ok() ? std::string() : target.status().message();
      });
  cmd->footer(Footer(
      "Says the state, the pending reason in words, the position in the ClusterQueue and LocalQueue and the\n"
      "forecast (from the visibility API, when it is served), the admitted workloads holding the quota it needs,\n"
      "and whether preemption could help, by the ClusterQueue's spec.preemption.\n\n"
      "Examples:\n  kubectl rota why job/train-7b -n ml\n  kubectl rota why workload/job-train-7b-1f2e3 -n ml -o "
      "yaml"));
}

void DeclarePreempted(CLI::App& app, Invocation& inv) {
  auto* cmd = app.add_subcommand("preempted", "Workloads preempted: by whom, when, and the GPU-hours of work lost");
  cmd->add_option_function<std::string>(
         "--since",
         [&inv](const std::string& text) {
           auto ms = api::ParseGoDuration(text);
           if (!ms.ok()) throw CLI::ValidationError("--since", ms.status().message());
           inv.since_seconds = *ms / 1000;
         },
         "Only preemptions within this long (a duration such as 30m or 2h)")
      ->option_text("DURATION");
  cmd->footer(
      Footer("Newest first. Work lost = the victim's GPU-equivalents x (eviction - max(admission, last checkpoint)).\n"
             "Preemptions of workloads admitted again since are known from Events, kept an hour by default.\n\n"
             "Examples:\n  kubectl rota preempted -n ml\n  kubectl rota preempted -A --since 2h -o wide"));
}

void DeclareTop(CLI::App& app, Invocation& inv) {
  auto* cmd = app.add_subcommand("top", "Resources admitted workloads hold, by team (namespace) or queue");
  cmd->add_option_function<std::string>(
         "--by",
         [&inv](const std::string& group) {
           const std::map<std::string, GroupBy> by = {{"namespace", GroupBy::kNamespace},
                                                      {"clusterqueue", GroupBy::kClusterQueue},
                                                      {"localqueue", GroupBy::kLocalQueue}};
           auto it = by.find(group);
           if (it == by.end()) {
             throw CLI::ValidationError(
                 "--by", "unknown grouping \"" + group + "\": use namespace, clusterqueue or localqueue");
           }
           inv.by = it->second;
         },
         "Group by namespace (default), clusterqueue or localqueue")
      ->option_text("namespace|clusterqueue|localqueue");
  cmd->footer(
      Footer("Most GPUs first. GPU-EQ counts a MIG slice Ng as N/7 of a GPU and a time-sliced share as 1/4;\n"
             "the columns are the GPU resources, cpu and memory (-o wide: every resource).\n\n"
             "Examples:\n  kubectl rota top -A\n  kubectl rota top -A --by clusterqueue"));
}

}  // namespace

std::optional<int> ParseCommandLine(const std::vector<std::string>& args, Invocation& inv, std::ostream& out,
                                    std::ostream& err) {
  CLI::App app{"kubectl rota: what rota's queues are doing, and why a job waits", "kubectl rota"};
  app.footer(kRootFooter);
  app.fallthrough();  // (set before the commands are added, which inherit it)
  app.require_subcommand(1);
  DeclareGlobalFlags(app, inv);
  DeclareQueues(app);
  DeclareWhy(app, inv);
  DeclarePreempted(app, inv);
  DeclareTop(app, inv);
  if (args.empty()) {
    out << app.help();
    return 0;
  }
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // (CLI11 takes them last first)
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    err << "error: " << e.what() << "\nSee 'kubectl rota --help' for usage.\n";
    return kUsageError;
  }
  const std::map<std::string, Command> commands = {
      {"queues", Command::kQueues}, {"why", Command::kWhy}, {"preempted", Command::kPreempted}, {"top", Command::kTop}};
  inv.command = commands.at(app.get_subcommands().at(0)->get_name());
  return std::nullopt;
}

}  // namespace rota::kubectl
