#include <set>

#include "rota/kubectl/why.h"
#include "rota/kubectl/workload_facts.h"

namespace rota::kubectl {
namespace {

const std::set<std::string> kJobKinds = {"job", "jobs", "job.batch", "jobs.batch"};
const std::set<std::string> kWorkloadKinds = {"workload", "workloads", "wl", "workload.kueue.x-k8s.io",
                                              "workloads.kueue.x-k8s.io"};

// The Workload of Job `job`: the one not finished, else the newest.
Fetched<Resolved> OfJob(ClusterReader& cluster, const JobRef& job) {
  auto workloads = cluster.WorkloadsOfJob(job.ns, job.uid);
  if (!workloads.ok()) return workloads.error();
  if (workloads->empty()) {
    return Failure{"error: Job " + job.ns + "/" + job.name +
                   " has no Workload: rota makes one for a Job labelled kueue.x-k8s.io/queue-name (is rota running?)"};
  }
  const api::Workload* best = &workloads->front();
  for (const api::Workload& w : *workloads) {
    if (IsFinished(*best) != IsFinished(w) ? IsFinished(*best)
                                           : w.metadata.creation_timestamp > best->metadata.creation_timestamp) {
      best = &w;
    }
  }
  return Resolved{*best, job.name};
}

}  // namespace

Result<Target> ParseTarget(const std::string& text) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos) {
    if (text.empty()) return InvalidArgument("the name is empty");
    return Target{Target::Kind::kAny, text};
  }
  const std::string kind = text.substr(0, slash), name = text.substr(slash + 1);
  if (name.empty() || name.find('/') != std::string::npos) return InvalidArgument("\"" + text + "\" is not KIND/NAME");
  if (kJobKinds.count(kind)) return Target{Target::Kind::kJob, name};
  if (kWorkloadKinds.count(kind)) return Target{Target::Kind::kWorkload, name};
  return InvalidArgument("unknown kind \"" + kind + "\" in \"" + text + "\": use job/NAME or workload/NAME");
}

Fetched<Resolved> ResolveTarget(ClusterReader& cluster, const std::string& ns, const Target& target) {
  if (target.kind != Target::Kind::kWorkload) {
    auto job = cluster.GetJob(ns, target.name);
    if (job.ok()) return OfJob(cluster, *job);
    if (target.kind == Target::Kind::kJob || !job.error().not_found) return job.error();
    auto workload = cluster.GetWorkload(ns, target.name);
    if (workload.ok()) {
      const std::string owner = JobOf(*workload);
      return Resolved{std::move(workload).value(), owner};
    }
    if (!workload.error().not_found) return workload.error();
    return Failure{job.error().message + ", and no workloads.kueue.x-k8s.io \"" + target.name + "\" in namespace \"" +
                       ns + "\" either",
                   true};
  }
  auto workload = cluster.GetWorkload(ns, target.name);
  if (!workload.ok()) return workload.error();
  const std::string owner = JobOf(*workload);
  return Resolved{std::move(workload).value(), owner};
}

}  // namespace rota::kubectl
