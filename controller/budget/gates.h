#pragma once

// From a Budget and its ledger to what the scheduler and people see: the ClusterQueues it
// covers, its gate (api::BudgetGate: snapshot data for the engine), the words of a workload it
// holds back, and its Exhausted and Warning conditions. Pure: the caller passes the time.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "budget/ledger.h"
#include "rota/api/budget.h"
#include "rota/api/meta.h"

namespace rota::controller::budget {

// The ClusterQueues a budget covers: its clusterQueue, or every ClusterQueue whose cohort is its
// cohort or below it. `cohort_of`: ClusterQueue -> its cohort ("" for none); `parent_of`:
// Cohort -> its parent ("" for a root).
std::vector<std::string> QueuesCovered(const api::BudgetSpec& spec, const std::map<std::string, std::string>& cohort_of,
                                       const std::map<std::string, std::string>& parent_of);

// "ClusterQueue team-llm" or "Cohort ml-platform".
std::string ScopeName(const api::BudgetSpec& spec);

// The sentence a workload held back by the exhausted budget gets; it names what was used up and
// when the window resets, and stays the same while the budget stays exhausted in one window.
std::string ExhaustedMessage(const api::Budget& budget, const Ledger& ledger);

// The budget's gate. `exhausted_since`: when it became exhausted (Unix seconds; its Exhausted
// condition's lastTransitionTime).
api::BudgetGate GateOf(const api::Budget& budget, const Ledger& ledger, int64_t exhausted_since);

// For a Budget read from a file (`rota simulate`): its gate as its status gives it (used hours as
// written, nothing charged), added to `out` for each ClusterQueue it covers. `now_ms` stands for
// the time when the status has no accountedUntil. Errors name the Budget and field.
Status AddGatesAsWritten(const api::Budget& budget, int64_t now_ms, const std::map<std::string, std::string>& cohort_of,
                         const std::map<std::string, std::string>& parent_of,
                         std::map<std::string, std::vector<api::BudgetGate>>& out);

// A condition that changed status, for an Event.
struct ConditionChange {
  std::string type;  // Exhausted or Warning
  bool now_true = false;
  std::string message;
};

// Sets the Exhausted and Warning conditions of `conditions` from the ledger, at `now` (RFC 3339):
// a condition's lastTransitionTime moves only when its status does. Returns the ones that turned.
std::vector<ConditionChange> UpdateConditions(std::vector<api::Condition>& conditions, const api::Budget& budget,
                                              const Ledger& ledger, const std::string& now);

}  // namespace rota::controller::budget
