#include "soak/auditor.h"

#include <algorithm>
#include <charconv>

namespace rota::soak {

namespace {

constexpr size_t kKeptViolations = 50;

std::string Key(const Json& o) {
  const Json& m = o.value("metadata", Json::object());
  return m.value("namespace", "") + "/" + m.value("name", "");
}

const Json* Condition(const Json& o, const std::string& type) {
  const Json* status = o.contains("status") ? &o["status"] : nullptr;
  if (!status || !status->contains("conditions") || !(*status)["conditions"].is_array()) return nullptr;
  for (const Json& c : (*status)["conditions"])
    if (c.value("type", "") == type) return &c;
  return nullptr;
}

bool ConditionTrue(const Json& o, const std::string& type) {
  const Json* c = Condition(o, type);
  return c && c->value("status", "") == "True";
}

// A whole-unit amount ("2"); nullopt for anything else (GPU requests in the soak are whole).
std::optional<int64_t> WholeAmount(const Json& q) {
  if (q.is_number_integer()) return q.get<int64_t>();
  if (!q.is_string()) return std::nullopt;
  const std::string s = q.get<std::string>();
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

bool Running(const Json& pod) {
  return pod["status"].value("phase", "") == "Running" && !pod["metadata"].contains("deletionTimestamp");
}

}  // namespace

std::string OwnerJobUid(const Json& object) {
  const Json& m = object.value("metadata", Json::object());
  if (!m.contains("ownerReferences") || !m["ownerReferences"].is_array()) return "";
  for (const Json& r : m["ownerReferences"])
    if (r.value("kind", "") == "Job" && r.value("controller", false)) return r.value("uid", "");
  return "";
}

bool HoldsQuota(const Json& workload) {
  return workload.contains("status") && workload["status"].contains("admission") &&
         ConditionTrue(workload, "QuotaReserved") && !ConditionTrue(workload, "Finished");
}

std::optional<Auditor::Held> Auditor::HeldBy(const Json& workload, const std::string& key) {
  if (!HoldsQuota(workload)) return std::nullopt;
  Held held{workload["status"]["admission"].value("clusterQueue", ""),
            OwnerJobUid(workload),
            {},
            ConditionTrue(workload, "Evicted")};
  for (const Json& a : workload["status"]["admission"].value("podSetAssignments", Json::array())) {
    const Json flavors = a.value("flavors", Json::object());
    const Json usage = a.value("resourceUsage", Json::object());
    for (const auto& item : usage.items()) {
      const std::string& resource = item.key();
      const std::optional<int64_t> v = WholeAmount(item.value());
      if (!v) {
        ViolationLocked("Workload " + key + " holds an unreadable amount of " + resource);
        return std::nullopt;
      }
      held.usage[flavors.value(resource, "?") + "/" + resource] += *v;
    }
  }
  return held;
}

void Auditor::Release(const std::string& key, bool evicted, std::chrono::steady_clock::time_point now) {
  auto was = admitted_.find(key);
  if (was == admitted_.end()) return;
  if (evicted) ++evictions_;
  released_[was->second.job_uid] = now;  // (evicted, finished or deleted)
  admitted_.erase(was);
}

void Auditor::OnWorkload(const Json& workload, bool deleted, std::chrono::steady_clock::time_point now) {
  std::lock_guard l(mu_);
  const std::string key = Key(workload);
  std::optional<Held> held = deleted ? std::nullopt : HeldBy(workload, key);
  if (!held) return Release(key, !deleted && ConditionTrue(workload, "Evicted"), now);
  if (!admitted_.count(key)) {
    ++admissions_;
    for (const auto& [other, h] : admitted_)
      if (!held->job_uid.empty() && h.job_uid == held->job_uid)
        ViolationLocked("Job " + held->job_uid + " has two Workloads admitted at once: " + other + " and " + key);
  }
  const std::string cq = held->cluster_queue;
  admitted_[key] = std::move(*held);
  Check(cq);
}

void Auditor::ReplaceWorkloads(const std::vector<Json>& workloads, std::chrono::steady_clock::time_point now) {
  std::lock_guard l(mu_);
  std::map<std::string, Held> fresh;
  std::map<std::string, bool> evicted;
  for (const Json& w : workloads) {
    const std::string key = Key(w);
    if (auto held = HeldBy(w, key)) fresh[key] = std::move(*held);
    evicted[key] = ConditionTrue(w, "Evicted");
  }
  std::vector<std::string> gone;
  for (const auto& [key, h] : admitted_)
    if (!fresh.count(key)) gone.push_back(key);
  for (const std::string& key : gone) Release(key, evicted[key], now);
  for (const auto& [key, h] : fresh) admissions_ += admitted_.count(key) == 0;
  admitted_ = std::move(fresh);
  std::set<std::string> queues;
  for (const auto& [key, h] : admitted_) queues.insert(h.cluster_queue);
  for (const std::string& cq : queues) Check(cq);
}

void Auditor::ReplaceJobs(const std::vector<Json>& jobs) {
  std::lock_guard l(mu_);
  for (const Json& job : jobs) running_[job["metadata"].value("uid", "")] = !job["spec"].value("suspend", false);
}

void Auditor::Check(const std::string& cq) {
  auto queue = limits_.find(cq);
  if (queue == limits_.end()) return ViolationLocked("a Workload was admitted to unknown ClusterQueue " + cq);
  std::map<std::string, int64_t> usage;
  for (const auto& [k, h] : admitted_)
    if (h.cluster_queue == cq)
      for (const auto& [fr, v] : h.usage) usage[fr] += v;
  for (const auto& [fr, used] : usage) {
    auto limit = queue->second.find(fr);
    if (limit == queue->second.end()) {
      ViolationLocked("ClusterQueue " + cq + " admitted " + std::to_string(used) + " of " + fr +
                      ", which it has no quota for");
      continue;
    }
    const QueueLimit& q = limit->second;
    if (q.borrowing_limit && used > q.nominal + *q.borrowing_limit)
      ViolationLocked("ClusterQueue " + cq + " holds " + std::to_string(used) + " of " + fr + ", above nominal " +
                      std::to_string(q.nominal) + " + borrowingLimit " + std::to_string(*q.borrowing_limit));
    if (q.cohort.empty() && used > q.nominal)
      ViolationLocked("ClusterQueue " + cq + " holds " + std::to_string(used) + " of " + fr + ", above its nominal " +
                      std::to_string(q.nominal) + " and in no cohort");
    if (!q.cohort.empty()) CheckCohort(q.cohort, fr);
  }
}

// Each queue's usage beyond what it keeps for itself (nominal - lendingLimit) is borrowed from the
// cohort's pool, which holds what its members lend (lendingLimit, or all of nominal).
void Auditor::CheckCohort(const std::string& cohort, const std::string& fr) {
  std::map<std::string, int64_t> usage;
  for (const auto& [k, h] : admitted_) {
    auto u = h.usage.find(fr);
    if (u != h.usage.end()) usage[h.cluster_queue] += u->second;
  }
  int64_t pool = 0, drawn = 0;
  for (const auto& [cq, resources] : limits_) {
    auto limit = resources.find(fr);
    if (limit == resources.end() || limit->second.cohort != cohort) continue;
    const QueueLimit& q = limit->second;
    const int64_t lent = q.lending_limit ? std::min(*q.lending_limit, q.nominal) : q.nominal;
    pool += lent;
    drawn += std::max<int64_t>(0, usage[cq] - (q.nominal - lent));
  }
  if (drawn <= pool) return;
  std::string holders;
  for (const auto& [k, h] : admitted_) {
    auto u = h.usage.find(fr);
    if (u != h.usage.end()) holders += " " + k + "@" + h.cluster_queue + "=" + std::to_string(u->second);
  }
  ViolationLocked("cohort " + cohort + " has " + std::to_string(drawn) + " of " + fr +
                  " in use from its shared pool of " + std::to_string(pool) + "; held by" + holders);
}

void Auditor::OnJob(const Json& job, std::chrono::steady_clock::time_point now) {
  std::lock_guard l(mu_);
  const std::string uid = job["metadata"].value("uid", "");
  const bool running = !job["spec"].value("suspend", false);
  auto was = running_.find(uid);
  if (was != running_.end() && was->second && !running) suspects_.push_back({Key(job), uid, now});
  running_[uid] = running;
}

bool Auditor::JobHoldsQuotaUnevicted(const std::string& uid) const {
  for (const auto& [k, h] : admitted_)
    if (h.job_uid == uid && !h.evicted) return true;
  return false;
}

void Auditor::CheckSuspended(std::chrono::steady_clock::time_point now, std::chrono::milliseconds grace) {
  std::lock_guard l(mu_);
  std::erase_if(suspects_, [&](const Suspect& s) {
    if (now - s.at < grace) return false;
    auto released = released_.find(s.uid);
    const bool gave_back = released != released_.end() && released->second >= s.at - grace;
    if (!gave_back && JobHoldsQuotaUnevicted(s.uid))
      ViolationLocked("Job " + s.job + " was suspended while its Workload held quota and was not evicted");
    return true;
  });
}

void Auditor::CheckPods(const std::vector<Json>& pods_before, const std::vector<Json>& workloads,
                        const std::vector<Json>& pods_after) {
  std::set<std::string> running_before;
  for (const Json& p : pods_before)
    if (Running(p)) running_before.insert(p["metadata"].value("uid", ""));
  // (A Job with no Workload in the list is being deleted: its pods go with it.)
  std::set<std::string> admitted_jobs, queued_jobs;
  for (const Json& w : workloads) {
    queued_jobs.insert(OwnerJobUid(w));
    if (HoldsQuota(w)) admitted_jobs.insert(OwnerJobUid(w));
  }
  for (const Json& p : pods_after) {
    if (!Running(p) || !running_before.count(p["metadata"].value("uid", ""))) continue;
    const std::string job = OwnerJobUid(p);
    if (job.empty() || admitted_jobs.count(job) || !queued_jobs.count(job)) continue;
    Violation("pod " + Key(p) + " ran while its Job's Workload was not admitted");
  }
}

void Auditor::CheckFinished(const std::vector<std::string>& submitted, const std::vector<Json>& jobs,
                            const std::vector<Json>& workloads) {
  std::map<std::string, const Json*> by_name;
  for (const Json& j : jobs) by_name[j["metadata"].value("name", "")] = &j;
  std::map<std::string, std::vector<const Json*>> workloads_of;
  for (const Json& w : workloads) workloads_of[OwnerJobUid(w)].push_back(&w);
  for (const std::string& name : submitted) {
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      Violation("Job " + name + " was lost");
      continue;
    }
    const Json& job = *it->second;
    const int64_t completions = job["spec"].value("completions", 1);
    const int64_t succeeded = job.value("status", Json::object()).value("succeeded", 0);
    if (!ConditionTrue(job, "Complete") || ConditionTrue(job, "Failed") || succeeded != completions)
      Violation("Job " + name + " did not finish exactly once: " + std::to_string(succeeded) + " of " +
                std::to_string(completions) +
                " pods succeeded, Complete=" + (ConditionTrue(job, "Complete") ? "True" : "False"));
    const auto& own = workloads_of[job["metadata"].value("uid", "")];
    if (own.size() != 1)
      Violation("Job " + name + " has " + std::to_string(own.size()) + " Workloads, not one");
    else if (!ConditionTrue(*own[0], "Finished"))
      Violation("Job " + name + " finished but its Workload " + Key(*own[0]) + " is not Finished");
  }
}

void Auditor::Recovered(const std::string& kind, std::chrono::milliseconds took, std::chrono::milliseconds limit) {
  std::lock_guard l(mu_);
  worst_[kind] = std::max(worst_[kind], took);
  if (took > limit)
    ViolationLocked("admissions resumed " + std::to_string(took.count()) + " ms after " + kind +
                    ", above the limit of " + std::to_string(limit.count()) + " ms");
}

void Auditor::Violation(const std::string& what) {
  std::lock_guard l(mu_);
  ViolationLocked(what);
}

void Auditor::ViolationLocked(const std::string& what) {
  ++violation_count_;
  if (violations_.size() < kKeptViolations) violations_.push_back(what);
  if (log_) log_(what);
}

std::vector<std::string> Auditor::violations() const {
  std::lock_guard l(mu_);
  return violations_;
}
int64_t Auditor::violation_count() const {
  std::lock_guard l(mu_);
  return violation_count_;
}
int64_t Auditor::admissions() const {
  std::lock_guard l(mu_);
  return admissions_;
}
int64_t Auditor::evictions() const {
  std::lock_guard l(mu_);
  return evictions_;
}
std::map<std::string, std::chrono::milliseconds> Auditor::worst_recovery() const {
  std::lock_guard l(mu_);
  return worst_;
}

}  // namespace rota::soak
