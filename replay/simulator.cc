#include "rota/replay/simulator.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "rota/admission/engine.h"
#include "rota/api/checkpoint.h"
#include "scheduling/preemption_hold.h"
#include "scheduling/tuning.h"

namespace rota::replay {
namespace {

namespace adm = admission;

// Engine times are trace seconds plus this: the engine reads a time of 0 as "no time".
constexpr int64_t kOffset = 1'000'000'000;
constexpr double kEpsilon = 1e-6;
constexpr size_t kMaxViolations = 20;

struct Job {
  const TraceJob* trace = nullptr;
  adm::WorkloadSpec spec;  // as api::BuildSnapshot made it
  double gpus = 0;
  int queue = -1;  // in Simulator::queues_; -1: no ClusterQueue
  int team = 0;
  int64_t remaining = 0;      // seconds of work still to do
  int64_t admitted_at = -1;   // -1: not running
  int64_t slot = -1;          // in the snapshot's workloads while submitted and not finished
  uint64_t generation = 0;    // changes on every admission and eviction: older events are stale
  bool handshake = false;     // takes part in the checkpoint handshake
  bool saving = false;        // asked to checkpoint; still running and holding its quota
  std::string preemptor;      // while saving: the workload it makes room for
  uint64_t ask = 0;           // changes on every request to save and its withdrawal
  double guarantee_mark = 0;  // its queue's within-guarantee clock when it last began to wait
  JobOutcome out;
};

struct Event {
  enum Kind { kFinish, kSaved };
  int64_t at = 0;
  Kind kind = kFinish;
  size_t job = 0;
  uint64_t generation = 0;  // the job's generation (kFinish) or request (kSaved) it belongs to
  bool operator>(const Event& o) const { return at != o.at ? at > o.at : job > o.job; }
};

// A ClusterQueue's usage (milli-units by "flavor/resource") and limits, and its GPUs.
struct Queue {
  std::string name;
  int root = -1;                                          // its cohort tree, in Simulator::roots_; -1: no cohort
  std::unordered_map<std::string, int64_t> usage, limit;  // limit absent: only the cohort bounds it
  double nominal_gpus = 0, in_use = 0, waiting = 0;
  double within_guarantee = 0;  // seconds during which it waited while asking no more than its nominal quota
};

std::string UsageKey(const std::string& flavor, const std::string& resource) { return flavor + "/" + resource; }

}  // namespace

double GpuWeight(const std::string& resource, const std::map<std::string, double>& weights) {
  if (auto it = weights.find(resource); it != weights.end()) return it->second;
  if (resource == "nvidia.com/gpu" || resource == "amd.com/gpu") return 1;
  if (resource == "nvidia.com/gpu.shared") return 0.25;
  const std::string mig = "nvidia.com/mig-";
  if (resource.rfind(mig, 0) == 0 && resource.size() > mig.size() && std::isdigit(resource[mig.size()])) {
    return (resource[mig.size()] - '0') / 7.0;
  }
  return 0;
}

namespace {

class Simulator;

// The replay's snapshot entries by key, for the controller's PreemptionHold. The marks it makes
// (a released victim waits for its preemptor) last one pass, as they do in the controller, where
// the next build makes the entry again.
class ReplaySpecs final : public controller::SpecsByKey {
 public:
  explicit ReplaySpecs(Simulator& sim) : sim_(sim) {}
  const adm::WorkloadSpec* Find(const std::string& key) const override;
  adm::WorkloadSpec* Mutable(const std::string& key) override;
  size_t IndexOf(const adm::WorkloadSpec* spec) const override;
  void ClearMarks();

 private:
  Simulator& sim_;
  std::vector<std::string> marked_;
};

class Simulator {
 public:
  Simulator(const Trace& trace, const SimulatorOptions& options) : trace_(trace), options_(options) {}
  Status Setup(const api::ClusterState& cluster);
  Replay Run();

