#pragma once

// What the soak applies: a flavor of A100s, two priority classes, three team ClusterQueues in a
// cohort with borrowing and lending limits, a probe ClusterQueue outside it, and LocalQueues, all
// named after the run so that runs never share objects. The same numbers give the auditor its
// limits.

#include <string>
#include <vector>

#include "rota/apiclient/client.h"
#include "soak/auditor.h"

namespace rota::soak {

struct Setup {
  std::string run;  // suffix of every name
  std::string ns, flavor, cohort, low, high;
  std::vector<std::string> teams;  // LocalQueue names (each points at ClusterQueue <name>-<run>)
  std::string probe;               // the probe's LocalQueue
  Limits limits;
  std::vector<Json> objects;  // cluster-scoped first, then namespaced
};

Setup MakeSetup(const std::string& run);
// Creates the namespace and applies every object (server-side apply); false after saying why.
bool Apply(apiclient::Client& client, const Setup& setup);
// Deletes what Apply made (the namespace last), without waiting.
void Delete(apiclient::Client& client, const Setup& setup);

}  // namespace rota::soak
