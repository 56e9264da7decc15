#include "budget/gates.h"

#include <cmath>
#include <limits>
#include <set>

#include "rota/api/snapshot.h"

namespace rota::controller::budget {
namespace {

std::string LimitHours(const api::BudgetLimit& l) { return api::FormatHours(double(l.hours.milli()) / 1000); }

std::string HoursOf(const std::string& resource, const std::string& hours) {
  if (resource == api::kGpuResource) return hours + " GPU-hours";
  return hours + " hours of " + resource;
}

// "5000 GPU-hours" for the first limit that is used up (or the first limit).
std::string LimitUsedUp(const api::BudgetSpec& spec, const Ledger& ledger) {
  const std::map<std::string, double> used = ledger.Used();
  for (const api::BudgetLimit& l : spec.limits) {
    auto u = used.find(l.resource);
    if (u != used.end() && u->second + 1e-9 >= double(l.hours.milli()) / 1000)
      return HoursOf(l.resource, LimitHours(l));
  }
  return HoursOf(spec.limits.front().resource, LimitHours(spec.limits.front()));
}

// "used 4211.5 of 5000 GPU-hours" for every limit, joined.
std::string UsageSummary(const api::BudgetSpec& spec, const Ledger& ledger) {
  const std::map<std::string, double> used = ledger.Used();
  std::string out;
  for (const api::BudgetLimit& l : spec.limits) {
    auto u = used.find(l.resource);
    out += (out.empty() ? "used " : ", ") + api::FormatHours(u == used.end() ? 0 : u->second) + " of " +
           HoursOf(l.resource, LimitHours(l));
  }
  return out;
}

std::string ResetsAt(const Ledger& ledger) { return api::FormatTime(ledger.CurrentWindow().end / 1000); }

void SetCondition(std::vector<api::Condition>& conditions, std::string_view type, bool value, const std::string& reason,
                  const std::string& message, const std::string& now, std::vector<ConditionChange>& changes) {
  const api::ConditionStatus status = value ? api::ConditionStatus::kTrue : api::ConditionStatus::kFalse;
  for (api::Condition& c : conditions) {
    if (c.type != type) continue;
    if (c.status != status) {
      c.last_transition_time = now;
      changes.push_back({std::string(type), value, message});
    }
    c.status = status;
    c.reason = reason;
    c.message = message;
    return;
  }
  api::Condition c;
  c.type = std::string(type);
  c.status = status;
  c.reason = reason;
  c.message = message;
  c.last_transition_time = now;
  conditions.push_back(std::move(c));
  if (value) changes.push_back({std::string(type), value, message});
}

}  // namespace

std::vector<std::string> QueuesCovered(const api::BudgetSpec& spec, const std::map<std::string, std::string>& cohort_of,
                                       const std::map<std::string, std::string>& parent_of) {
  if (!spec.cluster_queue.empty()) return {spec.cluster_queue};
  std::vector<std::string> out;
  for (const auto& [cq, cohort] : cohort_of) {
    std::set<std::string> seen;  // (a cycle of cohorts must not loop)
    for (std::string c = cohort; !c.empty() && seen.insert(c).second;) {
      if (c == spec.cohort) {
        out.push_back(cq);
        break;
      }
      auto p = parent_of.find(c);
      c = p == parent_of.end() ? "" : p->second;
    }
  }
  return out;
}

std::string ScopeName(const api::BudgetSpec& spec) {
  return spec.cluster_queue.empty() ? "Cohort " + spec.cohort : "ClusterQueue " + spec.cluster_queue;
}

std::string ExhaustedMessage(const api::Budget& budget, const Ledger& ledger) {
  const api::BudgetSpec& spec = budget.spec;
  const bool rolling = !spec.window.rolling.empty();
  return ScopeName(spec) + " used all " + LimitUsedUp(spec, ledger) + " of Budget " + budget.metadata.name + " " +
         DescribePeriod(spec.window) + (rolling ? "; usage starts to expire at " : "; resets ") + ResetsAt(ledger);
}

api::BudgetGate GateOf(const api::Budget& budget, const Ledger& ledger, int64_t exhausted_since) {
  api::BudgetGate g;
  g.budget = budget.metadata.name;
  g.when_exhausted = budget.spec.when_exhausted;
  g.exhausted = ledger.Exhausted();
  if (g.exhausted) {
    g.message = ExhaustedMessage(budget, ledger);
    g.exhausted_since = exhausted_since;
  }
  if (!budget.spec.require_fit) return g;
  const std::map<std::string, double> remaining = ledger.Remaining();
  for (const api::BudgetLimit& l : budget.spec.limits) {
    api::BudgetGate::Pool& p = g.fit_pools[l.resource];
    auto r = remaining.find(l.resource);
    // hours -> milli GPU-seconds (beyond int64, as good as unlimited)
    const double milli_seconds = std::floor((r == remaining.end() ? 0 : r->second) * 3600 * 1000);
    p.remaining = milli_seconds >= 9e18 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(milli_seconds);
    p.weights_milli[l.resource] = 1000;
    if (l.resource == api::kGpuResource)
      for (const auto& [resource, weight] : budget.spec.weights) p.weights_milli[resource] = weight.milli();
  }
  g.fit_message = "its maximumExecutionTimeSeconds times its requests is more than what is left of Budget " +
                  budget.metadata.name + " (" + UsageSummary(budget.spec, ledger) + " " +
                  DescribePeriod(budget.spec.window) + ")";
  return g;
}

Status AddGatesAsWritten(const api::Budget& budget, int64_t now_ms, const std::map<std::string, std::string>& cohort_of,
                         const std::map<std::string, std::string>& parent_of,
                         std::map<std::string, std::vector<api::BudgetGate>>& out) {
  const std::string who = "Budget \"" + budget.metadata.name + "\"";
  if (Status s = ValidateBudget(budget.spec); !s.ok()) return s.WithContext(who);
  Result<Ledger> ledger = Ledger::Resume(budget, now_ms);
  if (!ledger.ok()) return ledger.status().WithContext(who);
  int64_t since = now_ms / 1000;
  if (budget.status) {
    const api::Condition* c = api::FindCondition(budget.status->conditions, api::budget_condition::kExhausted);
    Result<int64_t> t = api::ParseTime(c && c->status == api::ConditionStatus::kTrue ? c->last_transition_time : "");
    if (t.ok() && *t > 0) since = *t;
  }
  const api::BudgetGate gate = GateOf(budget, *ledger, since);
  for (const std::string& q : QueuesCovered(budget.spec, cohort_of, parent_of)) out[q].push_back(gate);
  return Status::Ok();
}

std::vector<ConditionChange> UpdateConditions(std::vector<api::Condition>& conditions, const api::Budget& budget,
                                              const Ledger& ledger, const std::string& now) {
  std::vector<ConditionChange> changes;
  const std::string summary =
      ScopeName(budget.spec) + " " + UsageSummary(budget.spec, ledger) + " " + DescribePeriod(budget.spec.window);
  const bool exhausted = ledger.Exhausted();
  SetCondition(conditions, api::budget_condition::kExhausted, exhausted,
               exhausted ? std::string(api::kBudgetExhaustedReason) : "WithinBudget",
               exhausted ? ExhaustedMessage(budget, ledger) : summary, now, changes);
  const bool warn = ledger.PercentUsed() >= budget.spec.warn_at;
  SetCondition(conditions, api::budget_condition::kWarning, warn, warn ? "ThresholdReached" : "BelowThreshold",
               summary + (warn ? " (warnAt " + std::to_string(budget.spec.warn_at) + "%)" : ""), now, changes);
  return changes;
}

}  // namespace rota::controller::budget
