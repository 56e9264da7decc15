#include "rota/api/snapshot.h"
#include "rota/api/checkpoint.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <set>
#include <unordered_map>

namespace rota::api {
namespace {

namespace adm = rota::admission;

// Adds `b` into `a`, resource by resource, with overflow reported against `path`.
Status AddInto(adm::ResourceAmounts& a, const adm::ResourceAmounts& b, const std::string& path) {
  for (const auto& [r, v] : b) {
    int64_t& slot = a[r];
    if (__builtin_add_overflow(slot, v, &slot)) return OutOfRange(path + ": total " + r + " overflows");
  }
  return Status::Ok();
}

// A container's requests, each defaulting to its limit when only the limit is set.
Result<adm::ResourceAmounts> ContainerRequests(const Json& c, const std::string& path) {
  adm::ResourceAmounts out;
  if (!c.is_object()) return InvalidArgument(path + ": must be an object");
  auto resources = c.find("resources");
  if (resources == c.end() || resources->is_null()) return out;
  std::map<std::string, Quantity> requests, limits;
  if (auto r = resources->find("requests"); r != resources->end() && !r->is_null()) {
    Status s = DecodeValue(*r, path + ".resources.requests", requests);
    if (!s.ok()) return s;
  }
  if (auto l = resources->find("limits"); l != resources->end() && !l->is_null()) {
    Status s = DecodeValue(*l, path + ".resources.limits", limits);
    if (!s.ok()) return s;
  }
  for (const auto& [name, q] : limits) out[name] = q.milli();
  for (const auto& [name, q] : requests) out[name] = q.milli();
  // (As the apiserver validates a pod: a negative request or limit is never valid.)
  for (const auto& [field, amounts] : {std::pair{"requests", &requests}, std::pair{"limits", &limits}}) {
    for (const auto& [name, q] : *amounts) {
      if (q.milli() < 0) {
        return InvalidArgument(path + ".resources." + field + "[\"" + name + "\"]: " + q.ToString() +
                               " must be greater than or equal to 0");
      }
    }
  }
  return out;
}

adm::NodeSelectorRequirement::Op ParseOp(const std::string& op, bool& ok) {
  using Op = adm::NodeSelectorRequirement::Op;
  static const std::map<std::string, Op> kOps = {{"In", Op::kIn},         {"NotIn", Op::kNotIn},
                                                 {"Exists", Op::kExists}, {"DoesNotExist", Op::kDoesNotExist},
                                                 {"Gt", Op::kGt},         {"Lt", Op::kLt}};
  auto it = kOps.find(op);
  ok = it != kOps.end();
  return ok ? it->second : Op::kIn;
}

adm::TaintEffect ToEngine(TaintEffect e) {
  switch (e) {
    case TaintEffect::kNoSchedule:
      return adm::TaintEffect::kNoSchedule;
    case TaintEffect::kPreferNoSchedule:
      return adm::TaintEffect::kPreferNoSchedule;
    case TaintEffect::kNoExecute:
      return adm::TaintEffect::kNoExecute;
  }
  return adm::TaintEffect::kNoSchedule;
}

std::vector<adm::ResourceGroupSpec> ToEngine(const std::vector<ResourceGroup>& groups) {
  std::vector<adm::ResourceGroupSpec> out;
  for (const auto& g : groups) {
    adm::ResourceGroupSpec eg;
    eg.covered_resources = g.covered_resources;
    for (const auto& f : g.flavors) {
      adm::FlavorQuotaSpec fq{f.name, {}};
      for (const auto& r : f.resources) {
        adm::QuotaSpec q{r.name, r.nominal_quota.milli(), std::nullopt, std::nullopt};
        if (r.borrowing_limit) q.borrowing_limit = r.borrowing_limit->milli();
        if (r.lending_limit) q.lending_limit = r.lending_limit->milli();
        fq.resources.push_back(q);
      }
      eg.flavors.push_back(std::move(fq));
    }
    out.push_back(std::move(eg));
  }
  return out;
}

std::string Key(const ObjectMeta& m) { return m.namespace_ + "/" + m.name; }

}  // namespace

Result<adm::ResourceAmounts> PodRequests(const Json& pod_template, const std::string& path) {
  adm::ResourceAmounts total;
  if (!pod_template.is_object()) return InvalidArgument(path + ": must be an object");
  auto spec_it = pod_template.find("spec");
  if (spec_it == pod_template.end() || spec_it->is_null()) return total;
  const Json& spec = *spec_it;
  const std::string spec_path = path + ".spec";
  if (!spec.is_object()) return InvalidArgument(spec_path + ": must be an object");

  if (auto cs = spec.find("containers"); cs != spec.end() && !cs->is_null()) {
    if (!cs->is_array()) return InvalidArgument(spec_path + ".containers: must be a list");
    for (size_t i = 0; i < cs->size(); ++i) {
      auto r = ContainerRequests((*cs)[i], spec_path + ".containers[" + std::to_string(i) + "]");
      if (!r.ok()) return r.status();
      if (Status s = AddInto(total, *r, spec_path + ".containers"); !s.ok()) return s;
    }
  }
  // Init containers run before the main ones: the pod needs the largest of them (plus the
  // restartable sidecars started before it); sidecars keep running, so they add to the main sum.
  if (auto is = spec.find("initContainers"); is != spec.end() && !is->is_null()) {
    if (!is->is_array()) return InvalidArgument(spec_path + ".initContainers: must be a list");
    adm::ResourceAmounts sidecars, init_peak;
    for (size_t i = 0; i < is->size(); ++i) {
      const std::string p = spec_path + ".initContainers[" + std::to_string(i) + "]";
      auto r = ContainerRequests((*is)[i], p);
      if (!r.ok()) return r.status();
      const Json& c = (*is)[i];
      const bool sidecar = c.contains("restartPolicy") && c["restartPolicy"] == "Always";
      adm::ResourceAmounts at_start = sidecars;
      if (Status s = AddInto(at_start, *r, p); !s.ok()) return s;
      for (const auto& [name, v] : at_start) init_peak[name] = std::max(init_peak[name], v);
      if (sidecar) {
        if (Status s = AddInto(sidecars, *r, p); !s.ok()) return s;
      }
    }
    if (Status s = AddInto(total, sidecars, spec_path + ".initContainers"); !s.ok()) return s;
    for (const auto& [name, v] : init_peak) total[name] = std::max(total[name], v);
  }
  if (auto o = spec.find("overhead"); o != spec.end() && !o->is_null()) {
    std::map<std::string, Quantity> overhead;
    if (Status s = DecodeValue(*o, spec_path + ".overhead", overhead); !s.ok()) return s;
    adm::ResourceAmounts extra;
    for (const auto& [name, q] : overhead) extra[name] = q.milli();
    if (Status s = AddInto(total, extra, spec_path + ".overhead"); !s.ok()) return s;
  }
  for (auto it = total.begin(); it != total.end();) it = it->second == 0 ? total.erase(it) : std::next(it);
  return total;
}

Result<int64_t> ParseTime(const std::string& text) {
  if (text.empty()) return int64_t{0};
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, &consumed) != 6) {
    return InvalidArgument("\"" + text + "\" is not an RFC 3339 time such as 2026-11-01T10:00:00Z");
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  int64_t seconds = static_cast<int64_t>(timegm(&tm));
  size_t i = static_cast<size_t>(consumed);
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  }
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    int hh = 0, mm = 0;
    if (std::sscanf(text.c_str() + i + 1, "%2d:%2d", &hh, &mm) != 2) {
      return InvalidArgument("\"" + text + "\" has an offset that is not +hh:mm");
    }
    const int64_t offset = hh * 3600 + mm * 60;
    seconds += text[i] == '+' ? -offset : offset;
    i += 6;
  } else if (i < text.size() && (text[i] == 'Z' || text[i] == 'z')) {
    ++i;
  }
  if (i != text.size()) return InvalidArgument("\"" + text + "\" is not an RFC 3339 time");
  return seconds;
}

