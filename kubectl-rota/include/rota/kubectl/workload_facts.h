#pragma once

// What the commands read off a Workload: its conditions, its requests and admission, its Job.

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rota/admission/status.h"
#include "rota/api/kueue.h"
#include "rota/kubectl/resources.h"

namespace rota::kubectl {

// The condition of `type`, or nullptr.
const api::Condition* ConditionOf(const api::Workload& w, std::string_view type);
bool IsTrue(const api::Workload& w, std::string_view type);

bool IsFinished(const api::Workload& w);
// Holds quota: it has an admission and has not finished (an evicted workload holds its quota
// until its pods are gone).
bool HoldsQuota(const api::Workload& w);

// "namespace/name".
std::string KeyOf(const api::Workload& w);
int32_t PriorityOf(const api::Workload& w);
// The name of the Job that owns it (its controller ownerReference of kind Job), or "".
std::string JobOf(const api::Workload& w);

// Its admission's usage, summed over pod sets.
Amounts UsageOf(const api::Admission& admission);
// The (flavor, resource) pairs its admission uses.
std::set<std::pair<std::string, std::string>> FlavorResourcesOf(const api::Admission& admission);

// What it asks for: each pod set's pod requests (as Kubernetes computes them) times its count.
Result<Amounts> RequestsOf(const api::Workload& w);

// Whether its priority class lets it be preempted (a WorkloadPriorityClass annotated
// rota.dev/preemptible: "false" does not).
bool IsPreemptible(const api::Workload& w, const std::vector<api::WorkloadPriorityClass>& classes);

}  // namespace rota::kubectl
