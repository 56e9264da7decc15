#include "rota/kubectl/preemption_help.h"

#include <algorithm>
#include <map>

namespace rota::kubectl {
namespace {

using api::PreemptionPolicy;

std::string Workloads(size_t n, const std::string& adjective = "") {
  return std::to_string(n) + " " + (adjective.empty() ? "" : adjective + " ") + (n == 1 ? "workload" : "workloads");
}

// What the rules found: candidates counted by (phrase, ClusterQueue), and why others are not.
struct Findings {
  std::map<std::pair<std::string, std::string>, size_t> counts;
  std::vector<std::string> candidates;
  std::vector<std::string> why_not;
  void Add(const Holder& h, const std::string& phrase) {
    ++counts[{phrase, h.cluster_queue}];
    candidates.push_back(h.ns + "/" + h.name);
  }
};

void WithinQueue(const PreemptionQuestion& q, Findings& f) {
  std::vector<const Holder*> own;
  for (const Holder& h : q.holders)
    if (h.same_queue) own.push_back(&h);
  if (own.empty()) return;
  const PreemptionPolicy policy = q.policy.within_cluster_queue;
  if (policy == PreemptionPolicy::kNever) {
    f.why_not.push_back("withinClusterQueue is Never");
    return;
  }
  size_t found = 0, critical = 0;
  for (const Holder* h : own) {
    const bool lower = h->priority < q.priority;
    const bool newer_equal =
        policy == PreemptionPolicy::kLowerOrNewerEqualPriority && h->priority == q.priority && h->created > q.created;
    if (!lower && !newer_equal) continue;
    if (!h->preemptible) {
      ++critical;
      continue;
    }
    f.Add(*h, "lower-priority");
    ++found;
  }
  if (found) return;
  std::string why = "the " + Workloads(own.size()) + " holding its quota in " + own.front()->cluster_queue +
                    (own.size() == 1 ? " has" : " have") + " no lower priority than its own (" +
                    std::to_string(q.priority) + ")";
  if (critical) {
    why = Workloads(critical, "lower-priority") + " in " + own.front()->cluster_queue +
          (critical == 1 ? " is" : " are") + " not preemptible (priority class rota.dev/preemptible: \"false\")";
  }
  f.why_not.push_back(why + " (withinClusterQueue is " + std::string(api::EnumName(policy)) + ")");
}

// Other queues of the cohort: reclaim what they borrow when it fits in its own nominal quota, or
// preempt their lower priorities to borrow.
void WithinCohort(const PreemptionQuestion& q, Findings& f) {
  std::vector<const Holder*> others;
  for (const Holder& h : q.holders)
    if (!h.same_queue && (q.would_borrow || h.queue_borrowing)) others.push_back(&h);
  if (!q.in_cohort || others.empty()) return;
  const auto& borrow = q.policy.borrow_within_cohort;
  const PreemptionPolicy policy = q.would_borrow ? borrow.policy : q.policy.reclaim_within_cohort;
  const std::string rule = q.would_borrow ? "borrowWithinCohort" : "reclaimWithinCohort";
  if (policy == PreemptionPolicy::kNever) {
    f.why_not.push_back(rule + " is Never");
    return;
  }
  size_t found = 0;
  for (const Holder* h : others) {
    if (!h->preemptible) continue;
    if (policy != PreemptionPolicy::kAny && h->priority >= q.priority) continue;
    if (q.would_borrow && borrow.max_priority_threshold && h->priority > *borrow.max_priority_threshold) continue;
    f.Add(*h, q.would_borrow ? "lower-priority" : "borrowing");
    ++found;
  }
  if (!found) {
    f.why_not.push_back("no workload in the cohort's other queues may be preempted by " + rule + " " +
                        std::string(api::EnumName(policy)));
  }
}

}  // namespace

PreemptionVerdict AssessPreemption(const PreemptionQuestion& q) {
  PreemptionVerdict v;
  if (q.holders.empty()) {
    v.answer = "no: no admitted workload holds the quota it needs (it waits for capacity, not for a victim)";
    return v;
  }
  Findings f;
  WithinQueue(q, f);
  WithinCohort(q, f);
  if (f.candidates.empty()) {
    std::string why;
    for (const std::string& w : f.why_not) why += (why.empty() ? "" : "; ") + w;
    v.answer = "no: " + (why.empty() ? "no rule of spec.preemption applies" : why);
    return v;
  }
  v.could_help = true;
  v.candidates = f.candidates;
  std::string what;
  for (const auto& [key, n] : f.counts)
    what += (what.empty() ? "" : "; ") + Workloads(n, key.first) + " in " + key.second + " could be preempted";
  v.answer = "yes: " + what;
  return v;
}

}  // namespace rota::kubectl
