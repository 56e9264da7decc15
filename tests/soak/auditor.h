#pragma once

// The soak's invariant auditor. It knows the quotas the soak applied (never read back from rota)
// and judges what the apiserver shows, so it checks rota rather than rota's idea of itself:
//   - quota: per ClusterQueue and flavor/resource, admitted usage stays within nominal quota plus
//     borrowingLimit, and a cohort's queues together borrow no more than its members lend;
//   - a Job has at most one admitted Workload at a time;
//   - a Job's pods run only while its Workload is admitted, and a Job is suspended only after its
//     Workload was evicted (not while it holds quota, as a stale leader would);
//   - at the end, every Job submitted finished exactly once, with one Workload;
//   - after each fault, admissions resume within a limit.
// Thread-safe: the watch thread and the soak's loops call it at once.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace rota::soak {

using Json = nlohmann::json;

// What one ClusterQueue may hold of one flavor's resource.
struct QueueLimit {
  std::string cohort;  // "" for none
  int64_t nominal = 0;
  std::optional<int64_t> borrowing_limit, lending_limit;
};
// ClusterQueue name -> "flavor/resource" -> limit.
using Limits = std::map<std::string, std::map<std::string, QueueLimit>>;

class Auditor {
 public:
  explicit Auditor(Limits limits) : limits_(std::move(limits)) {}
  // Called with each violation as it is found (the soak logs it with the time, to match the
  // replicas' logs).
  void OnViolation(std::function<void(const std::string&)> log) { log_ = std::move(log); }

  // Each state of a Workload as its watch shows it, in order, seen at `now`; `deleted` when it is
  // gone.
  void OnWorkload(const Json& workload, bool deleted,
                  std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());
  // After a list (a watch that could not resume): every Workload as it is now. The changes
  // since the last state seen are taken at once, and the result checked once (a list's items in
  // any order would pass through states that never were).
  void ReplaceWorkloads(const std::vector<Json>& workloads,
                        std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());
  // After a list of Jobs: their states, without judging transitions not seen.
  void ReplaceJobs(const std::vector<Json>& jobs);
  // Each state of a Job as its watch shows it, seen at `now`. A Job that goes from running to
  // suspended is a suspect, judged by CheckSuspended once `grace` has passed (the watches of Jobs
  // and Workloads arrive apart).
  void OnJob(const Json& job, std::chrono::steady_clock::time_point now);
  // Suspects older than `grace`: a violation if the Job's Workload holds quota, is not evicted,
  // and gave none back from `grace` before the suspension until now (the eviction comes first,
  // but its watch event may come after the Job's).
  void CheckSuspended(std::chrono::steady_clock::time_point now, std::chrono::milliseconds grace);
  // Pods listed before and after `workloads` were: a pod running in both lists ran when the
  // Workloads were listed, so its Job's Workload must have been admitted in that list.
  void CheckPods(const std::vector<Json>& pods_before, const std::vector<Json>& workloads,
                 const std::vector<Json>& pods_after);
  // At the end, from lists of the soak's Jobs and Workloads.
  void CheckFinished(const std::vector<std::string>& submitted, const std::vector<Json>& jobs,
                     const std::vector<Json>& workloads);
  // How long admissions took to resume after a fault of `kind`; a violation above `limit`.
  void Recovered(const std::string& kind, std::chrono::milliseconds took, std::chrono::milliseconds limit);
  void Violation(const std::string& what);

  std::vector<std::string> violations() const;
  int64_t violation_count() const;
  int64_t admissions() const;
  int64_t evictions() const;
  // kind -> worst recovery seen.
  std::map<std::string, std::chrono::milliseconds> worst_recovery() const;

 private:
  struct Held {
    std::string cluster_queue, job_uid;
    std::map<std::string, int64_t> usage;  // "flavor/resource" -> amount (whole units)
    bool evicted = false;                  // Evicted=True: its Job is being stopped
  };
  // What `workload` holds, or nullopt when it holds no quota (a violation is recorded when what
  // it holds cannot be read).
  std::optional<Held> HeldBy(const Json& workload, const std::string& key);
  void Release(const std::string& key, bool evicted, std::chrono::steady_clock::time_point now);
  void Check(const std::string& cluster_queue);
  void CheckCohort(const std::string& cohort, const std::string& key);
  void ViolationLocked(const std::string& what);

  struct Suspect {
    std::string job, uid;
    std::chrono::steady_clock::time_point at;
  };
  // Whether the Job's Workload holds quota without being evicted.
  bool JobHoldsQuotaUnevicted(const std::string& uid) const;

  const Limits limits_;
  std::function<void(const std::string&)> log_;
  std::map<std::string, bool> running_;                                    // Job uid -> not suspended, as last seen
  std::map<std::string, std::chrono::steady_clock::time_point> released_;  // Job uid -> its Workload's last release
  std::vector<Suspect> suspects_;
  mutable std::mutex mu_;
  std::map<std::string, Held> admitted_;  // Workload namespace/name -> what it holds
  std::vector<std::string> violations_;   // the first ones, for the report
  int64_t violation_count_ = 0, admissions_ = 0, evictions_ = 0;
  std::map<std::string, std::chrono::milliseconds> worst_;
};

// The Job uid that owns a Workload or pod (its controller owner reference of kind Job), or "".
std::string OwnerJobUid(const Json& object);
// Whether a Workload holds quota: an admission, QuotaReserved=True, and not Finished.
bool HoldsQuota(const Json& workload);

}  // namespace rota::soak
