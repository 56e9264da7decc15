#pragma once

// `rota simulate FILE...`: runs the admission engine over Kueue objects read from YAML files and
// prints what it decides, as JSON. The output is a stable contract for tests and tools:
//
//   {"admitted":  [{"workload": "ns/name", "clusterQueue": "cq",
//                   "podSetAssignments": [{"name": "main", "count": 4,
//                                          "flavors": {"nvidia.com/gpu": "a100"}}]}],
//    "preempted": [{"workload": "ns/name", "preemptor": "ns/name", "reason": "InClusterQueue"}],
//    "pending":   [{"workload": "ns/name", "reason": "WaitingForQuota", "message": "..."}]}
//
// `admitted` lists every workload holding quota at the end (old and new) by name; `preempted`
// every preemption in the order it happened; `pending` what is left, by name.

#include <iosfwd>
#include <string>
#include <vector>

#include "rota/api/snapshot.h"

namespace rota::simulate {

struct Options {
  bool fair_sharing = false;
  int max_passes = 1000;  // a bound on passes, in case preemptions never settle
  // The time of the simulation (Unix seconds; `rota simulate --now`). Victims are chosen by the
  // work they would lose by then (admission from the QuotaReserved condition's
  // lastTransitionTime, last checkpoint from rota.dev/checkpointed-at), minimum runtimes and
  // requeueAt are measured to it; workloads the simulation admits are admitted at this time.
  // 0: no time (victims in Kueue's order, no minimum runtime or backoff).
  int64_t now = 0;
};

// Reads Kueue objects (and Namespaces, and rota's Budgets: their gates as their status gives
// them, into state.budget_gates, measured at state.now) from YAML files into `state`, as `rota
// simulate` does.
// Returns "" or what is wrong, naming the file, document, object and field; skipped kinds are
// warned about on `err`.
std::string LoadFiles(const std::vector<std::string>& files, api::ClusterState& state, std::ostream& err);

// Returns the process exit code: 0, or 2 for invalid input (the message, naming the file,
// document, object and field, goes to `err`). Skipped kinds are warned about on `err`.
int Run(const std::vector<std::string>& files, const Options& options, std::ostream& out, std::ostream& err);

}  // namespace rota::simulate