 private:
  void SetUpQueues(const adm::Snapshot& built);
  Status SetUpJobs(const adm::Snapshot& built);
  void Advance(int64_t t);
  void Arrive(size_t j);
  void Finish(size_t j, int64_t t);
  void Pass(int64_t t);
  void Admit(size_t j, const adm::AdmitDecision& a, int64_t t);
  void Evict(size_t j, int64_t t, bool saved_all);
  void StartWaiting(Job& job);
  void StopWaiting(Job& job);
  void Use(Job& job, int sign);
  void CheckQuota(int64_t t);
  void CheckConservation();
  void ExplainWaiting();
  void Violation(std::string what);
  void AddSlot(size_t j);
  void RemoveSlot(size_t j);
  double Gpus(const adm::WorkloadSpec& spec) const;
  void Sample(int64_t from, int64_t to);
  bool Stale(const Event& e) const;
  void Withdraw(const controller::HeldPreemptions& held);
  void StopSaving(size_t j);
  std::vector<uint32_t>::iterator PlaceOf(uint32_t slot);

  friend class ReplaySpecs;
  adm::WorkloadSpec* Entry(const std::string& key);
  void Ask(size_t j, const std::string& preemptor, int64_t t);
  void Saved(size_t j, int64_t t);

  const Trace& trace_;
  const SimulatorOptions& options_;
  controller::PreemptionHold hold_{controller::SchedulingTuning{}.preemptor_first};
  ReplaySpecs specs_{*this};
  std::vector<Job> jobs_;
  std::unordered_map<std::string, size_t> by_key_;
  std::vector<Queue> queues_;
  std::unordered_map<std::string, int> queue_index_;
  std::vector<std::unordered_map<std::string, int64_t>> roots_capacity_, roots_usage_;
  std::vector<std::string> teams_;
  std::vector<double> team_in_use_, team_waiting_;
  adm::Snapshot snapshot_;  // the flavors, cohorts and queues, and the submitted jobs' entries
  std::vector<size_t> slot_job_;
  adm::Workspace workspace_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  Replay out_;
  int64_t now_ = 0;
  double held_gpu_seconds_ = 0, lost_gpu_seconds_ = 0;
  size_t pending_ = 0;        // submitted jobs waiting for quota
  std::vector<int> touched_;  // queues whose usage changed since the last quota check
  std::set<size_t> saving_;   // jobs asked to save, still running
  size_t violations_ = 0;
};

Status Simulator::Setup(const api::ClusterState& cluster) {
  api::ClusterState state = cluster;
  state.workloads.clear();
  state.keep_going = true;
  state.now = 0;
  for (const TraceJob& j : trace_.jobs) state.workloads.push_back(j.workload);
  Result<adm::Snapshot> built = api::BuildSnapshot(state);
  if (!built.ok()) return built.status();
  SetUpQueues(*built);
  return SetUpJobs(*built);
}

// The queues' limits per flavor and resource, and each cohort tree's capacity.
void Simulator::SetUpQueues(const adm::Snapshot& built) {
  snapshot_.flavors = built.flavors;
  snapshot_.cohorts = built.cohorts;
  snapshot_.cluster_queues = built.cluster_queues;
  snapshot_.fair_sharing = built.fair_sharing;
  std::unordered_map<std::string, std::string> parent;
  for (const adm::CohortSpec& c : built.cohorts) parent[c.name] = c.parent;
  auto root_of = [&](std::string name) {
    for (size_t hops = 0; hops < 64 && parent.count(name) && !parent[name].empty(); ++hops) name = parent[name];
    return name;
  };
  std::unordered_map<std::string, int> roots;
  auto root_index = [&](const std::string& cohort) {
    auto [it, added] = roots.emplace(root_of(cohort), static_cast<int>(roots_capacity_.size()));
    if (added) roots_capacity_.emplace_back(), roots_usage_.emplace_back();
    return it->second;
  };
  auto add_capacity = [&](int root, const std::vector<adm::ResourceGroupSpec>& groups, Queue* q) {
    for (const auto& g : groups) {
      for (const auto& f : g.flavors) {
        for (const auto& r : f.resources) {
          if (root >= 0) roots_capacity_[root][UsageKey(f.flavor, r.resource)] += r.nominal;
          if (!q) continue;
          q->nominal_gpus += r.nominal / 1000.0 * GpuWeight(r.resource, options_.weights);
          if (root < 0 || r.borrowing_limit)
            q->limit[UsageKey(f.flavor, r.resource)] = r.nominal + r.borrowing_limit.value_or(0);
        }
      }
    }
  };
  for (const adm::CohortSpec& c : built.cohorts) {
    add_capacity(root_index(c.name), c.resource_groups, nullptr);
  }
  for (const adm::ClusterQueueSpec& cq : built.cluster_queues) {
    Queue q;
    q.name = cq.name;
    q.root = cq.cohort.empty() ? -1 : root_index(cq.cohort);
    add_capacity(q.root, cq.resource_groups, &q);
    out_.capacity += q.nominal_gpus;
    queue_index_[cq.name] = static_cast<int>(queues_.size());
    queues_.push_back(std::move(q));
  }
  for (const adm::CohortSpec& c : built.cohorts) {
    for (const auto& g : c.resource_groups)
      for (const auto& f : g.flavors)
        for (const auto& r : f.resources) out_.capacity += r.nominal / 1000.0 * GpuWeight(r.resource, options_.weights);
  }
}

double Simulator::Gpus(const adm::WorkloadSpec& spec) const {
  double gpus = 0;
  for (const adm::PodSetSpec& ps : spec.pod_sets)
    for (const auto& [resource, milli] : ps.per_pod)
      gpus += ps.count * (milli / 1000.0) * GpuWeight(resource, options_.weights);
  return gpus;
}

Status Simulator::SetUpJobs(const adm::Snapshot& built) {
  std::unordered_map<std::string, const adm::WorkloadSpec*> specs;
  for (const adm::WorkloadSpec& w : built.workloads) specs[w.key] = &w;
  std::unordered_map<std::string, int> team_index;
  jobs_.resize(trace_.jobs.size());
  for (size_t i = 0; i < trace_.jobs.size(); ++i) {
    const TraceJob& t = trace_.jobs[i];
    Job& job = jobs_[i];
    job.trace = &t;
    const std::string key = t.workload->metadata.namespace_ + "/" + t.workload->metadata.name;
    auto it = specs.find(key);
    if (it == specs.end()) return InvalidArgument("Workload \"" + key + "\": given twice in the trace");
    job.spec = *it->second;
    specs.erase(it);
    job.spec.creation_time = kOffset + t.submit;
    job.gpus = Gpus(job.spec);
    job.remaining = t.runtime;
    job.handshake = options_.checkpoint_all || api::Checkpointable(t.workload->metadata.annotations);
    if (auto q = queue_index_.find(job.spec.cluster_queue); q != queue_index_.end()) job.queue = q->second;
    auto [team, added] = team_index.emplace(t.workload->metadata.namespace_, static_cast<int>(teams_.size()));
    if (added) teams_.push_back(team->first);
    job.team = team->second;
    job.out = {t.workload->metadata.name, team->first, job.spec.cluster_queue, t.submit, -1, -1, t.runtime, job.gpus};
    by_key_[key] = i;
  }
  team_in_use_.assign(teams_.size(), 0);
  team_waiting_.assign(teams_.size(), 0);
  return Status::Ok();
}

// The snapshot's scheduling order is kept from pass to pass (admission::Snapshot::order), as the
// controller's SnapshotBuilder keeps it: sorting thousands of waiting jobs again for every pass
// was most of a replay's time. Entries never change their priority, creation time or key.
std::vector<uint32_t>::iterator Simulator::PlaceOf(uint32_t slot) {
  auto& order = snapshot_.order;
  const adm::WorkloadSpec& spec = snapshot_.workloads[slot];
  return std::lower_bound(order.begin(), order.end(), slot,
                          [&](uint32_t a, uint32_t) { return adm::InSchedulingOrder(snapshot_.workloads[a], spec); });
}

void Simulator::AddSlot(size_t j) {
  Job& job = jobs_[j];
  const auto slot = static_cast<uint32_t>(snapshot_.workloads.size());
  job.slot = slot;
  snapshot_.workloads.push_back(job.spec);
  slot_job_.push_back(j);
  if (options_.keep_order) snapshot_.order.insert(PlaceOf(slot), slot);
}

void Simulator::RemoveSlot(size_t j) {
  Job& job = jobs_[j];
  const size_t slot = static_cast<size_t>(job.slot), last = snapshot_.workloads.size() - 1;
  if (options_.keep_order) {
    snapshot_.order.erase(PlaceOf(static_cast<uint32_t>(slot)));
    if (slot != last) *PlaceOf(static_cast<uint32_t>(last)) = static_cast<uint32_t>(slot);
  }
  if (slot != last) {
    snapshot_.workloads[slot] = std::move(snapshot_.workloads[last]);
    slot_job_[slot] = slot_job_[last];
    jobs_[slot_job_[slot]].slot = static_cast<int64_t>(slot);
  }
  snapshot_.workloads.pop_back();
  slot_job_.pop_back();
  job.slot = -1;
}

void Simulator::Violation(std::string what) {
  if (++violations_ <= kMaxViolations) out_.violations.push_back(std::move(what));
}

// Adds [from, to) at the current GPUs to each team's interval means.
void Simulator::Sample(int64_t from, int64_t to) {
  const int64_t step = out_.interval;
  while (from < to) {
    const size_t bucket = static_cast<size_t>((from - out_.start) / step);
    const int64_t bucket_end = out_.start + static_cast<int64_t>(bucket + 1) * step;
    const double share = static_cast<double>(std::min(to, bucket_end) - from) / static_cast<double>(step);
    for (size_t t = 0; t < teams_.size(); ++t) {
      TeamSeries& s = out_.series[teams_[t]];
      if (s.in_use.size() <= bucket) s.in_use.resize(bucket + 1), s.waiting.resize(bucket + 1);
      s.in_use[bucket] += team_in_use_[t] * share;
      s.waiting[bucket] += team_waiting_[t] * share;
    }
    from = std::min(to, bucket_end);
  }
}

void Simulator::Advance(int64_t t) {
  if (t <= now_) return;
  const int64_t dt = t - now_;
  Sample(now_, t);
  double in_use = 0;
  for (Queue& q : queues_) {
    in_use += q.in_use;
    if (q.waiting > kEpsilon && q.in_use + q.waiting <= q.nominal_gpus + kEpsilon) q.within_guarantee += dt;
  }
  held_gpu_seconds_ += in_use * static_cast<double>(dt);
  now_ = t;
}

void Simulator::StartWaiting(Job& job) {
  ++pending_;
  team_waiting_[job.team] += job.gpus;
  if (job.queue < 0) return;
  queues_[job.queue].waiting += job.gpus;
  job.guarantee_mark = queues_[job.queue].within_guarantee;
}

void Simulator::StopWaiting(Job& job) {
  --pending_;
  team_waiting_[job.team] -= job.gpus;
  if (job.queue < 0) return;
  Queue& q = queues_[job.queue];
  q.waiting -= job.gpus;
  job.out.waited_within_guarantee += std::llround(q.within_guarantee - job.guarantee_mark);
}

// Adds (sign 1) or takes back (-1) the quota the job's admission holds.
void Simulator::Use(Job& job, int sign) {
  const adm::WorkloadSpec& live = snapshot_.workloads[job.slot];
  Queue& q = queues_[job.queue];
  for (const adm::PodSetAdmission& ps : live.admission->pod_sets) {
    for (const auto& [resource, amount] : ps.usage) {
      auto flavor = ps.flavors.find(resource);
      const std::string key = UsageKey(flavor == ps.flavors.end() ? "" : flavor->second, resource);
      q.usage[key] += sign * amount;
      if (q.root >= 0) roots_usage_[q.root][key] += sign * amount;
    }
  }
  q.in_use += sign * job.gpus;
  team_in_use_[job.team] += sign * job.gpus;
  touched_.push_back(job.queue);
}

void Simulator::Arrive(size_t j) {
  AddSlot(j);
  StartWaiting(jobs_[j]);
}

void Simulator::Finish(size_t j, int64_t t) {
  Job& job = jobs_[j];
  if (job.out.finish >= 0) Violation("job " + job.out.name + " finished twice");
  Use(job, -1);
  job.out.finish = t;
  job.remaining = 0;
  job.admitted_at = -1;
  if (job.saving) StopSaving(j);
  RemoveSlot(j);
}

void Simulator::Admit(size_t j, const adm::AdmitDecision& a, int64_t t) {
  Job& job = jobs_[j];
  StopWaiting(job);
  adm::WorkloadSpec& live = snapshot_.workloads[job.slot];
  live.admission = adm::AdmissionSpec{a.cluster_queue, a.pod_sets};
  live.admission_time = kOffset + t;
  live.last_checkpoint = 0;
  live.evicted = false;
  job.admitted_at = t;
  ++job.generation;
  Use(job, 1);
  if (job.out.first_start < 0) job.out.first_start = t;
  events_.push({t + job.remaining, Event::kFinish, j, job.generation});
}

// Gives the job's quota back and queues it again; it keeps the work up to its last save (all of
// it when it was asked to checkpoint and has).
void Simulator::Evict(size_t j, int64_t t, bool saved_all) {
  Job& job = jobs_[j];
  if (job.admitted_at < 0) return;
  const int64_t ran = t - job.admitted_at;
  const int64_t every = options_.checkpoint_every;
  const int64_t saved = saved_all ? ran : (every > 0 ? ran / every * every : 0);
  const double lost = static_cast<double>(ran - saved) * job.gpus;
  job.out.lost_gpu_seconds += lost;
  lost_gpu_seconds_ += lost;
  job.remaining -= saved;
  ++job.out.preemptions;
  Use(job, -1);
  adm::WorkloadSpec& live = snapshot_.workloads[job.slot];
  live.admission.reset();
  live.admission_time = 0;
  live.last_checkpoint = 0;
  live.evicted = false;
  job.admitted_at = -1;
  if (job.saving) StopSaving(j);
  ++job.generation;
  StartWaiting(job);
}

void Simulator::Pass(int64_t t) {
  if (pending_ == 0) return;  // nothing waits: the engine would decide nothing
  specs_.ClearMarks();
  hold_.HoldReleased(specs_, controller::PreemptionHold::TimePoint(std::chrono::seconds(t)));
  snapshot_.now = options_.lost_work_order ? kOffset + t : 0;
  if (const int64_t every = options_.checkpoint_every; every > 0) {
    for (size_t s = 0; s < slot_job_.size(); ++s) {
      const Job& job = jobs_[slot_job_[s]];
      if (job.admitted_at >= 0) {
        snapshot_.workloads[s].last_checkpoint = kOffset + job.admitted_at + (t - job.admitted_at) / every * every;
      }
    }
  }
  adm::Decisions d = adm::Schedule(snapshot_, workspace_);
  ++out_.passes;
  // As in the controller: the first preemptor with a victim that keeps its quota while it saves
  // waits, and what the engine admitted after it is left to the next pass.
  controller::HeldPreemptions held =
      hold_.Hold(d, specs_, [&](const std::string& key) { return jobs_[by_key_.at(key)].handshake; });
  for (const adm::PreemptDecision& p : d.preempted) {
    const size_t v = by_key_.at(p.workload);
    if (held.victims.count(p.workload)) {
      Ask(v, p.preemptor, t);
    } else {
      Evict(v, t, false);
    }
  }
  for (const adm::AdmitDecision& a : d.admitted) Admit(by_key_.at(a.workload), a, t);
  Withdraw(held);
  workspace_.Recycle(std::move(d));
  CheckQuota(t);
}

// Asks a victim to checkpoint: it keeps running, and its quota, until it has saved.
void Simulator::Ask(size_t j, const std::string& preemptor, int64_t t) {
  Job& job = jobs_[j];
  if (job.saving || job.admitted_at < 0) return;
  job.saving = true;
  job.preemptor = preemptor;
  ++job.ask;
  saving_.insert(j);
  snapshot_.workloads[job.slot].evicted = true;
  events_.push({t + options_.checkpoint_write, Event::kSaved, j, job.ask});
}

// Withdraws requests to save that are no longer needed, as the controller's CheckpointRequests
// does: the preemptor was admitted without the victim, or waits now for other victims.
void Simulator::Withdraw(const controller::HeldPreemptions& held) {
  std::vector<size_t> withdrawn;
  for (size_t v : saving_) {
    const Job& victim = jobs_[v];
    const Job& preemptor = jobs_[by_key_.at(victim.preemptor)];
    const bool admitted = preemptor.admitted_at >= 0 || preemptor.out.finish >= 0;
    const std::string& key = snapshot_.workloads[victim.slot].key;
    if (admitted || (held.preemptor == victim.preemptor && !held.chosen.count(key))) withdrawn.push_back(v);
  }
  for (size_t v : withdrawn) StopSaving(v);
}

void Simulator::StopSaving(size_t j) {
  Job& job = jobs_[j];
  job.saving = false;
  ++job.ask;
  saving_.erase(j);
  if (job.slot >= 0) snapshot_.workloads[job.slot].evicted = false;
}

// The victim has saved: it is evicted losing nothing, and its quota goes to its preemptor first.
void Simulator::Saved(size_t j, int64_t t) {
  Job& job = jobs_[j];
  const std::string preemptor = job.preemptor;
  StopSaving(j);
  Evict(j, t, true);
  hold_.Promise(snapshot_.workloads[job.slot].key, preemptor);
}

adm::WorkloadSpec* Simulator::Entry(const std::string& key) {
  auto it = by_key_.find(key);
  if (it == by_key_.end() || jobs_[it->second].slot < 0) return nullptr;
  return &snapshot_.workloads[jobs_[it->second].slot];
}

const adm::WorkloadSpec* ReplaySpecs::Find(const std::string& key) const { return sim_.Entry(key); }

adm::WorkloadSpec* ReplaySpecs::Mutable(const std::string& key) {
  adm::WorkloadSpec* spec = sim_.Entry(key);
  if (spec) marked_.push_back(key);
  return spec;
}

size_t ReplaySpecs::IndexOf(const adm::WorkloadSpec* spec) const {
  return static_cast<size_t>(spec - sim_.snapshot_.workloads.data());
}

void ReplaySpecs::ClearMarks() {
  for (const std::string& key : marked_) {
    if (adm::WorkloadSpec* spec = sim_.Entry(key))
      spec->inadmissible_reason.clear(), spec->inadmissible_message.clear();
  }
  marked_.clear();
}

// No queue holds more than its nominal quota plus borrowing limit, and no cohort tree more than
// it has, of any flavor and resource.
void Simulator::CheckQuota(int64_t t) {
  std::sort(touched_.begin(), touched_.end());
  touched_.erase(std::unique(touched_.begin(), touched_.end()), touched_.end());
  for (int i : touched_) {
    const Queue& q = queues_[i];
    for (const auto& [key, limit] : q.limit) {
      auto used = q.usage.find(key);
      if (used != q.usage.end() && used->second > limit) {
        Violation("at second " + std::to_string(t) + ": ClusterQueue " + q.name + " holds " +
                  std::to_string(used->second) + "m of " + key + ", over its limit of " + std::to_string(limit) + "m");
      }
    }
    if (q.root < 0) continue;
    for (const auto& [key, used] : roots_usage_[q.root]) {
      const int64_t capacity = roots_capacity_[q.root].count(key) ? roots_capacity_[q.root].at(key) : 0;
      if (used > capacity) {
        Violation("at second " + std::to_string(t) + ": the cohort of ClusterQueue " + q.name + " holds " +
                  std::to_string(used) + "m of " + key + ", over the " + std::to_string(capacity) + "m it has");
      }
    }
  }
  touched_.clear();
}

// Every GPU-second held went into work kept or work lost.
void Simulator::CheckConservation() {
  double work = 0;
  for (const Job& job : jobs_) work += static_cast<double>(job.trace->runtime - job.remaining) * job.gpus;
  const double accounted = work + lost_gpu_seconds_;
  if (std::fabs(held_gpu_seconds_ - accounted) > 1e-6 * std::max(1.0, held_gpu_seconds_) + 1) {
    Violation("GPU-seconds held (" + std::to_string(held_gpu_seconds_) + ") differ from work done plus work lost (" +
              std::to_string(accounted) + ")");
  }
}

// The jobs still waiting at the end (nothing else will happen to them) get the engine's reason.
void Simulator::ExplainWaiting() {
  if (pending_ == 0) return;
  snapshot_.now = 0;
  adm::Decisions d = adm::Schedule(snapshot_, workspace_);
  for (const adm::PendingDecision& p : d.pending) {
    auto it = by_key_.find(std::string(p.workload));
    if (it != by_key_.end())
      jobs_[it->second].out.waiting_reason = std::string(p.reason) + ": " + std::string(p.message);
  }
}

bool Simulator::Stale(const Event& e) const {
  const Job& job = jobs_[e.job];
  if (job.admitted_at < 0) return true;
  return e.kind == Event::kSaved ? !job.saving || job.ask != e.generation : job.generation != e.generation;
}

Replay Simulator::Run() {
  const auto started = std::chrono::steady_clock::now();
  out_.interval = options_.interval;
  out_.epoch = trace_.epoch;
  out_.start = now_ = trace_.jobs.empty() ? 0 : trace_.jobs.front().submit;
  for (size_t next = 0;;) {
    while (!events_.empty() && Stale(events_.top())) events_.pop();
    int64_t t = next < jobs_.size() ? trace_.jobs[next].submit : INT64_MAX;
    if (!events_.empty()) t = std::min(t, events_.top().at);
    if (t == INT64_MAX) break;
    Advance(t);
    for (; next < jobs_.size() && trace_.jobs[next].submit == t; ++next) {
      Arrive(next);
      if (options_.progress && next % 4096 == 0) options_.progress(static_cast<double>(next) / jobs_.size());
    }
    while (!events_.empty() && events_.top().at == t) {
      const Event e = events_.top();
      events_.pop();
      if (Stale(e)) continue;
      if (e.kind == Event::kFinish)
        Finish(e.job, t);
      else
        Saved(e.job, t);
    }
    Pass(t);
  }
  out_.end = now_;
  if (out_.series.empty() || out_.series.begin()->second.in_use.empty()) Sample(now_, now_ + 1);
  CheckConservation();
  ExplainWaiting();
  if (violations_ > kMaxViolations)
    out_.violations.push_back("... and " + std::to_string(violations_ - kMaxViolations) + " more");
  for (const std::string& team : teams_) out_.teams.push_back(team);
  for (const Job& job : jobs_) {
    out_.jobs.push_back(job.out);
    if (job.queue >= 0) out_.guarantee[job.out.team] = queues_[job.queue].nominal_gpus;
  }
  out_.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  out_.peak_rss_kib = usage.ru_maxrss;
  return std::move(out_);
}

}  // namespace

Result<Replay> Simulate(const api::ClusterState& cluster, const Trace& trace, const SimulatorOptions& options) {
  Simulator sim(trace, options);
  if (Status s = sim.Setup(cluster); !s.ok()) return s;
  return sim.Run();
}

}  // namespace rota::replay