std::string FormatTime(int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {

// The engine's pod sets of `w` (named by its `key` in errors).
Status PodSetsOf(const Workload& w, const std::string& key, std::vector<adm::PodSetSpec>& out) {
  auto who = [&] { return "Workload \"" + key + "\""; };  // only on errors
  for (size_t i = 0; i < w.spec.pod_sets.size(); ++i) {
    const PodSet& ps = w.spec.pod_sets[i];
    const std::string path = "spec.podSets[" + std::to_string(i) + "]";
    adm::PodSetSpec eps;
    if (ps.count < 0) {
      return InvalidArgument(path + ".count: " + std::to_string(ps.count) + " must be greater than or equal to 0")
          .WithContext(who());
    }
    eps.name = ps.name;
    eps.count = ps.count;
    eps.min_count = ps.min_count;
    auto requests = PodRequests(ps.template_.get(), path + ".template");
    if (!requests.ok()) return requests.status().WithContext(who());
    eps.per_pod = std::move(*requests);
    static const Json kNoSpec = Json::object();
    const Json& tpl = ps.template_.get();
    const Json& pod_spec = tpl.contains("spec") ? tpl["spec"] : kNoSpec;
    if (pod_spec.is_object()) {
      if (auto ns = pod_spec.find("nodeSelector"); ns != pod_spec.end() && !ns->is_null()) {
        Status s = DecodeValue(*ns, path + ".template.spec.nodeSelector", eps.node_selector);
        if (!s.ok()) return s.WithContext(who());
      }
      if (auto ts = pod_spec.find("tolerations"); ts != pod_spec.end() && !ts->is_null()) {
        std::vector<Toleration> tolerations;
        Status s = DecodeValue(*ts, path + ".template.spec.tolerations", tolerations);
        if (!s.ok()) return s.WithContext(who());
        for (const auto& t : tolerations) {
          adm::Toleration et{t.key, t.op == TolerationOperator::kExists, t.value, std::nullopt};
          if (t.effect) et.effect = ToEngine(*t.effect);
          eps.tolerations.push_back(std::move(et));
        }
      }
      const Json* terms = nullptr;
      if (auto a = pod_spec.find("affinity"); a != pod_spec.end() && a->is_object()) {
        if (auto na = a->find("nodeAffinity"); na != a->end() && na->is_object()) {
          if (auto req = na->find("requiredDuringSchedulingIgnoredDuringExecution");
              req != na->end() && req->is_object()) {
            if (auto t = req->find("nodeSelectorTerms"); t != req->end() && t->is_array()) terms = &*t;
          }
        }
      }
      for (size_t ti = 0; terms && ti < terms->size(); ++ti) {
        std::vector<adm::NodeSelectorRequirement> term;
        const Json& exprs =
            (*terms)[ti].contains("matchExpressions") ? (*terms)[ti]["matchExpressions"] : Json::array();
        for (size_t ei = 0; exprs.is_array() && ei < exprs.size(); ++ei) {
          const std::string epath = path +
                                    ".template.spec.affinity.nodeAffinity."
                                    "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[" +
                                    std::to_string(ti) + "].matchExpressions[" + std::to_string(ei) + "]";
          adm::NodeSelectorRequirement er;
          const Json& x = exprs[ei];
          if (!x.is_object() || !x.contains("key") || !x["key"].is_string() || !x.contains("operator") ||
              !x["operator"].is_string()) {
            return InvalidArgument(who() + ": " + epath + ": needs a key and an operator");
          }
          er.key = x["key"].get<std::string>();
          bool ok = false;
          er.op = ParseOp(x["operator"].get<std::string>(), ok);
          if (!ok) {
            return InvalidArgument(who() + ": " + epath + ".operator: unsupported value " + x["operator"].dump() +
                                   ": use one of In, NotIn, Exists, DoesNotExist, Gt, Lt");
          }
          if (x.contains("values")) {
            Status s = DecodeValue(x["values"], epath + ".values", er.values);
            if (!s.ok()) return s.WithContext(who());
          }
          term.push_back(std::move(er));
        }
        eps.required_affinity.push_back(std::move(term));
      }
    }
    out.push_back(std::move(eps));
  }
  return Status::Ok();
}

}  // namespace

namespace {

// What workloads are resolved against, indexed once per build.
struct Resolver {
  explicit Resolver(const ClusterState& s) : state(s), keep_going(s.keep_going) {
    for (const auto& q : s.cluster_queues) cqs[q.metadata.name] = &q;
    for (const auto& lq : s.local_queues) lqs[Key(lq.metadata)] = &lq;
    for (const auto& c : s.priority_classes) classes[c.metadata.name] = &c;
    for (const auto& [cq, gates] : s.budget_gates) {
      for (const BudgetGate& g : gates) {
        for (const auto& [resource, pool] : g.fit_pools) pools.try_emplace({g.budget, resource}, pools.size());
      }
    }
  }
  const ClusterState& state;
  bool keep_going;
  std::unordered_map<std::string, const ClusterQueue*> cqs;
  std::unordered_map<std::string, const LocalQueue*> lqs;
  std::unordered_map<std::string, const WorkloadPriorityClass*> classes;
  std::unordered_map<std::string, bool> selected;  // "cq\nnamespace" -> namespace selected
  adm::ShapeTable* shapes = nullptr;               // numbers the workloads' shapes, if set
  // The requireFit pools, (budget, limit resource) -> index in Snapshot::budget_pools.
  std::map<std::pair<std::string, std::string>, uint32_t> pools;
  // With admission fair sharing: the LocalQueues of ClusterQueues that use it ("ns/name", in name
  // order) -> index in Snapshot::admission_fair_sharing.queues.
  std::map<std::string, int32_t> fair_queues;
  void IndexFairQueues() {
    if (!state.admission_fair_sharing) return;
    for (const auto& lq : state.local_queues) {
      auto cq = cqs.find(lq.spec.cluster_queue);
      if (cq != cqs.end() && cq->second->spec.admission_scope &&
          cq->second->spec.admission_scope->admission_mode == AdmissionMode::kUsageBasedAdmissionFairSharing)
        fair_queues.emplace(Key(lq.metadata), 0);
    }
    int32_t i = 0;
    for (auto& [key, index] : fair_queues) index = i++;
  }
};

double Weighted(const std::map<std::string, double>& units, const std::map<std::string, double>& weights) {
  double out = 0;
  for (const auto& [resource, amount] : units) {
    auto w = weights.find(resource);
    out += amount * (w == weights.end() ? 1.0 : w->second);
  }
  return out;
}

// Snapshot::admission_fair_sharing from the LocalQueues' usage, once the entries are made: each
// admission since its queue's last sample adds its entry penalty.
void FairQueuesOf(const Resolver& r, adm::Snapshot& out) {
  adm::AdmissionFairSharing& afs = out.admission_fair_sharing;
  afs = {};
  if (r.fair_queues.empty()) return;
  const AdmissionFairSharingConfig& config = *r.state.admission_fair_sharing;
  afs.resource_weights = config.resource_weights;
  afs.entry_penalty = EntryPenaltyFactor(config);
  afs.queues.resize(r.fair_queues.size());
  std::vector<int64_t> sampled(r.fair_queues.size(), 0);
  for (const auto& [key, i] : r.fair_queues) {
    auto lq = r.lqs.find(key);
    if (lq != r.lqs.end() && lq->second->spec.fair_sharing)
      afs.queues[i].weight = double(lq->second->spec.fair_sharing->weight.milli()) / 1000;
    auto usage = r.state.local_queue_usage.find(key);
    if (usage == r.state.local_queue_usage.end()) continue;
    afs.queues[i].usage = Weighted(usage->second.consumed, config.resource_weights);
    sampled[i] = usage->second.last_update;
  }
  for (const adm::WorkloadSpec& e : out.workloads) {
    if (!e.admission || e.fair_queue < 0 || e.admission_time <= sampled[e.fair_queue]) continue;
    std::map<std::string, double> units;
    for (const auto& ps : e.admission->pod_sets)
      for (const auto& [resource, milli] : ps.usage) units[resource] += double(milli) / 1000;
    afs.queues[e.fair_queue].usage += afs.entry_penalty * Weighted(units, config.resource_weights);
  }
}

// Snapshot::budget_pools, in the order of Resolver::pools.
void PoolsOf(const ClusterState& state, const Resolver& r, adm::Snapshot& out) {
  out.budget_pools.assign(r.pools.size(), {});
  for (const auto& [cq, gates] : state.budget_gates) {
    for (const BudgetGate& g : gates) {
      for (const auto& [resource, pool] : g.fit_pools) {
        adm::BudgetPool& p = out.budget_pools[r.pools.at({g.budget, resource})];
        p.remaining = pool.remaining;
        p.message = g.fit_message;
      }
    }
  }
}

// What a workload of the gates' ClusterQueue draws from a requireFit pool: its requests times
// maximumExecutionTimeSeconds, weighted (milli GPU-seconds).
int64_t FitCharge(const adm::WorkloadSpec& e, int64_t seconds, const std::map<std::string, int64_t>& weights_milli) {
  double milli_units = 0;  // (in double: a weight on a memory resource must not overflow)
  for (const auto& ps : e.pod_sets) {
    for (const auto& [resource, amount] : ps.per_pod) {
      auto w = weights_milli.find(resource);
      if (w != weights_milli.end()) milli_units += double(amount) * ps.count * double(w->second) / 1000;
    }
  }
  const double charge = milli_units * double(seconds);
  return charge >= 9e18 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(charge);
}

// What admitted workload `e` will still draw from each requireFit pool of its ClusterQueue until
// its maximumExecutionTimeSeconds runs out (the ledger has charged the time it has run): taken
// from the pools, so that the next admissions do not promise that time again.
void Reserve(const Workload& w, const Resolver& r, const adm::WorkloadSpec& e, adm::Snapshot& out) {
  if (r.pools.empty() || !e.admission || !w.spec.maximum_execution_time_seconds || r.state.now <= 0) return;
  auto gates = r.state.budget_gates.find(e.admission->cluster_queue);
  if (gates == r.state.budget_gates.end()) return;
  const int64_t left = e.admission_time + *w.spec.maximum_execution_time_seconds - r.state.now;
  if (left <= 0) return;
  for (const BudgetGate& g : gates->second) {
    for (const auto& [resource, pool] : g.fit_pools) {
      adm::BudgetPool& p = out.budget_pools[r.pools.at({g.budget, resource})];
      p.remaining -= std::min(p.remaining, FitCharge(e, left, pool.weights_milli));
    }
  }
}

// Its LocalQueue's place in Snapshot::admission_fair_sharing.queues, when that LocalQueue is
// fair-shared and still points to the workload's ClusterQueue; else -1.
int32_t FairQueueOf(const Workload& w, const Resolver& r, const adm::WorkloadSpec& e) {
  if (r.fair_queues.empty()) return -1;
  const std::string key = w.metadata.namespace_ + "/" + w.spec.queue_name;
  auto fq = r.fair_queues.find(key);
  auto lq = r.lqs.find(key);
  const std::string& cq = e.admission ? e.admission->cluster_queue : e.cluster_queue;
  if (fq == r.fair_queues.end() || lq == r.lqs.end() || lq->second->spec.cluster_queue != cq) return -1;
  return fq->second;
}

// The budgets of its ClusterQueue applied to workload `e`: an exhausted Hold budget keeps it
// pending, an exhausted BestEffort one makes it the lowest priority (a pending one preempts no
// one; an admitted one admitted since the exhaustion is the first victim), and requireFit charges
// its admission.
void ApplyBudgets(const Workload& w, const Resolver& r, adm::WorkloadSpec& e) {
  const std::string& cq = e.admission ? e.admission->cluster_queue : e.cluster_queue;
  auto gates = r.state.budget_gates.find(cq);
  if (gates == r.state.budget_gates.end() || (!e.admission && !e.inadmissible_reason.empty())) return;
  for (const BudgetGate& g : gates->second) {
    if (!g.exhausted) {
      if (e.admission || !w.spec.maximum_execution_time_seconds) continue;
      for (const auto& [resource, pool] : g.fit_pools) {
        e.budget_charges.push_back({r.pools.at({g.budget, resource}),
                                    FitCharge(e, *w.spec.maximum_execution_time_seconds, pool.weights_milli)});
      }
    } else if (g.when_exhausted == WhenExhausted::kBestEffort) {
      if (e.admission && e.admission_time < g.exhausted_since) continue;
      e.priority = std::numeric_limits<int32_t>::min();
      e.may_preempt = false;
    } else if (!e.admission) {
      e.inadmissible_reason = kBudgetExhaustedReason;
      e.inadmissible_message = g.message;
      e.budget_charges.clear();
      return;
    }
  }
}

// The engine's spec of ClusterQueue `q`, or why it cannot be used.
Status ClusterQueueSpecOf(const ClusterQueue& q, int64_t default_min_runtime, adm::ClusterQueueSpec& e) {
  e.name = q.metadata.name;
  e.cohort = q.spec.cohort_name;
  e.resource_groups = ToEngine(q.spec.resource_groups);
  e.queueing_strategy = q.spec.queueing_strategy == QueueingStrategy::kStrictFIFO
                            ? adm::QueueingStrategy::kStrictFIFO
                            : adm::QueueingStrategy::kBestEffortFIFO;
  e.when_can_borrow = q.spec.flavor_fungibility.when_can_borrow == FungibilityPolicy::kTryNextFlavor
                          ? adm::FungibilityPolicy::kTryNextFlavor
                          : adm::FungibilityPolicy::kMayStopSearch;
  e.when_can_preempt = q.spec.flavor_fungibility.when_can_preempt == FungibilityPolicy::kTryNextFlavor
                           ? adm::FungibilityPolicy::kTryNextFlavor
                           : adm::FungibilityPolicy::kMayStopSearch;
  if (q.spec.flavor_fungibility.preference) {
    e.preference = *q.spec.flavor_fungibility.preference == FungibilityPreference::kPreemptionOverBorrowing
                       ? adm::FungibilityPreference::kPreemptionOverBorrowing
                       : adm::FungibilityPreference::kBorrowingOverPreemption;
  }
  const auto& p = q.spec.preemption;
  switch (p.within_cluster_queue) {
    case PreemptionPolicy::kLowerPriority:
      e.within_cluster_queue = adm::WithinClusterQueue::kLowerPriority;
      break;
    case PreemptionPolicy::kLowerOrNewerEqualPriority:
      e.within_cluster_queue = adm::WithinClusterQueue::kLowerOrNewerEqualPriority;
      break;
    case PreemptionPolicy::kNever:
      break;
    case PreemptionPolicy::kAny:
      return InvalidArgument("ClusterQueue \"" + e.name +
                             "\": spec.preemption.withinClusterQueue: Any is not supported: use "
                             "Never, LowerPriority or LowerOrNewerEqualPriority");
  }
  switch (p.reclaim_within_cohort) {
    case PreemptionPolicy::kLowerPriority:
      e.reclaim_within_cohort = adm::ReclaimWithinCohort::kLowerPriority;
      break;
    case PreemptionPolicy::kAny:
      e.reclaim_within_cohort = adm::ReclaimWithinCohort::kAny;
      break;
    case PreemptionPolicy::kNever:
      break;
    case PreemptionPolicy::kLowerOrNewerEqualPriority:
      return InvalidArgument("ClusterQueue \"" + e.name +
                             "\": spec.preemption.reclaimWithinCohort: LowerOrNewerEqualPriority is "
                             "not supported: use Never, LowerPriority or Any");
  }
  if (p.borrow_within_cohort.policy == PreemptionPolicy::kLowerPriority) {
    e.borrow_within_cohort = adm::BorrowWithinCohort::kLowerPriority;
  } else if (p.borrow_within_cohort.policy != PreemptionPolicy::kNever) {
    return InvalidArgument("ClusterQueue \"" + e.name +
                           "\": spec.preemption.borrowWithinCohort.policy: use Never or LowerPriority");
  }
  e.borrow_max_priority_threshold = p.borrow_within_cohort.max_priority_threshold;
  e.stopped = q.spec.stop_policy != StopPolicy::kNone;
  if (q.spec.fair_sharing) e.fair_weight_milli = q.spec.fair_sharing->weight.milli();
  for (auto [key, out] : {std::pair{kPreemptMinRuntimeAnnotation, &e.preempt_min_runtime},
                          std::pair{kReclaimMinRuntimeAnnotation, &e.reclaim_min_runtime}}) {
    const std::string text = AnnotationOr(q.metadata.annotations, key);
    *out = default_min_runtime;
    if (text.empty()) continue;
    auto millis = ParseGoDuration(text);
    if (!millis.ok()) {
      return millis.status().WithContext("ClusterQueue \"" + e.name + "\": metadata.annotations[" + std::string(key) +
                                         "]");
    }
    *out = *millis / 1000;
  }
  return Status::Ok();
}

// Appends the engine's flavors, cohorts and ClusterQueues for `state` to `out`.
Status QueuesOf(const ClusterState& state, adm::Snapshot& out) {
  out.fair_sharing = state.fair_sharing;
  out.now = state.now;
  for (const auto& f : state.flavors) {
    adm::FlavorSpec ef{f.metadata.name, f.spec.node_labels, {}};
    for (const auto& t : f.spec.node_taints) ef.node_taints.push_back({t.key, t.value, ToEngine(t.effect)});
    out.flavors.push_back(std::move(ef));
  }
  for (const auto& c : state.cohorts) {
    out.cohorts.push_back({c.metadata.name, c.spec.parent_name, ToEngine(c.spec.resource_groups),
                           c.spec.fair_sharing ? c.spec.fair_sharing->weight.milli() : 1000});
  }
  for (const auto& q : state.cluster_queues) {
    adm::ClusterQueueSpec e;
    Status s = q.unusable.empty() ? ClusterQueueSpecOf(q, state.default_min_runtime, e) : InvalidArgument(q.unusable);
    if (!s.ok()) {
      if (!state.keep_going) return s;
      // One queue rota cannot use must not stop every other: it admits nothing, and says why.
      e = adm::ClusterQueueSpec{};
      e.name = q.metadata.name;
      e.invalid = "rota cannot use its spec: " + s.message();
    }
    out.cluster_queues.push_back(std::move(e));
  }
  return Status::Ok();
}

bool Finished(const Workload& w) {
  if (!w.status) return false;
  const Condition* finished = FindCondition(w.status->conditions, workload_condition::kFinished);
  return finished && finished->status == ConditionStatus::kTrue;
}

struct SpecInfo {
  bool pod_sets_read = false;   // the pod sets and creation time were read without error
  bool depends_on_now = false;  // the result changes with state.now (a requeue time not reached)
};

// The engine's view of one workload into `e`. `reuse`, when not null, is an earlier view of the
// same workload at the same uid and generation whose pod sets and creation time were read without
// error: they are taken from it (moved) instead of reading the pod templates again. Fails only
// without keep_going.
Status WorkloadSpecOf(const Workload& w, Resolver& r, adm::WorkloadSpec* reuse, adm::WorkloadSpec& e, SpecInfo& info) {
  const WorkloadStatus* status = w.status ? &*w.status : nullptr;
  e.key = Key(w.metadata);
  auto who = [&] { return "Workload \"" + e.key + "\""; };  // only on errors
  Status problem;  // with state.keep_going: the first thing rota could not read
  if (reuse) {
    e.creation_time = reuse->creation_time;
    e.pod_sets = std::move(reuse->pod_sets);
    info.pod_sets_read = true;
  } else {
    auto created = ParseTime(w.metadata.creation_timestamp);
    Status s = created.ok() ? PodSetsOf(w, e.key, e.pod_sets)
                            : created.status().WithContext(who() + ": metadata.creationTimestamp");
    if (!s.ok()) {
      if (!r.keep_going) return s;
      problem = s;
      e.pod_sets.clear();
    }
    e.creation_time = created.ok() ? *created : 0;
    info.pod_sets_read = s.ok();
  }

  // Priority: spec.priority, else the class's value.
  const WorkloadPriorityClass* cls = nullptr;
  if (w.spec.priority_class_ref && w.spec.priority_class_ref->kind == "WorkloadPriorityClass") {
    auto it = r.classes.find(w.spec.priority_class_ref->name);
    if (it != r.classes.end()) cls = it->second;
  }
  e.priority = w.spec.priority.value_or(cls ? cls->value : 0);
  e.preemptible = !cls || cls->preemptible();

  // Resolve its queue, or say why it cannot be queued (also for an admitted workload, which
  // needs its queue again once it is evicted).
  auto inadmissible = [&](const std::string& reason, const std::string& message) {
    e.inadmissible_reason = reason;
    e.inadmissible_message = message;
  };
  auto lq = r.lqs.find(w.metadata.namespace_ + "/" + w.spec.queue_name);
  int64_t requeue_at = 0;
  if (status && status->requeue_state && !status->requeue_state->requeue_at.empty()) {
    auto t = ParseTime(status->requeue_state->requeue_at);
    if (!t.ok() && !r.keep_going) return t.status().WithContext(who() + ": status.requeueState.requeueAt");
    if (!t.ok() && problem.ok()) problem = t.status().WithContext(who() + ": status.requeueState.requeueAt");
    requeue_at = t.ok() ? *t : 0;
  }
  // Backoff lasts until requeueAt: until then the answer depends on the time of the build.
  info.depends_on_now = r.state.now > 0 && requeue_at > r.state.now;
  if (!w.spec.active) {
    inadmissible("Inactive", "the workload is deactivated (spec.active is false)");
  } else if (r.state.now > 0 && requeue_at > r.state.now && !(status && status->admission)) {
    inadmissible("Backoff", "waiting until " + status->requeue_state->requeue_at +
                                " before it is requeued (backoff after eviction)");
  } else if (w.spec.priority_class_ref && w.spec.priority_class_ref->kind == "WorkloadPriorityClass" && !cls) {
    inadmissible("Inadmissible", "WorkloadPriorityClass " + w.spec.priority_class_ref->name + " doesn't exist");
  } else if (w.spec.queue_name.empty()) {
    inadmissible("Inadmissible", "the workload names no LocalQueue (spec.queueName is empty)");
  } else if (lq == r.lqs.end()) {
    inadmissible("Inadmissible", "LocalQueue " + w.spec.queue_name + " doesn't exist");
  } else if (lq->second->spec.stop_policy != StopPolicy::kNone) {
    inadmissible("Stopped", "LocalQueue " + w.spec.queue_name + " is stopped");
  } else {
    e.cluster_queue = lq->second->spec.cluster_queue;
    auto cq = r.cqs.find(e.cluster_queue);
    if (cq != r.cqs.end()) {
      // Once per (ClusterQueue, namespace), not per workload.
      auto [match, fresh] = r.selected.try_emplace(e.cluster_queue + "\n" + w.metadata.namespace_, false);
      if (fresh) {
        const auto& selector = cq->second->spec.namespace_selector;
        std::map<std::string, std::string> labels;
        auto nl = r.state.namespace_labels.find(w.metadata.namespace_);
        if (nl != r.state.namespace_labels.end()) labels = nl->second;
        labels["kubernetes.io/metadata.name"] = w.metadata.namespace_;
        // (A queue rota cannot use has no selector to go by: its workloads wait with its reason.)
        match->second = !cq->second->unusable.empty() || (selector && selector->Matches(labels));
      }
      if (!match->second) {
        inadmissible("Inadmissible", "Workload namespace doesn't match ClusterQueue selector");
      }
    }
  }
  if (status && status->admission) {
    adm::AdmissionSpec a;
    a.cluster_queue = status->admission->cluster_queue;
    for (const auto& psa : status->admission->pod_set_assignments) {
      adm::PodSetAdmission ep;
      ep.name = psa.name;
      ep.flavors = psa.flavors;
      for (const auto& [r, q] : psa.resource_usage) ep.usage[r] = q.milli();
      int32_t spec_count = 0;
      for (const auto& ps : w.spec.pod_sets)
        if (ps.name == psa.name) spec_count = ps.count;
      ep.count = psa.count.value_or(spec_count);
      a.pod_sets.push_back(std::move(ep));
    }
    e.admission = std::move(a);
    if (const Condition* c = FindCondition(status->conditions, workload_condition::kQuotaReserved)) {
      auto t = ParseTime(c->last_transition_time);
      if (!t.ok() && !r.keep_going) {
        return t.status().WithContext(who() + ": status.conditions[QuotaReserved].lastTransitionTime");
      }
      e.admission_time = t.ok() ? *t : 0;
    }
    if (const Condition* c = FindCondition(status->conditions, workload_condition::kEvicted)) {
      e.evicted = c->status == ConditionStatus::kTrue;
    }
    // (A malformed report counts as no checkpoint: the trainer's mistake must not block it.)
    auto saved = ParseTime(AnnotationOr(w.metadata.annotations, kCheckpointedAtAnnotation));
    e.last_checkpoint = saved.ok() ? *saved : 0;
  }

  if (!problem.ok()) {
    e.inadmissible_reason = "Inadmissible";
    e.inadmissible_message = problem.message();
  }
  ApplyBudgets(w, r, e);
  e.fair_queue = FairQueueOf(w, r, e);
  e.shape = r.shapes && problem.ok() ? r.shapes->Of(e) : 0;
  return Status::Ok();
}

}  // namespace

double EntryPenaltyFactor(const AdmissionFairSharingConfig& config) {
  if (config.usage_half_life <= 0) return 0;
  return 1 - std::pow(0.5, double(config.usage_sampling_interval) / double(config.usage_half_life));
}

Result<adm::Snapshot> BuildSnapshot(const ClusterState& state) {
  adm::Snapshot out;
  if (Status s = QueuesOf(state, out); !s.ok()) return s;
  Resolver resolver(state);
  resolver.IndexFairQueues();
  PoolsOf(state, resolver, out);
  adm::ShapeTable shapes;
  resolver.shapes = &shapes;
  for (const auto& shared : state.workloads) {
    if (Finished(*shared)) continue;
    adm::WorkloadSpec e;
    SpecInfo info;
    if (Status s = WorkloadSpecOf(*shared, resolver, nullptr, e, info); !s.ok()) return s;
    Reserve(*shared, resolver, e, out);
    out.workloads.push_back(std::move(e));
  }
  FairQueuesOf(resolver, out);
  return out;
}

namespace {

// Names and resourceVersions of everything a workload is resolved against (ClusterQueues,
// LocalQueues, priority classes) and the namespaces' labels; `unversioned` when an object has no
// resourceVersion (then a change could not be told apart).
std::string ResolvedAgainst(const ClusterState& state, bool& unversioned) {
  std::string out;
  // Workloads are resolved against the spec of queues and priority classes only, so an object
  // counts as changed when its generation does (the apiserver does not bump it for the status
  // subresource: the queue status rota writes every few seconds changes nothing here). Objects
  // without a generation (read from files) fall back to their resourceVersion.
  auto add = [&](const ObjectMeta& m) {
    out.append(m.namespace_).append("/").append(m.name);
    if (m.generation && *m.generation > 0) {
      out.append("#").append(std::to_string(*m.generation)).append("\n");
      return;
    }
    unversioned = unversioned || m.resource_version.empty();
    out.append("@").append(m.resource_version).append("\n");
  };
  for (const auto& q : state.cluster_queues) add(q.metadata);
  for (const auto& lq : state.local_queues) add(lq.metadata);
  for (const auto& c : state.priority_classes) add(c.metadata);
  if (state.admission_fair_sharing) out.append("admission fair sharing\n");
  // Budgets, but for what remains of their requireFit pools (snapshot-wide, made every build).
  for (const auto& [cq, gates] : state.budget_gates) {
    for (const BudgetGate& g : gates) {
      out.append("budget:").append(cq).append("/").append(g.budget).append(g.exhausted ? "!" : ".");
      out.append(std::to_string(static_cast<int>(g.when_exhausted))).append("@");
      out.append(std::to_string(g.exhausted_since)).append(":").append(g.message).append("|");
      for (const auto& [resource, pool] : g.fit_pools) {
        out.append(resource).append("{");
        for (const auto& [r, w] : pool.weights_milli) out.append(r).append("=").append(std::to_string(w)).append(",");
        out.append("}");
      }
      out.append("\n");
    }
  }
  for (const auto& [ns, labels] : state.namespace_labels) {
    out.append(ns).append(":");
    for (const auto& [k, v] : labels) out.append(k).append("=").append(v).append(",");
    out.append("\n");
  }
  return out;
}

}  // namespace

Status SnapshotBuilder::Build(const ClusterState& state) {
  ++builds_;
  snapshot_.flavors.clear();
  snapshot_.cohorts.clear();
  snapshot_.cluster_queues.clear();
  if (Status s = QueuesOf(state, snapshot_); !s.ok()) return s;
  bool unversioned = false;
  std::string against = ResolvedAgainst(state, unversioned);
  const bool remake_all = unversioned || against != resolved_against_;
  resolved_against_ = std::move(against);

  Resolver resolver(state);
  resolver.keep_going = true;
  resolver.shapes = &shapes_;
  resolver.IndexFairQueues();
  PoolsOf(state, resolver, snapshot_);
  // Makes slot i's entry from `shared`.
  auto make = [&](size_t i, std::shared_ptr<const Workload> shared) {
    const Workload& w = *shared;
    Slot& slot = slots_[i];
    adm::WorkloadSpec& entry = snapshot_.workloads[i];
    const bool same_spec = slot.object && slot.pod_sets_read && w.metadata.generation &&
                           slot.object->metadata.generation == w.metadata.generation &&
                           slot.object->metadata.uid == w.metadata.uid;
    adm::WorkloadSpec e;
    SpecInfo info;
    (void)WorkloadSpecOf(w, resolver, same_spec ? &entry : nullptr, e, info);  // keep_going: no error
    if (slot.placed && (e.priority != entry.priority || e.creation_time != entry.creation_time)) {
      snapshot_.order[order_pos_[i]] = kGone;  // placed again below, by its new priority or time
      slot.placed = false;
    }
    entry = std::move(e);
    if (slot.object != shared || info.depends_on_now) Unhint(i);  // (StillHas is for unchanged entries)
    slot.local_queue = NumberOf(w.metadata.namespace_ + "/" + w.spec.queue_name);
    slot.cluster_queue = entry.cluster_queue.empty() ? kNoQueue : NumberOf(entry.cluster_queue);
    slot.remake = info.depends_on_now;
    slot.pod_sets_read = info.pod_sets_read;
    slot.seen = builds_;
    slot.stamp = ++stamps_;
    by_object_[&w] = i;
    slot.object = std::move(shared);
  };
  for (const auto& shared : state.workloads) {
    const Workload& w = *shared;
    if (!remake_all) {
      auto same = by_object_.find(&w);
      if (same != by_object_.end() && !slots_[same->second].remake) {
        slots_[same->second].seen = builds_;
        continue;
      }
    }
    if (Finished(w)) continue;
    std::string key = Key(w.metadata);
    size_t i;
    if (const uint32_t* k = SlotOf(key)) {
      i = *k;
      if (slots_[i].seen == builds_) continue;  // two objects of one key: the first one counts
      by_object_.erase(slots_[i].object.get());
    } else {
      i = slots_.size();
      // An entry per workload: grow by an eighth, not by doubling (a doubled vector stays half
      // empty, and the old and new blocks are both held while its entries move).
      if (slots_.size() == slots_.capacity()) {
        slots_.reserve(slots_.size() + slots_.size() / 8 + 64);
        snapshot_.workloads.reserve(slots_.capacity());
      }
      slots_.emplace_back();
      snapshot_.workloads.emplace_back();
      order_pos_.push_back(kGone);
      vouched_.push_back(0);
      snapshot_.workloads[i].key = std::move(key);  // (make keeps it: it is the object's key)
      by_key_.insert(static_cast<uint32_t>(i));
    }
    make(i, shared);
  }
  // The entries the caller vouched for (StillHas) stay, made again from their objects when
  // everything is.
  if (remake_all) {
    for (size_t i = 0; i < slots_.size(); ++i)
      if (vouched_[i] == builds_ && slots_[i].seen != builds_) make(i, slots_[i].object);
  }
  // Workloads gone from the state (deleted, finished) are forgotten; the last entry fills the gap.
  for (size_t i = slots_.size(); i-- > 0;) {
    if (slots_[i].seen == builds_ || vouched_[i] == builds_) continue;
    by_object_.erase(slots_[i].object.get());
    by_key_.erase(static_cast<uint32_t>(i));
    Unhint(i);
    if (slots_[i].placed) snapshot_.order[order_pos_[i]] = kGone;
    const size_t last = slots_.size() - 1;
    if (i != last) {
      by_key_.erase(static_cast<uint32_t>(last));  // (while its entry still holds the key)
      slots_[i] = std::move(slots_[last]);
      snapshot_.workloads[i] = std::move(snapshot_.workloads[last]);
      order_pos_[i] = order_pos_[last];
      vouched_[i] = vouched_[last];
      if (slots_[i].hint != kNoHint && hints_[slots_[i].hint].slot == last)
        hints_[slots_[i].hint].slot = static_cast<uint32_t>(i);
      if (slots_[i].placed) snapshot_.order[order_pos_[i]] = static_cast<uint32_t>(i);
      by_key_.insert(static_cast<uint32_t>(i));
      by_object_[slots_[i].object.get()] = i;
    }
    slots_.pop_back();
    snapshot_.workloads.pop_back();
    order_pos_.pop_back();
    vouched_.pop_back();
  }
  PlaceInOrder();
  if (!resolver.pools.empty()) {
    for (size_t i = 0; i < slots_.size(); ++i) Reserve(*slots_[i].object, resolver, snapshot_.workloads[i], snapshot_);
  }
  FairQueuesOf(resolver, snapshot_);
  // Names of queues no workload names any more (deleted LocalQueues, typos) are let go once they
  // outnumber the workloads, so that the table stays within a small multiple of what is in use.
  if (queue_names_.size() > 2 * slots_.size() + 1024) RenumberQueues();
  return Status::Ok();
}

bool SnapshotBuilder::StillHas(const Workload* object, size_t place) {
  const uint64_t next = builds_ + 1;
  if (place < hints_.size() && hints_[place].object == object) {
    vouched_[hints_[place].slot] = next;
    return true;
  }
  auto it = by_object_.find(object);
  if (it == by_object_.end() || slots_[it->second].remake) return false;
  const size_t i = it->second;
  vouched_[i] = next;
  if (place < 4 * slots_.size() + 1024) {  // (places are the caller's; a wild one is not kept)
    if (place >= hints_.size()) hints_.resize(place + 1);
    Unhint(i);
    if (hints_[place].object) slots_[hints_[place].slot].hint = kNoHint;  // another slot's place before
    hints_[place] = Hint{object, static_cast<uint32_t>(i)};
    slots_[i].hint = static_cast<uint32_t>(place);
  }
  return true;
}

void SnapshotBuilder::Unhint(size_t slot) {
  uint32_t& h = slots_[slot].hint;
  if (h == kNoHint) return;
  if (hints_[h].object && hints_[h].slot == slot) hints_[h] = Hint{};
  h = kNoHint;
}

void SnapshotBuilder::PlaceInOrder() {
  std::vector<uint32_t> fresh;
  for (size_t i = 0; i < slots_.size(); ++i)
    if (!slots_[i].placed) fresh.push_back(static_cast<uint32_t>(i));
  std::vector<uint32_t>& order = snapshot_.order;
  if (fresh.empty() && order.size() == slots_.size()) return;  // nothing left, came or moved
  const auto& entries = snapshot_.workloads;
  auto before = [&entries](uint32_t a, uint32_t b) { return adm::InSchedulingOrder(entries[a], entries[b]); };
  std::sort(fresh.begin(), fresh.end(), before);
  // The kept entries stay in their order; each new one goes after the last kept entry that is not
  // behind it (found by halving, so that a pass compares a few entries per new one rather than
  // walking every waiting workload).
  std::vector<uint32_t> merged;
  merged.reserve(slots_.size());
  order.erase(std::remove(order.begin(), order.end(), kGone), order.end());
  auto from = order.begin();
  for (uint32_t f : fresh) {
    auto to = std::upper_bound(from, order.end(), f, before);
    merged.insert(merged.end(), from, to);
    merged.push_back(f);
    from = to;
  }
  merged.insert(merged.end(), from, order.end());
  order = std::move(merged);
  for (size_t p = 0; p < order.size(); ++p) order_pos_[order[p]] = static_cast<uint32_t>(p);
  for (uint32_t f : fresh) slots_[f].placed = true;
}

uint32_t SnapshotBuilder::NumberOf(std::string_view queue_name) {
  if (auto it = queue_numbers_.find(queue_name); it != queue_numbers_.end()) return it->second;
  const auto n = static_cast<uint32_t>(queue_names_.size());
  queue_names_.emplace_back(queue_name);
  queue_numbers_.emplace(queue_names_.back(), n);
  return n;
}

void SnapshotBuilder::RenumberQueues() {
  std::deque<std::string> names;
  names.swap(queue_names_);
  queue_numbers_.clear();
  for (Slot& s : slots_) {
    if (s.local_queue != kNoQueue) s.local_queue = NumberOf(names[s.local_queue]);
    if (s.cluster_queue != kNoQueue) s.cluster_queue = NumberOf(names[s.cluster_queue]);
  }
}

const uint32_t* SnapshotBuilder::SlotOf(std::string_view key) const {
  auto it = by_key_.find(key);
  return it == by_key_.end() ? nullptr : &*it;
}

const Workload* SnapshotBuilder::Object(const std::string& key) const {
  const uint32_t* i = SlotOf(key);
  return i ? slots_[*i].object.get() : nullptr;
}

const adm::WorkloadSpec* SnapshotBuilder::Find(const std::string& key) const {
  const uint32_t* i = SlotOf(key);
  return i ? &snapshot_.workloads[*i] : nullptr;
}

adm::WorkloadSpec* SnapshotBuilder::Mutable(const std::string& key) {
  const uint32_t* i = SlotOf(key);
  if (!i) return nullptr;
  slots_[*i].remake = true;
  slots_[*i].stamp = ++stamps_;
  Unhint(*i);
  return &snapshot_.workloads[*i];
}

}  // namespace rota::api
