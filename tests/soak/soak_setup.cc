#include "soak/soak_setup.h"

#include <iostream>

namespace rota::soak {

namespace {

constexpr const char* kGpu = "nvidia.com/gpu";

Json Meta(const std::string& name, const std::string& ns = "") {
  Json m = {{"name", name}};
  if (!ns.empty()) m["namespace"] = ns;
  return m;
}

Json ClusterQueue(const std::string& name, const std::string& flavor, const std::string& cohort, const QueueLimit& q) {
  Json resource = {{"name", kGpu}, {"nominalQuota", q.nominal}};
  if (q.borrowing_limit) resource["borrowingLimit"] = *q.borrowing_limit;
  if (q.lending_limit) resource["lendingLimit"] = *q.lending_limit;
  Json spec = {{"namespaceSelector", Json::object()},
               {"preemption", {{"withinClusterQueue", "LowerPriority"}, {"reclaimWithinCohort", "Any"}}},
               {"resourceGroups",
                {{{"coveredResources", {kGpu}}, {"flavors", {{{"name", flavor}, {"resources", {resource}}}}}}}}};
  if (!cohort.empty()) spec["cohortName"] = cohort;
  return {{"apiVersion", "kueue.x-k8s.io/v1beta2"}, {"kind", "ClusterQueue"}, {"metadata", Meta(name)}, {"spec", spec}};
}

}  // namespace

Setup MakeSetup(const std::string& run) {
  Setup s;
  s.run = run;
  s.ns = "rota-soak-" + run;
  s.flavor = "soak-a100-" + run;
  s.cohort = "soak-" + run;
  s.low = "soak-low-" + run;
  s.high = "soak-high-" + run;
  s.teams = {"team-a", "team-b", "team-c"};
  s.probe = "probe";
  const std::string fr = s.flavor + "/" + kGpu;
  // 26 GPUs of quota on the local cluster's 32 A100s: pods always find a node.
  s.limits["team-a-" + run][fr] = {s.cohort, 8, 8, std::nullopt};
  s.limits["team-b-" + run][fr] = {s.cohort, 8, 4, 4};
  s.limits["team-c-" + run][fr] = {s.cohort, 8, std::nullopt, std::nullopt};
  s.limits["probe-" + run][fr] = {"", 2, std::nullopt, std::nullopt};

  s.objects.push_back({{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                       {"kind", "ResourceFlavor"},
                       {"metadata", Meta(s.flavor)},
                       {"spec", {{"nodeLabels", {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}}}}}});
  for (const auto& [name, value] : {std::pair{s.low, 100}, std::pair{s.high, 1000}})
    s.objects.push_back({{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                         {"kind", "WorkloadPriorityClass"},
                         {"metadata", Meta(name)},
                         {"value", value}});
  for (const auto& [cq, resources] : s.limits) {
    const QueueLimit& q = resources.at(fr);
    s.objects.push_back(ClusterQueue(cq, s.flavor, q.cohort, q));
  }
  for (const std::string& lq : {s.teams[0], s.teams[1], s.teams[2], s.probe})
    s.objects.push_back({{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                         {"kind", "LocalQueue"},
                         {"metadata", Meta(lq, s.ns)},
                         {"spec", {{"clusterQueue", lq + "-" + run}}}});
  return s;
}

namespace {
const apiclient::Resource& ResourceOf(const Json& o) {
  namespace r = apiclient::resources;
  const std::string kind = o.value("kind", "");
  if (kind == "ResourceFlavor") return r::kResourceFlavors;
  if (kind == "WorkloadPriorityClass") return r::kWorkloadPriorityClasses;
  if (kind == "ClusterQueue") return r::kClusterQueues;
  return r::kLocalQueues;
}
}  // namespace

bool Apply(apiclient::Client& client, const Setup& setup) {
  Json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", Meta(setup.ns)}};
  auto made = client.Create(apiclient::resources::kNamespaces, "", ns);
  if (!made.ok() && !made.error().IsAlreadyExists()) {
    std::cerr << "soak: namespace " << setup.ns << ": " << made.error().ToString() << "\n";
    return false;
  }
  apiclient::PatchOptions apply;
  apply.field_manager = "rota-soak";
  apply.force = true;
  for (const Json& o : setup.objects) {
    const std::string ns = o["metadata"].value("namespace", "");
    auto r = client.Patch(ResourceOf(o), ns, o["metadata"]["name"], apiclient::PatchType::kApply, o, apply);
    if (!r.ok()) {
      std::cerr << "soak: " << o["kind"].get<std::string>() << " " << o["metadata"]["name"].get<std::string>() << ": "
                << r.error().ToString() << "\n";
      return false;
    }
  }
  return true;
}

void Delete(apiclient::Client& client, const Setup& setup) {
  apiclient::DeleteOptions background;
  background.propagation_policy = "Background";
  for (const Json& o : setup.objects)
    if (!o["metadata"].contains("namespace")) (void)client.Delete(ResourceOf(o), "", o["metadata"]["name"], background);
  (void)client.Delete(apiclient::resources::kNamespaces, "", setup.ns, background);
}

}  // namespace rota::soak
