// rota: a batch-queue controller for shared GPU clusters (Kueue's API, in C++).
//
//   rota version
//   rota simulate [--fair-sharing] FILE...

#include <CLI/CLI.hpp>

#include <iostream>

#include "simulate.h"

#ifndef ROTA_VERSION
#define ROTA_VERSION "0.0.0-dev"
#endif

int main(int argc, char** argv) {
  CLI::App app{"rota: a batch-queue controller for shared GPU clusters, speaking Kueue's API"};
  app.require_subcommand(1);

  auto* version = app.add_subcommand("version", "Print rota's version");
  version->callback([] { std::cout << "rota " << ROTA_VERSION << "\n"; });

  rota::simulate::Options options;
  std::vector<std::string> files;
  int exit_code = 0;
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
