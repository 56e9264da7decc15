#include "cache/compact_workload.h"

#include <set>
#include <string>
#include <vector>

#include "rota/api/checkpoint.h"
#include "rota/api/snapshot.h"

namespace rota::controller {
namespace {

using api::Json;
namespace wc = api::workload_condition;

// Whether the Workload document has condition Finished=True.
bool FinishedDocument(const Json& workload) {
  auto st = workload.find("status");
  if (st == workload.end() || !st->is_object()) return false;
  auto cs = st->find("conditions");
  if (cs == st->end() || !cs->is_array()) return false;
  for (const Json& c : *cs) {
    if (c.is_object() && c.value("type", Json()) == wc::kFinished && c.value("status", Json()) == "True") return true;
  }
  return false;
}

bool HasOwner(const Json& workload) {
  auto m = workload.find("metadata");
  if (m == workload.end() || !m->is_object()) return false;
  auto owners = m->find("ownerReferences");
  return owners != m->end() && owners->is_array() && !owners->empty();
}

// Of the metadata, the cache keeps identity, times, owners (the Job integration follows its
// Workloads by owner), the checkpoint annotations (rota.dev/checkpoint*) and the expected run
// time (rota.dev/expected-runtime, for forecasts); labels, other annotations, managedFields and
// the rest nothing reads.
void TrimMetadata(Json& compact) {
  auto m = compact.find("metadata");
  if (m == compact.end() || !m->is_object()) return;
  static const std::set<std::string, std::less<>> kKept = {"name",
                                                           "namespace",
                                                           "uid",
                                                           "resourceVersion",
                                                           "generation",
                                                           "creationTimestamp",
                                                           "deletionTimestamp",
                                                           "ownerReferences",
                                                           "annotations"};
  for (auto it = m->begin(); it != m->end();) it = kKept.count(it.key()) ? std::next(it) : m->erase(it);
  auto a = m->find("annotations");
  if (a == m->end()) return;
  if (a->is_object()) {
    for (auto it = a->begin(); it != a->end();)
      it = it.key().rfind("rota.dev/checkpoint", 0) == 0 || it.key() == api::kExpectedRuntimeAnnotation ? std::next(it)
                                                                                                        : a->erase(it);
  }
  if (!a->is_object() || a->empty()) m->erase(a);
}

// A pod template's scheduling fields, moved out of `tpl`.
Json SchedulingFieldsOf(Json& tpl) {
  Json pod = Json::object();
  auto ts = tpl.find("spec");
  if (ts == tpl.end() || !ts->is_object()) return Json{{"spec", std::move(pod)}};
  for (const char* k : {"overhead", "nodeSelector", "tolerations", "affinity"}) {
    if (auto f = ts->find(k); f != ts->end()) pod[k] = std::move(*f);
  }
  for (const char* list : {"initContainers", "containers"}) {
    auto cs = ts->find(list);
    if (cs == ts->end() || !cs->is_array()) continue;
    Json out = Json::array();
    for (Json& c : *cs) {
      if (!c.is_object()) continue;
      Json kept = Json::object();
      for (const char* k : {"name", "resources", "restartPolicy"}) {
        if (auto f = c.find(k); f != c.end()) kept[k] = std::move(*f);
      }
      out.push_back(std::move(kept));
    }
    pod[list] = std::move(out);
  }
  return Json{{"spec", std::move(pod)}};
}

// Each pod set's template, trimmed, is moved out of the document and interned before the rest is
// decoded (the decoder would copy it whole, only for the copy to give way to the interned one);
// the pod set decodes an empty template in its place. A finished Workload keeps none.
std::vector<api::SharedJson> InternTemplates(Json& compact, bool finished, api::JsonInterner& templates) {
  std::vector<api::SharedJson> interned;
  auto spec = compact.find("spec");
  if (spec == compact.end() || !spec->is_object()) return interned;
  auto sets = spec->find("podSets");
  if (sets == spec->end() || !sets->is_array()) return interned;
  interned.resize(sets->size());
  for (size_t i = 0; i < sets->size(); ++i) {
    Json& ps = (*sets)[i];
    if (!ps.is_object() || !ps.contains("template") || !ps["template"].is_object()) continue;
    if (!finished) interned[i] = templates.Intern(api::SharedJson(SchedulingFieldsOf(ps["template"])));
    ps["template"] = Json::object();
  }
  return interned;
}

std::shared_ptr<const api::Workload> FinishedWithoutOwner() {
  static const std::shared_ptr<const api::Workload> kFinished = [] {
    auto w = std::make_shared<api::Workload>();
    api::Condition c;
    c.type = wc::kFinished;
    c.status = api::ConditionStatus::kTrue;
    w->status.emplace().conditions.push_back(std::move(c));
    return w;
  }();
  return kFinished;
}

}  // namespace

Result<api::Workload> DecodeCompactWorkload(Json& compact, api::JsonInterner& templates) {
  TrimMetadata(compact);
  const bool finished = FinishedDocument(compact);
  std::vector<api::SharedJson> interned = InternTemplates(compact, finished, templates);
  auto w = api::DecodeObject<api::Workload>(compact);
  if (!w.ok()) return w;
  w->extra = Json();
  for (size_t i = 0; i < w->spec.pod_sets.size(); ++i) {
    auto& ps = w->spec.pod_sets[i];
    ps.template_ = i < interned.size() && interned[i].shared() ? interned[i] : templates.Intern(ps.template_);
  }
  if (finished && w->status) {
    // Nothing reads a finished Workload's admission or its other conditions from the cache.
    w->status->admission.reset();
    std::erase_if(w->status->conditions, [](const api::Condition& c) { return c.type != wc::kFinished; });
  }
  return w;
}

Result<std::shared_ptr<const api::Workload>> DecodeCachedWorkload(Json& document, api::JsonInterner& templates) {
  if (FinishedDocument(document) && !HasOwner(document)) return FinishedWithoutOwner();
  auto w = DecodeCompactWorkload(document, templates);
  if (!w.ok()) return w.status();
  return std::make_shared<const api::Workload>(std::move(w).value());
}

namespace {

// Adds an admission's podSetAssignments[].resourceUsage to `usage` (what cannot be read counts 0).
void AddUsage(const Json& admission, std::map<std::string, int64_t>& usage) {
  auto assignments = admission.find("podSetAssignments");
  if (assignments == admission.end() || !assignments->is_array()) return;
  for (const Json& psa : *assignments) {
    auto ru = psa.is_object() ? psa.find("resourceUsage") : psa.end();
    if (ru == psa.end() || !ru->is_object()) continue;
    for (const auto& [resource, q] : ru->items()) {
      Quantity quantity;
      if (api::DecodeValue(q, "", quantity).ok()) usage[resource] += quantity.milli();
    }
  }
}

}  // namespace

std::optional<FinishedRun> FinishedRunOf(const Json& document) {
  if (!FinishedDocument(document)) return std::nullopt;
  const Json& status = document["status"];
  auto admission = status.find("admission");
  if (admission == status.end() || !admission->is_object()) return std::nullopt;
  std::string reserved, finished;
  for (const Json& c : status["conditions"]) {
    if (!c.is_object() || c.value("status", Json()) != "True") continue;
    const Json type = c.value("type", Json()), at = c.value("lastTransitionTime", Json());
    if (!at.is_string()) continue;
    if (type == wc::kQuotaReserved) reserved = at.get<std::string>();
    if (type == wc::kFinished) finished = at.get<std::string>();
  }
  auto start = api::ParseTime(reserved), end = api::ParseTime(finished);
  if (!start.ok() || !end.ok() || *end < *start) return std::nullopt;
  FinishedRun run;
  run.seconds = *end - *start;
  run.finished_at = *end;
  run.cluster_queue = admission->value("clusterQueue", std::string());
  const Json meta = document.value("metadata", Json::object());
  run.uid = meta.is_object() ? meta.value("uid", std::string()) : "";
  if (meta.is_object()) run.key = meta.value("namespace", std::string()) + "/" + meta.value("name", std::string());
  AddUsage(*admission, run.usage_milli);
  const Json spec = document.value("spec", Json::object());
  if (spec.is_object() && spec.contains("priorityClassRef") && spec["priorityClassRef"].is_object())
    run.priority_class = spec["priorityClassRef"].value("name", std::string());
  if (run.cluster_queue.empty() || run.uid.empty()) return std::nullopt;
  return run;
}

bool IsFinished(const api::Workload& w) {
  const api::Condition* c = w.status ? api::FindCondition(w.status->conditions, wc::kFinished) : nullptr;
  return c && c->status == api::ConditionStatus::kTrue;
}

std::string OwnerJob(const api::Workload& wl) {
  const api::Json& refs =
      wl.metadata.extra.contains("ownerReferences") ? wl.metadata.extra["ownerReferences"] : api::Json();
  if (!refs.is_array()) return "";
  for (const auto& r : refs)
    if (r.value("kind", "") == "Job" && r.value("apiVersion", "") == "batch/v1")
      return wl.metadata.namespace_ + "/" + r.value("name", "");
  return "";
}

}  // namespace rota::controller
