#include "webhooks.h"

#include <cctype>
#include <map>
#include <set>

#include "budget/window.h"
#include "rota/admission/quantity.h"
#include "rota/api/budget.h"
#include "rota/api/checkpoint.h"
#include "rota/api/snapshot.h"

namespace rota::webhook {
namespace {

constexpr std::string_view kQueueLabel = "kueue.x-k8s.io/queue-name";
constexpr std::string_view kPriorityClassLabel = "kueue.x-k8s.io/priority-class";
constexpr std::string_view kMinParallelism = "kueue.x-k8s.io/job-min-parallelism";

// A string at `path` in `obj` ("" when absent or not a string).
std::string Str(const Json& obj, std::initializer_list<const char*> path) {
  const Json* cur = &obj;
  for (const char* k : path) {
    if (!cur->is_object()) return "";
    auto it = cur->find(k);
    if (it == cur->end()) return "";
    cur = &*it;
  }
  return cur->is_string() ? cur->get<std::string>() : "";
}

const Json& Member(const Json& obj, std::initializer_list<const char*> path) {
  static const Json kNull;
  const Json* cur = &obj;
  for (const char* k : path) {
    if (!cur->is_object()) return kNull;
    auto it = cur->find(k);
    if (it == cur->end()) return kNull;
    cur = &*it;
  }
  return *cur;
}

// `Job "train" in namespace "ml"`, or with generateName when the name is not chosen yet.
std::string Describe(const std::string& kind, const AdmissionRequest& req, const Json& obj) {
  std::string name = Str(obj, {"metadata", "name"});
  if (name.empty()) name = req.name;
  std::string who = kind + " \"" + name + "\"";
  if (const std::string generate = Str(obj, {"metadata", "generateName"}); name.empty() && !generate.empty()) {
    who = kind + " (generateName \"" + generate + "\")";
  }
  if (!req.namespace_.empty()) who += " in namespace \"" + req.namespace_ + "\"";
  return who;
}

std::string Label(const Json& obj, std::string_view key) {
  const Json& labels = Member(obj, {"metadata", "labels"});
  if (!labels.is_object()) return "";
  auto it = labels.find(std::string(key));
  return it != labels.end() && it->is_string() ? it->get<std::string>() : "";
}

bool HasLabel(const Json& obj, std::string_view key) {
  const Json& labels = Member(obj, {"metadata", "labels"});
  return labels.is_object() && labels.contains(std::string(key));
}

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

// JSON text of a value for a message; bytes that are not UTF-8 become U+FFFD instead of throwing.
std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// Joins field errors into one sentence list; the response says which object they are about.
AdmissionResponse DenyAll(const std::string& who, const std::vector<std::string>& errors) {
  std::string msg = who + " is invalid: ";
  for (size_t i = 0; i < errors.size(); ++i) msg += (i ? "; " : "") + errors[i];
  return AdmissionResponse::Deny(msg);
}

bool JobSuspended(const Json& job) {
  const Json& s = Member(job, {"spec", "suspend"});
  return s.is_boolean() && s.get<bool>();
}

// The queue a Job is submitted to: its label, else "default" when that LocalQueue exists.
std::string JobQueue(const AdmissionRequest& req, const Json& job, const ClusterView& view) {
  std::string q = Label(job, kQueueLabel);
  if (q.empty() && view.LocalQueueExists(req.namespace_, "default")) q = "default";
  return q;
}

// A Job that another controller owns (a JobSet's child, say) is that controller's business.
bool OwnedByAController(const Json& obj) {
  const Json& refs = Member(obj, {"metadata", "ownerReferences"});
  if (!refs.is_array()) return false;
  for (const Json& r : refs)
    if (const Json& c = Member(r, {"controller"}); c.is_boolean() && c.get<bool>()) return true;
  return false;
}

// Requests and limits of every container of a pod template; adds errors under `field`.
void CheckContainerResources(const Json& pod_spec, const std::string& field, std::vector<std::string>& errors,
                             std::map<std::string, int64_t>* per_pod) {
  for (const char* list : {"initContainers", "containers"}) {
    const Json& cs = Member(pod_spec, {list});
    if (!cs.is_array()) continue;
    for (size_t i = 0; i < cs.size(); ++i) {
      const std::string at = field + "." + list + "[" + std::to_string(i) + "].resources";
      std::map<std::string, int64_t> req, lim;
      for (auto [key, out] : {std::pair{"requests", &req}, std::pair{"limits", &lim}}) {
        const Json& m = Member(cs[i], {"resources", key});
        if (!m.is_object()) continue;
        for (auto it = m.begin(); it != m.end(); ++it) {
          auto q = it->is_string() ? Quantity::Parse(it->get<std::string>())
                                   : Result<Quantity>(InvalidArgument("not a quantity"));
          if (!q.ok()) {
            errors.push_back(at + "." + key + "[" + it.key() + "]: " + Dump(*it) + " is not a valid quantity");
            continue;
          }
          if (q->milli() < 0) {
            errors.push_back(at + "." + key + "[" + it.key() + "]: " + q->ToString() +
                             " must be greater than or equal to 0");
            continue;
          }
          (*out)[it.key()] = q->milli();
        }
      }
      for (const auto& [r, v] : req) {
        auto l = lim.find(r);
        if (l != lim.end() && v > l->second) {
          errors.push_back(at + ".requests[" + r + "]: " + Quantity::FromMilli(v).ToString() +
                           " must be less than or equal to the limit " + Quantity::FromMilli(l->second).ToString());
        }
      }
      if (per_pod && std::string(list) == "containers") {
        // A limit without a request requests the limit (the apiserver defaults pods so).
        std::map<std::string, int64_t> eff = lim;
        for (const auto& [r, v] : req) eff[r] = v;
        for (const auto& [r, v] : eff) {
          int64_t& sum = (*per_pod)[r];
          if (__builtin_add_overflow(sum, v, &sum)) sum = INT64_MAX;
        }
      }
    }
  }
}

bool HoldsQuota(const Json& wl) {
  if (Member(wl, {"status", "admission"}).is_object()) return true;
  const Json& conds = Member(wl, {"status", "conditions"});
  if (!conds.is_array()) return false;
  for (const Json& c : conds)
    if (Str(c, {"type"}) == "QuotaReserved" && Str(c, {"status"}) == "True") return true;
  return false;
}

}  // namespace

std::string CheckDns1123Subdomain(std::string_view v) {
  if (v.empty()) return "must not be empty";
  if (v.size() > 253) return "must be no more than 253 characters";
  size_t start = 0;
  while (start <= v.size()) {
    size_t dot = v.find('.', start);
    std::string_view part = v.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part.empty() || !IsLowerAlnum(part.front()) || !IsLowerAlnum(part.back())) {
      return "must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an "
             "alphanumeric character";
    }
    for (char c : part)
      if (!IsLowerAlnum(c) && c != '-')
        return "must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an "
               "alphanumeric character";
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return "";
}

namespace {
std::string CheckNamePart(std::string_view name) {
  if (name.empty()) return "the name part must not be empty";
  if (name.size() > 63) return "the name part must be no more than 63 characters";
  if (!IsAlnum(name.front()) || !IsAlnum(name.back()))
    return "the name part must start and end with an alphanumeric character";
  for (char c : name)
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.')
      return "the name part must consist of alphanumeric characters, '-', '_' or '.'";
  return "";
}
}  // namespace

std::string CheckQualifiedName(std::string_view v) {
  const size_t slash = v.find('/');
  if (slash == std::string_view::npos) return CheckNamePart(v);
  if (v.find('/', slash + 1) != std::string_view::npos)
    return "must be a name with an optional DNS prefix: prefix/name";
  if (std::string prefix = CheckDns1123Subdomain(v.substr(0, slash)); !prefix.empty()) return "the prefix " + prefix;
  return CheckNamePart(v.substr(slash + 1));
}

std::string CheckLabelValue(std::string_view v) {
  if (v.empty()) return "";
  if (v.size() > 63) return "must be no more than 63 characters";
  if (!IsAlnum(v.front()) || !IsAlnum(v.back())) return "must start and end with an alphanumeric character";
  for (char c : v)
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.')
      return "must consist of alphanumeric characters, '-', '_' or '.'";
  return "";
}

// rota.dev/checkpoint and rota.dev/checkpoint-timeout (docs/checkpoint.md), when set.
void CheckCheckpointAnnotations(const Json& obj, std::vector<std::string>& errors) {
  const Json& ann = Member(obj, {"metadata", "annotations"});
  if (!ann.is_object()) return;
  auto text = [&](std::string_view key) -> std::optional<std::string> {
    auto it = ann.find(std::string(key));
    if (it == ann.end()) return std::nullopt;
    return it->is_string() ? it->get<std::string>() : Dump(*it);
  };
  auto field = [](std::string_view key) { return "metadata.annotations[" + std::string(key) + "]: "; };
  if (auto v = text(api::kCheckpointAnnotation); v && *v != "true" && *v != "false")
    errors.push_back(field(api::kCheckpointAnnotation) + Quote(*v) + " must be \"true\" or \"false\"");
  if (auto v = text(api::kCheckpointTimeoutAnnotation)) {
    auto millis = api::ParseGoDuration(*v);
    if (!millis.ok())
      errors.push_back(field(api::kCheckpointTimeoutAnnotation) + millis.status().message());
    else if (*millis < 1000)
      errors.push_back(field(api::kCheckpointTimeoutAnnotation) + Quote(*v) + " must be at least 1s");
  }
  if (auto v = text(api::kCheckpointedAtAnnotation); v && !api::ParseTime(*v).ok()) {
    errors.push_back(field(api::kCheckpointedAtAnnotation) + Quote(*v) +
                     " is not an RFC 3339 time such as 2026-11-26T12:00:00Z");
  }
}

AdmissionResponse MutateJob(const AdmissionRequest& req, const ClusterView& view) {
  if (req.operation != "CREATE" || !req.object.is_object()) return AdmissionResponse::Allow();
  if (OwnedByAController(req.object)) return AdmissionResponse::Allow();
  if (JobQueue(req, req.object, view).empty()) return AdmissionResponse::Allow();  // not queued: left alone
  if (JobSuspended(req.object)) return AdmissionResponse::Allow();
  AdmissionResponse r;
  // "add" sets a member whether or not it exists; spec is required on a Job.
  r.patch = Json::array({{{"op", "add"}, {"path", "/spec/suspend"}, {"value", true}}});
  return r;
}

AdmissionResponse ValidateJob(const AdmissionRequest& req, const ClusterView& view) {
  if (req.operation != "CREATE" && req.operation != "UPDATE") return AdmissionResponse::Allow();
  const Json& job = req.object;
  const std::string who = Describe("Job", req, job);
  std::vector<std::string> errors;
  const std::string queue = Label(job, kQueueLabel);
  if (HasLabel(job, kQueueLabel)) {
    if (std::string why = CheckDns1123Subdomain(queue); !why.empty()) {
      errors.push_back("metadata.labels[" + std::string(kQueueLabel) + "]: " + Quote(queue) +
                       " is not a valid LocalQueue name: it " + why);
    }
  }
  const std::string cls = Label(job, kPriorityClassLabel);
  const bool cls_changed = req.operation == "CREATE" || cls != Label(req.old_object, kPriorityClassLabel);
  if (!cls.empty() && cls_changed && !view.PriorityClassExists(cls)) {
    errors.push_back("metadata.labels[" + std::string(kPriorityClassLabel) + "]: WorkloadPriorityClass " + Quote(cls) +
                     " does not exist; create it or name an existing one (kubectl get workloadpriorityclasses)");
  }
  // Checked when set or changed: on admission rota itself lowers spec.parallelism to the admitted
  // count, which may then equal the annotation.
  const Json& ann = Member(job, {"metadata", "annotations"});
  const Json& old_ann = Member(req.old_object, {"metadata", "annotations"});
  auto min_of = [](const Json& a) {
    return a.is_object() && a.contains(std::string(kMinParallelism)) ? a[std::string(kMinParallelism)] : Json();
  };
  const bool min_changed = req.operation == "CREATE" || min_of(old_ann) != min_of(ann);
  if (ann.is_object() && ann.contains(std::string(kMinParallelism)) && min_changed) {
    const Json& v = ann[std::string(kMinParallelism)];
    const std::string text = v.is_string() ? v.get<std::string>() : Dump(v);
    const Json& par = Member(job, {"spec", "parallelism"});
    const int64_t parallelism = par.is_number_integer() ? par.get<int64_t>() : 1;
    int64_t n = 0;
    bool number = !text.empty() && text.size() < 10;
    for (char c : text) number = number && std::isdigit(static_cast<unsigned char>(c));
    if (number) n = std::stoll(text);
    if (!number || n <= 0 || n >= parallelism) {
      errors.push_back("metadata.annotations[" + std::string(kMinParallelism) + "]: " + Quote(text) +
                       " must be a whole number greater than 0 and less than spec.parallelism (" +
                       std::to_string(parallelism) + ")");
    }
  }
  CheckCheckpointAnnotations(job, errors);
  if (req.operation == "UPDATE") {
    const std::string old_queue = JobQueue(req, req.old_object, view);
    const std::string new_queue = HasLabel(job, kQueueLabel) ? queue : JobQueue(req, job, view);
    if (old_queue != new_queue && !old_queue.empty() && !JobSuspended(req.old_object)) {
      errors.push_back(
          "metadata.labels[" + std::string(kQueueLabel) + "]: cannot change from " + Quote(old_queue) + " to " +
          Quote(new_queue) +
          " while the Job is admitted (running); suspend it first (spec.suspend: true) or create a new Job");
    }
  }
  return errors.empty() ? AdmissionResponse::Allow() : DenyAll(who, errors);
}

AdmissionResponse ValidateWorkload(const AdmissionRequest& req, const ClusterView&) {
  if (req.operation != "CREATE" && req.operation != "UPDATE") return AdmissionResponse::Allow();
  const Json& wl = req.object;
  const std::string who = Describe("Workload", req, wl);
  std::vector<std::string> errors;
  const std::string queue = Str(wl, {"spec", "queueName"});
  if (!queue.empty()) {
    if (std::string why = CheckDns1123Subdomain(queue); !why.empty())
      errors.push_back("spec.queueName: " + Quote(queue) + " is not a valid LocalQueue name: it " + why);
  }
  CheckCheckpointAnnotations(wl, errors);
  const Json& pod_sets = Member(wl, {"spec", "podSets"});
  std::map<std::string, int64_t> totals;
  std::set<std::string> overflowed;
  if (pod_sets.is_array()) {
    for (size_t i = 0; i < pod_sets.size(); ++i) {
      const Json& ps = pod_sets[i];
      const std::string at = "spec.podSets[" + std::to_string(i) + "]";
      const Json& count_j = Member(ps, {"count"});
      const int64_t count = count_j.is_number_integer() ? count_j.get<int64_t>() : 1;
      if (count < 1) errors.push_back(at + ".count: " + std::to_string(count) + " must be at least 1");
      const Json& min_j = Member(ps, {"minCount"});
      if (min_j.is_number_integer()) {
        const int64_t min = min_j.get<int64_t>();
        if (min < 1 || min > count) {
          errors.push_back(at + ".minCount: " + std::to_string(min) + " must be at least 1 and at most count (" +
                           std::to_string(count) + ")");
        }
      }
      std::map<std::string, int64_t> per_pod;
      CheckContainerResources(Member(ps, {"template", "spec"}), at + ".template.spec", errors, &per_pod);
      for (const auto& [r, v] : per_pod) {
        int64_t need = 0;
        int64_t& sum = totals[r];
        if (v == INT64_MAX || __builtin_mul_overflow(v, std::max<int64_t>(count, 0), &need) ||
            __builtin_add_overflow(sum, need, &sum)) {
          overflowed.insert(r);
        }
      }
    }
  }
  for (const auto& r : overflowed) {
    errors.push_back("spec.podSets: the total request of " + r +
                     " (count x per-pod request, over all pod sets) is larger than rota can account (" +
                     Quantity::FromMilli(INT64_MAX).ToString() + ")");
  }
  if (req.operation == "UPDATE" && HoldsQuota(req.old_object)) {
    const std::pair<const char*, const char*> kImmutable[] = {
        {"podSets", "spec.podSets"}, {"queueName", "spec.queueName"}, {"priorityClassRef", "spec.priorityClassRef"}};
    for (auto [key, field] : kImmutable) {
      if (Member(wl, {"spec", key}) != Member(req.old_object, {"spec", key})) {
        errors.push_back(std::string(field) +
                         ": cannot change while the workload holds quota (status.admission is set); "
                         "it changes only after the workload is evicted or finished");
      }
    }
  }
  return errors.empty() ? AdmissionResponse::Allow() : DenyAll(who, errors);
}

AdmissionResponse ValidateCohort(const AdmissionRequest& req, const ClusterView& view) {
  if (req.operation != "CREATE" && req.operation != "UPDATE") return AdmissionResponse::Allow();
  const std::string self =
      Str(req.object, {"metadata", "name"}).empty() ? req.name : Str(req.object, {"metadata", "name"});
  const std::string parent = Str(req.object, {"spec", "parentName"});
  if (parent.empty()) return AdmissionResponse::Allow();
  const std::string who = Describe("Cohort", req, req.object);
  if (std::string why = CheckDns1123Subdomain(parent); !why.empty()) {
    return DenyAll(who, {"spec.parentName: " + Quote(parent) + " is not a valid Cohort name: it " + why});
  }
  // Walk up from the new parent; reaching this cohort again closes a cycle.
  std::vector<std::string> chain = {self, parent};
  std::set<std::string> seen = {self};
  std::string cur = parent;
  while (!cur.empty()) {
    if (cur == self) {
      std::string path;
      for (size_t i = 0; i < chain.size(); ++i) path += (i ? " -> " : "") + chain[i];
      return DenyAll(who, {"spec.parentName: " + Quote(parent) + " would make a cycle of cohorts (" + path +
                           "); cohorts must form a tree, so pick a parent that is not below " + Quote(self)});
    }
    if (!seen.insert(cur).second) break;  // a cycle above that does not include us
    std::optional<std::string> up = view.CohortParent(cur);
    if (!up || up->empty()) break;
    cur = *up;
    chain.push_back(cur);
  }
  return AdmissionResponse::Allow();
}

AdmissionResponse ValidateLocalQueue(const AdmissionRequest& req, const ClusterView&) {
  if (req.operation != "CREATE" && req.operation != "UPDATE") return AdmissionResponse::Allow();
  const std::string who = Describe("LocalQueue", req, req.object);
  const std::string cq = Str(req.object, {"spec", "clusterQueue"});
  std::vector<std::string> errors;
  if (!cq.empty()) {
    if (std::string why = CheckDns1123Subdomain(cq); !why.empty())
      errors.push_back("spec.clusterQueue: " + Quote(cq) + " is not a valid ClusterQueue name: it " + why);
  }
  if (req.operation == "UPDATE") {
    const std::string old_cq = Str(req.old_object, {"spec", "clusterQueue"});
    if (old_cq != cq) {
      errors.push_back("spec.clusterQueue: cannot change from " + Quote(old_cq) + " to " + Quote(cq) +
                       "; the field is immutable: delete and recreate the LocalQueue, or create a new one");
    }
  }
  return errors.empty() ? AdmissionResponse::Allow() : DenyAll(who, errors);
}

AdmissionResponse ValidateResourceFlavor(const AdmissionRequest& req, const ClusterView&) {
  if (req.operation != "CREATE" && req.operation != "UPDATE") return AdmissionResponse::Allow();
  const Json& rf = req.object;
  const std::string who = Describe("ResourceFlavor", req, rf);
  std::vector<std::string> errors;
  const Json& labels = Member(rf, {"spec", "nodeLabels"});
  if (labels.is_object()) {
    for (auto it = labels.begin(); it != labels.end(); ++it) {
      const std::string at = "spec.nodeLabels[" + it.key() + "]";
      if (std::string why = CheckQualifiedName(it.key()); !why.empty())
        errors.push_back(at + ": the key is not a valid label key: " + why);
      const std::string v = it->is_string() ? it->get<std::string>() : Dump(*it);
      if (std::string why = CheckLabelValue(v); !why.empty())
        errors.push_back(at + ": " + Quote(v) + " is not a valid label value: it " + why);
    }
  }
  static const std::set<std::string> kEffects = {"NoSchedule", "PreferNoSchedule", "NoExecute"};
  const Json& taints = Member(rf, {"spec", "nodeTaints"});
  if (taints.is_array()) {
    for (size_t i = 0; i < taints.size(); ++i) {
      const std::string at = "spec.nodeTaints[" + std::to_string(i) + "]";
      const std::string key = Str(taints[i], {"key"}), value = Str(taints[i], {"value"}),
                        effect = Str(taints[i], {"effect"});
      if (std::string why = CheckQualifiedName(key); !why.empty())
        errors.push_back(at + ".key: " + Quote(key) + " is not a valid taint key: " + why);
      if (std::string why = CheckLabelValue(value); !why.empty())
        errors.push_back(at + ".value: " + Quote(value) + " is not a valid taint value: it " + why);
      if (!kEffects.count(effect))
        errors.push_back(at + ".effect: " + Quote(effect) + " must be NoSchedule, PreferNoSchedule or NoExecute");
    }
  }
  const Json& tols = Member(rf, {"spec", "tolerations"});
  if (tols.is_array()) {
    for (size_t i = 0; i < tols.size(); ++i) {
      const std::string at = "spec.tolerations[" + std::to_string(i) + "]";
      const std::string key = Str(tols[i], {"key"}), op = Str(tols[i], {"operator"}), value = Str(tols[i], {"value"}),
                        effect = Str(tols[i], {"effect"});
      if (!key.empty()) {
        if (std::string why = CheckQualifiedName(key); !why.empty())
          errors.push_back(at + ".key: " + Quote(key) + " is not a valid key: " + why);
      } else if (op != "Exists") {
        errors.push_back(at + ".operator: must be Exists when key is empty (to tolerate every taint)");
      }
      if (!op.empty() && op != "Exists" && op != "Equal")
        errors.push_back(at + ".operator: " + Quote(op) + " must be Equal or Exists");
      if (op == "Exists" && !value.empty()) errors.push_back(at + ".value: must be empty when operator is Exists");
      if (op != "Exists") {
        if (std::string why = CheckLabelValue(value); !why.empty())
          errors.push_back(at + ".value: " + Quote(value) + " is not valid: it " + why);
      }
      if (!effect.empty() && !kEffects.count(effect))
        errors.push_back(at + ".effect: " + Quote(effect) + " must be NoSchedule, PreferNoSchedule or NoExecute");
      if (Member(tols[i], {"tolerationSeconds"}).is_number() && effect != "NoExecute") {
        errors.push_back(at + ".tolerationSeconds: only applies with effect NoExecute");
      }
    }
  }
  return errors.empty() ? AdmissionResponse::Allow() : DenyAll(who, errors);
}

namespace {
// A decoding error without the `Budget "name": ` DecodeObject puts in front (DenyAll names it).
std::string FieldError(const Status& s, const Json& obj) {
  const std::string prefix = api::DescribeObject(api::Budget::kKind, obj) + ": ";
  const std::string& m = s.message();
  return m.rfind(prefix, 0) == 0 ? m.substr(prefix.size()) : m;
}
}  // namespace

AdmissionResponse ValidateBudget(const AdmissionRequest& req, const ClusterView&) {
  if (req.operation != "CREATE" && req.operation != "UPDATE") return AdmissionResponse::Allow();
  const std::string who = Describe("Budget", req, req.object);
  Result<api::Budget> budget = api::DecodeObject<api::Budget>(req.object);
  if (!budget.ok()) return DenyAll(who, {FieldError(budget.status(), req.object)});
  if (Status s = controller::budget::ValidateBudget(budget->spec); !s.ok()) return DenyAll(who, {s.message()});
  return AdmissionResponse::Allow();
}

const std::vector<Route>& Routes() {
  static const std::vector<Route> kRoutes = {
      {"/mutate-batch-v1-job", &MutateJob},
      {"/validate-batch-v1-job", &ValidateJob},
      {"/validate-kueue-x-k8s-io-v1beta2-workload", &ValidateWorkload},
      {"/validate-kueue-x-k8s-io-v1beta2-cohort", &ValidateCohort},
      {"/validate-kueue-x-k8s-io-v1beta2-localqueue", &ValidateLocalQueue},
      {"/validate-kueue-x-k8s-io-v1beta2-resourceflavor", &ValidateResourceFlavor},
      {"/validate-rota-dev-v1alpha1-budget", &ValidateBudget},
  };
  return kRoutes;
}

}  // namespace rota::webhook
