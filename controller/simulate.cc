#include "simulate.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <set>
#include <sstream>

#include "budget/gates.h"
#include "rota/admission/engine.h"
#include "rota/api/budget.h"
#include "rota/api/kueue.h"
#include "rota/api/snapshot.h"
#include "yaml_json.h"

namespace rota::simulate {
namespace {

using api::Json;

// Adds one decoded object to the state; returns "" or an error message.
template <typename T>
std::string Add(const Json& doc, std::vector<T>& into) {
  Result<T> obj = api::DecodeObject<T>(doc);
  if (!obj.ok()) return obj.status().message();
  into.push_back(std::move(*obj));
  return "";
}
template <typename T>
std::string Add(const Json& doc, std::vector<std::shared_ptr<const T>>& into) {
  Result<T> obj = api::DecodeObject<T>(doc);
  if (!obj.ok()) return obj.status().message();
  into.push_back(std::make_shared<const T>(std::move(*obj)));
  return "";
}

std::string AddBudget(const Json& doc, std::vector<api::Budget>& into) {
  Result<api::Budget> b = api::DecodeObject<api::Budget>(doc);
  if (!b.ok()) return b.status().message();
  into.push_back(std::move(*b));
  return "";
}

// Each Budget's gates, as its status gives them, into state.budget_gates.
std::string GatesOf(const std::vector<api::Budget>& budgets, api::ClusterState& state) {
  std::map<std::string, std::string> cohort_of, parent_of;
  for (const auto& q : state.cluster_queues) cohort_of[q.metadata.name] = q.spec.cohort_name;
  for (const auto& c : state.cohorts) parent_of[c.metadata.name] = c.spec.parent_name;
  std::set<std::string> seen;
  for (const api::Budget& b : budgets) {
    if (!seen.insert(b.metadata.name).second)
      return "invalid input: Budget " + b.metadata.name + " is given more than once";
    Status s = controller::budget::AddGatesAsWritten(b, state.now * 1000, cohort_of, parent_of, state.budget_gates);
    if (!s.ok()) return s.message();
  }
  return "";
}

// The string field `key` of `doc` ("" when absent); false when it is there but not a string.
bool StringField(const Json& doc, const char* key, std::string& out) {
  const auto it = doc.find(key);
  if (it == doc.end() || it->is_null()) return true;
  if (!it->is_string()) return false;
  out = it->get<std::string>();
  return true;
}

// Reads one object (or the items of a List) into `state`.
std::string Load(const Json& doc, const std::string& where, api::ClusterState& state, std::vector<api::Budget>& budgets,
                 std::ostream& err) {
  if (!doc.is_object()) return "not a Kubernetes object";
  std::string api_version, kind;
  if (!StringField(doc, "apiVersion", api_version)) return "apiVersion: must be a string";
  if (!StringField(doc, "kind", kind)) return "kind: must be a string";
  if (kind == "List" || (kind.size() > 4 && kind.ends_with("List") && doc.contains("items"))) {
    const Json& items = doc.contains("items") ? doc["items"] : Json::array();
    if (!items.is_array() && !items.is_null()) return "items: must be a list";
    for (size_t i = 0; i < items.size(); ++i) {
      std::string e = Load(items[i], where + ": items[" + std::to_string(i) + "]", state, budgets, err);
      if (!e.empty()) return "items[" + std::to_string(i) + "]: " + e;
    }
    return "";
  }
  if (kind == "Namespace" && api_version == "v1") {
    api::ObjectMeta meta;
    if (doc.contains("metadata")) {
      Status s = api::DecodeValue(doc["metadata"], "metadata", meta);
      if (!s.ok()) return api::DescribeObject("Namespace", doc) + ": " + s.message();
    }
    state.namespace_labels[meta.name] = meta.labels;
    return "";
  }
  if (kind == "Budget" && api_version == api::kBudgetApiVersion) return AddBudget(doc, budgets);
  if (api_version != api::kApiVersion) {
    err << where << ": skipping " << api::DescribeObject(kind.empty() ? "object" : kind, doc)
        << ": rota simulate reads " << api::kApiVersion << " objects, Namespaces and rota.dev/v1alpha1 Budgets\n";
    return "";
  }
  if (kind == "ResourceFlavor") return Add(doc, state.flavors);
  if (kind == "Cohort") return Add(doc, state.cohorts);
  if (kind == "ClusterQueue") return Add(doc, state.cluster_queues);
  if (kind == "LocalQueue") return Add(doc, state.local_queues);
  if (kind == "WorkloadPriorityClass") return Add(doc, state.priority_classes);
  if (kind == "Workload") return Add(doc, state.workloads);
  err << where << ": skipping " << api::DescribeObject(kind.empty() ? "object" : kind, doc)
      << ": rota does not simulate this kind\n";
  return "";
}

// The first object given twice (the same kind and name, or namespace and name), or "".
std::string Duplicate(const api::ClusterState& state) {
  std::set<std::string> seen;
  auto first_twice = [&](const char* kind, const api::ObjectMeta& m) {
    const std::string name = std::string(kind) + " " + (m.namespace_.empty() ? "" : m.namespace_ + "/") + m.name;
    return seen.insert(name).second ? std::string() : name;
  };
  std::string dup;
  for (const auto& o : state.flavors) dup = dup.empty() ? first_twice("ResourceFlavor", o.metadata) : dup;
  for (const auto& o : state.cohorts) dup = dup.empty() ? first_twice("Cohort", o.metadata) : dup;
  for (const auto& o : state.cluster_queues) dup = dup.empty() ? first_twice("ClusterQueue", o.metadata) : dup;
  for (const auto& o : state.local_queues) dup = dup.empty() ? first_twice("LocalQueue", o.metadata) : dup;
  for (const auto& o : state.priority_classes)
    dup = dup.empty() ? first_twice("WorkloadPriorityClass", o.metadata) : dup;
  for (const auto& o : state.workloads) dup = dup.empty() ? first_twice("Workload", o->metadata) : dup;
  return dup;
}

Json ToJson(const admission::AdmissionSpec& a, const std::string& key) {
  Json assignments = Json::array();
  for (const auto& ps : a.pod_sets) {
    assignments.push_back({{"name", ps.name}, {"count", ps.count}, {"flavors", ps.flavors}});
  }
  return {{"workload", key}, {"clusterQueue", a.cluster_queue}, {"podSetAssignments", assignments}};
}

}  // namespace

std::string LoadFiles(const std::vector<std::string>& files, api::ClusterState& state, std::ostream& err) {
  std::vector<api::Budget> budgets;
  for (const std::string& file : files) {
    std::error_code ec;
    if (std::filesystem::is_directory(file, ec)) return file + ": is a directory (give the YAML files in it)";
    std::ifstream in(file);
    if (!in) return file + ": cannot be read";
    std::stringstream text;
    text << in.rdbuf();
    auto docs = yaml::ParseDocuments(text.str());
    if (!docs.ok()) return file + ": " + docs.status().message();
    for (size_t i = 0; i < docs->size(); ++i) {
      const Json& doc = (*docs)[i];
      if (doc.is_null()) continue;
      const std::string where = file + ": document " + std::to_string(i + 1);
      std::string problem = Load(doc, where, state, budgets, err);
      if (!problem.empty()) return where + ": " + problem;
    }
  }
  if (std::string dup = Duplicate(state); !dup.empty()) return "invalid input: " + dup + " is given more than once";
  return GatesOf(budgets, state);
}

int Run(const std::vector<std::string>& files, const Options& options, std::ostream& out, std::ostream& err) {
  api::ClusterState state;
  state.fair_sharing = options.fair_sharing;
  state.now = options.now;
  if (std::string problem = LoadFiles(files, state, err); !problem.empty()) {
    err << problem << "\n";
    return 2;
  }
  auto snapshot = api::BuildSnapshot(state);
  if (!snapshot.ok()) {
    err << "invalid input: " << snapshot.status().message() << "\n";
    return 2;
  }

  Json preempted = Json::array();
  admission::Decisions last;
  int pass = 0;
  for (; pass < options.max_passes; ++pass) {
    last = admission::Schedule(*snapshot);
    if (last.admitted.empty() && last.preempted.empty()) break;
    std::map<std::string, admission::WorkloadSpec*> by_key;
    for (auto& w : snapshot->workloads) by_key[w.key] = &w;
    for (const auto& p : last.preempted) {
      // A preempted workload gives its quota back at once and is pending again.
      admission::WorkloadSpec* w = by_key.at(p.workload);
      w->admission.reset();
      w->evicted = false;
      preempted.push_back(
          {{"workload", p.workload}, {"preemptor", p.preemptor}, {"reason", admission::ToString(p.reason)}});
    }
    for (const auto& a : last.admitted) {
      admission::WorkloadSpec* w = by_key.at(a.workload);
      // (What it draws from a budget is gone for the passes after.)
      for (const auto& c : w->budget_charges) snapshot->budget_pools[c.pool].remaining -= c.amount;
      w->budget_charges.clear();
      w->admission = admission::AdmissionSpec{a.cluster_queue, a.pod_sets};
      // (Later passes were admitted more recently: Kueue's order among them, when no time.)
      w->admission_time = options.now + pass + 1;
    }
  }
  if (pass == options.max_passes) {
    err << "warning: decisions had not settled after " << options.max_passes
        << " passes; showing the state after the last one\n";
    last = admission::Schedule(*snapshot);
  }

  std::map<std::string, const admission::WorkloadSpec*> admitted;
  for (const auto& w : snapshot->workloads)
    if (w.admission) admitted[w.key] = &w;
  Json result = {{"admitted", Json::array()}, {"preempted", preempted}, {"pending", Json::array()}};
  for (const auto& [key, w] : admitted) result["admitted"].push_back(ToJson(*w->admission, key));
  for (const auto& p : last.pending) {
    result["pending"].push_back({{"workload", p.workload}, {"reason", p.reason}, {"message", p.message}});
  }
  out << result.dump(2) << "\n";
  return 0;
}

}  // namespace rota::simulate
