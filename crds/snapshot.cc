#include "rota/api/snapshot.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
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
    case TaintEffect::kNoSchedule: return adm::TaintEffect::kNoSchedule;
    case TaintEffect::kPreferNoSchedule: return adm::TaintEffect::kPreferNoSchedule;
    case TaintEffect::kNoExecute: return adm::TaintEffect::kNoExecute;
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
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6) {
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
    eps.name = ps.name;
    eps.count = ps.count;
    eps.min_count = ps.min_count;
    auto requests = PodRequests(ps.template_, path + ".template");
    if (!requests.ok()) return requests.status().WithContext(who());
    eps.per_pod = std::move(*requests);
    const Json& pod_spec = ps.template_.contains("spec") ? ps.template_["spec"] : Json::object();
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
        const Json& exprs = (*terms)[ti].contains("matchExpressions") ? (*terms)[ti]["matchExpressions"] : Json::array();
        for (size_t ei = 0; exprs.is_array() && ei < exprs.size(); ++ei) {
          const std::string epath = path + ".template.spec.affinity.nodeAffinity."
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
            return InvalidArgument(who() + ": " + epath + ".operator: unsupported value " +
                                   x["operator"].dump() + ": use one of In, NotIn, Exists, DoesNotExist, Gt, Lt");
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

Result<adm::Snapshot> BuildSnapshot(const ClusterState& state, PodSetMemo* memo) {
  if (memo) ++memo->builds_;
  adm::Snapshot out;
  out.fair_sharing = state.fair_sharing;
  for (const auto& f : state.flavors) {
    adm::FlavorSpec ef{f.metadata.name, f.spec.node_labels, {}};
    for (const auto& t : f.spec.node_taints) ef.node_taints.push_back({t.key, t.value, ToEngine(t.effect)});
    out.flavors.push_back(std::move(ef));
  }
  for (const auto& c : state.cohorts) {
    out.cohorts.push_back({c.metadata.name, c.spec.parent_name, ToEngine(c.spec.resource_groups),
                           c.spec.fair_sharing ? c.spec.fair_sharing->weight.milli() : 1000});
  }
  std::unordered_map<std::string, const ClusterQueue*> cqs;
  for (const auto& q : state.cluster_queues) {
    cqs[q.metadata.name] = &q;
    adm::ClusterQueueSpec e;
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
      case PreemptionPolicy::kLowerPriority: e.within_cluster_queue = adm::WithinClusterQueue::kLowerPriority; break;
      case PreemptionPolicy::kLowerOrNewerEqualPriority:
        e.within_cluster_queue = adm::WithinClusterQueue::kLowerOrNewerEqualPriority;
        break;
      case PreemptionPolicy::kNever: break;
      case PreemptionPolicy::kAny:
        return InvalidArgument("ClusterQueue \"" + e.name +
                               "\": spec.preemption.withinClusterQueue: Any is not supported: use "
                               "Never, LowerPriority or LowerOrNewerEqualPriority");
    }
    switch (p.reclaim_within_cohort) {
      case PreemptionPolicy::kLowerPriority: e.reclaim_within_cohort = adm::ReclaimWithinCohort::kLowerPriority; break;
      case PreemptionPolicy::kAny: e.reclaim_within_cohort = adm::ReclaimWithinCohort::kAny; break;
      case PreemptionPolicy::kNever: break;
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
    out.cluster_queues.push_back(std::move(e));
  }
  std::unordered_map<std::string, const LocalQueue*> lqs;
  for (const auto& lq : state.local_queues) lqs[Key(lq.metadata)] = &lq;
  std::unordered_map<std::string, const WorkloadPriorityClass*> classes;
  for (const auto& c : state.priority_classes) classes[c.metadata.name] = &c;

  std::unordered_map<std::string, bool> selected;  // "cq\nnamespace" -> namespace selected
  for (const auto& shared : state.workloads) {
    const Workload& w = *shared;
    const WorkloadStatus* status = w.status ? &*w.status : nullptr;
    if (status) {
      const Condition* finished = FindCondition(status->conditions, workload_condition::kFinished);
      if (finished && finished->status == ConditionStatus::kTrue) continue;
    }
    adm::WorkloadSpec e;
    e.key = Key(w.metadata);
    auto who = [&] { return "Workload \"" + e.key + "\""; };  // only on errors
    Status problem;  // with state.keep_going: the first thing rota could not read
    PodSetMemo::Entry* memo_entry = nullptr;
    const std::string& memo_key = w.metadata.uid.empty() ? e.key : w.metadata.uid;
    if (memo && w.metadata.generation) {
      auto [it, fresh] = memo->entries_.try_emplace(memo_key);
      memo_entry = &it->second;
      memo_entry->used = memo->builds_;
      if (fresh || memo_entry->generation != *w.metadata.generation) {
        memo_entry->generation = *w.metadata.generation;
        memo_entry->filled = false;
      }
    }
    if (memo_entry && memo_entry->filled) {
      e.creation_time = memo_entry->creation_time;
      e.pod_sets = memo_entry->pod_sets;
    } else {
      auto created = ParseTime(w.metadata.creation_timestamp);
      Status s = created.ok() ? PodSetsOf(w, e.key, e.pod_sets)
                              : created.status().WithContext(who() + ": metadata.creationTimestamp");
      if (!s.ok()) {
        if (memo_entry) memo->entries_.erase(memo_key);  // read again next time: never memo a failure
        memo_entry = nullptr;
        if (!state.keep_going) return s;
        problem = s;
        e.pod_sets.clear();
      }
      e.creation_time = created.ok() ? *created : 0;
      if (memo_entry) {
        memo_entry->creation_time = e.creation_time;
        memo_entry->pod_sets = e.pod_sets;
        memo_entry->filled = true;
      }
    }

    // Priority: spec.priority, else the class's value.
    const WorkloadPriorityClass* cls = nullptr;
    if (w.spec.priority_class_ref && w.spec.priority_class_ref->kind == "WorkloadPriorityClass") {
      auto it = classes.find(w.spec.priority_class_ref->name);
      if (it != classes.end()) cls = it->second;
    }
    e.priority = w.spec.priority.value_or(cls ? cls->value : 0);
    e.preemptible = !cls || cls->preemptible();

    // Resolve its queue, or say why it cannot be queued (also for an admitted workload, which
    // needs its queue again once it is evicted).
    auto inadmissible = [&](const std::string& reason, const std::string& message) {
      e.inadmissible_reason = reason;
      e.inadmissible_message = message;
    };
    auto lq = lqs.find(w.metadata.namespace_ + "/" + w.spec.queue_name);
    int64_t requeue_at = 0;
    if (status && status->requeue_state && !status->requeue_state->requeue_at.empty()) {
      auto t = ParseTime(status->requeue_state->requeue_at);
      if (!t.ok() && !state.keep_going) return t.status().WithContext(who() + ": status.requeueState.requeueAt");
      if (!t.ok() && problem.ok()) problem = t.status().WithContext(who() + ": status.requeueState.requeueAt");
      requeue_at = t.ok() ? *t : 0;
    }
    if (!w.spec.active) {
      inadmissible("Inactive", "the workload is deactivated (spec.active is false)");
    } else if (state.now > 0 && requeue_at > state.now && !(status && status->admission)) {
      inadmissible("Backoff", "waiting until " + status->requeue_state->requeue_at +
                                  " before it is requeued (backoff after eviction)");
    } else if (w.spec.priority_class_ref && w.spec.priority_class_ref->kind == "WorkloadPriorityClass" && !cls) {
      inadmissible("Inadmissible",
                   "WorkloadPriorityClass " + w.spec.priority_class_ref->name + " doesn't exist");
    } else if (w.spec.queue_name.empty()) {
      inadmissible("Inadmissible", "the workload names no LocalQueue (spec.queueName is empty)");
    } else if (lq == lqs.end()) {
      inadmissible("Inadmissible", "LocalQueue " + w.spec.queue_name + " doesn't exist");
    } else if (lq->second->spec.stop_policy != StopPolicy::kNone) {
      inadmissible("Stopped", "LocalQueue " + w.spec.queue_name + " is stopped");
    } else {
      e.cluster_queue = lq->second->spec.cluster_queue;
      auto cq = cqs.find(e.cluster_queue);
      if (cq != cqs.end()) {
        // Once per (ClusterQueue, namespace), not per workload.
        auto [match, fresh] = selected.try_emplace(e.cluster_queue + "\n" + w.metadata.namespace_, false);
        if (fresh) {
          const auto& selector = cq->second->spec.namespace_selector;
          std::map<std::string, std::string> labels;
          auto nl = state.namespace_labels.find(w.metadata.namespace_);
          if (nl != state.namespace_labels.end()) labels = nl->second;
          labels["kubernetes.io/metadata.name"] = w.metadata.namespace_;
          match->second = selector && selector->Matches(labels);
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
        if (!t.ok() && !state.keep_going) {
          return t.status().WithContext(who() + ": status.conditions[QuotaReserved].lastTransitionTime");
        }
        e.admission_time = t.ok() ? *t : 0;
      }
      if (const Condition* c = FindCondition(status->conditions, workload_condition::kEvicted)) {
        e.evicted = c->status == ConditionStatus::kTrue;
      }
    }

    if (!problem.ok()) {
      e.inadmissible_reason = "Inadmissible";
      e.inadmissible_message = problem.message();
    }
    out.workloads.push_back(std::move(e));
  }
  if (memo) {
    for (auto it = memo->entries_.begin(); it != memo->entries_.end();) {
      it = it->second.used == memo->builds_ ? std::next(it) : memo->entries_.erase(it);
    }
  }
  return out;
}

}  // namespace rota::api
