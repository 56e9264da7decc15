#include "samples.h"

namespace rota::kubectl::samples {
namespace {

bool InNamespace(const Json& o, const std::string& ns) {
  return ns.empty() || o["metadata"].value("namespace", "") == ns;
}

template <typename T>
std::vector<T> DecodeAll(const std::vector<Json>& items, const std::string& ns) {
  std::vector<T> out;
  for (const Json& j : items)
    if (InNamespace(j, ns)) out.push_back(Decode<T>(j));
  return out;
}

}  // namespace

Json ClusterQueueJson(const std::string& name, const std::string& cohort, int gpus, Json preemption) {
  Json cq = {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
             {"kind", "ClusterQueue"},
             {"metadata", {{"name", name}}},
             {"spec",
              {{"namespaceSelector", Json::object()},
               {"preemption", preemption},
               {"resourceGroups",
                {{{"coveredResources", {"cpu"}},
                  {"flavors", {{{"name", "cpu"}, {"resources", {{{"name", "cpu"}, {"nominalQuota", "64"}}}}}}}},
                 {{"coveredResources", {"nvidia.com/gpu"}},
                  {"flavors",
                   {{{"name", "a100"},
                     {"resources", {{{"name", "nvidia.com/gpu"}, {"nominalQuota", std::to_string(gpus)}}}}}}}}}}}}};
  if (!cohort.empty()) cq["spec"]["cohortName"] = cohort;
  return cq;
}

void SetQueueStatus(Json& cq, int used_gpus, int borrowed_gpus, int pending, int admitted) {
  Json usage = {{{"name", "a100"},
                 {"resources",
                  {{{"name", "nvidia.com/gpu"},
                    {"total", std::to_string(used_gpus)},
                    {"borrowed", std::to_string(borrowed_gpus)}}}}}};
  cq["status"] = {{"pendingWorkloads", pending},
                  {"admittedWorkloads", admitted},
                  {"reservingWorkloads", admitted},
                  {"flavorsUsage", usage},
                  {"flavorsReservation", usage}};
}

Json WorkloadJson(const std::string& ns, const std::string& job, int gpus, int priority, const std::string& queue,
                  const std::string& created) {
  Json container = {{"name", "main"},
                    {"resources", {{"requests", {{"cpu", "1"}, {"nvidia.com/gpu", std::to_string(gpus)}}}}}};
  return {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
          {"kind", "Workload"},
          {"metadata",
           {{"name", "job-" + job + "-00000"},
            {"namespace", ns},
            {"creationTimestamp", created},
            {"labels", {{"kueue.x-k8s.io/job-uid", "uid-" + job}}},
            {"ownerReferences", {{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"name", job}, {"controller", true}}}}}},
          {"spec",
           {{"queueName", queue},
            {"priority", priority},
            {"podSets", {{{"name", "main"}, {"count", 1}, {"template", {{"spec", {{"containers", {container}}}}}}}}}}}};
}

void Admit(Json& w, const std::string& cluster_queue, const std::string& at) {
  const Json requests = w["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"]["requests"];
  w["status"]["admission"] = {{"clusterQueue", cluster_queue},
                              {"podSetAssignments",
                               {{{"name", "main"},
                                 {"count", 1},
                                 {"flavors", {{"cpu", "cpu"}, {"nvidia.com/gpu", "a100"}}},
                                 {"resourceUsage", requests}}}}};
  SetCondition(w, "QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue " + cluster_queue, at);
  SetCondition(w, "Admitted", "True", "Admitted", "The workload is admitted", at);
}

void SetCondition(Json& w, const std::string& type, const std::string& status, const std::string& reason,
                  const std::string& message, const std::string& at) {
  Json& conditions = w["status"]["conditions"];
  if (!conditions.is_array()) conditions = Json::array();
  Json c = {{"type", type}, {"status", status}, {"reason", reason}, {"message", message}, {"lastTransitionTime", at}};
  for (Json& existing : conditions)
    if (existing["type"] == type) {
      existing = c;
      return;
    }
  conditions.push_back(c);
}

Json LocalQueueJson(const std::string& ns, const std::string& name, const std::string& cluster_queue) {
  return {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
          {"kind", "LocalQueue"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec", {{"clusterQueue", cluster_queue}}}};
}

Json EventJson(const std::string& ns, const std::string& workload, const std::string& reason,
               const std::string& message, const std::string& first, const std::string& last) {
  return {{"metadata", {{"name", workload + "." + reason}, {"namespace", ns}}},
          {"involvedObject", {{"kind", "Workload"}, {"namespace", ns}, {"name", workload}}},
          {"reason", reason},
          {"message", message},
          {"firstTimestamp", first},
          {"lastTimestamp", last},
          {"count", first == last ? 1 : 2}};
}

Fetched<std::vector<api::ClusterQueue>> FakeCluster::ClusterQueues() {
  return DecodeAll<api::ClusterQueue>(cluster_queues, "");
}
Fetched<std::vector<api::LocalQueue>> FakeCluster::LocalQueues(const std::string& ns) {
  return DecodeAll<api::LocalQueue>(local_queues, ns);
}
Fetched<std::vector<api::Workload>> FakeCluster::Workloads(const std::string& ns) {
  return DecodeAll<api::Workload>(workloads, ns);
}
Fetched<std::vector<api::WorkloadPriorityClass>> FakeCluster::PriorityClasses() {
  return DecodeAll<api::WorkloadPriorityClass>(priority_classes, "");
}

Fetched<api::Workload> FakeCluster::GetWorkload(const std::string& ns, const std::string& name) {
  for (const Json& w : workloads)
    if (InNamespace(w, ns) && w["metadata"]["name"] == name) return Decode<api::Workload>(w);
  return Failure{"Error from server (NotFound): workloads.kueue.x-k8s.io \"" + name + "\" not found", true};
}

Fetched<JobRef> FakeCluster::GetJob(const std::string& ns, const std::string& name) {
  auto it = job_uids.find(ns + "/" + name);
  if (it == job_uids.end()) return Failure{"Error from server (NotFound): jobs.batch \"" + name + "\" not found", true};
  return JobRef{ns, name, it->second};
}

Fetched<std::vector<api::Workload>> FakeCluster::WorkloadsOfJob(const std::string& ns, const std::string& job_uid) {
  std::vector<api::Workload> out;
  for (const api::Workload& w : DecodeAll<api::Workload>(workloads, ns))
    if (w.metadata.labels.count("kueue.x-k8s.io/job-uid") && w.metadata.labels.at("kueue.x-k8s.io/job-uid") == job_uid)
      out.push_back(w);
  return out;
}

Fetched<std::vector<Json>> FakeCluster::WorkloadEvents(const std::string& ns) {
  std::vector<Json> out;
  for (const Json& e : events)
    if (InNamespace(e, ns)) out.push_back(e);
  return out;
}

Fetched<Json> FakeCluster::PendingWorkloads(const std::string&, const std::string&) {
  if (!pending) return Failure{"404 page not found", true};
  return *pending;
}

}  // namespace rota::kubectl::samples
