#include "budget/budget_controller.h"

#include <algorithm>
#include <limits>
#include <set>

#include "budget/eviction.h"
#include "rota/api/snapshot.h"

namespace rota::controller {
namespace {

int64_t WallMs(apiclient::Clock& clock) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock.WallNow().time_since_epoch()).count();
}

// When `c` turned to its status (ms), or `fallback` when it has no readable time.
int64_t TransitionMs(const api::Condition* c, int64_t fallback) {
  if (!c) return fallback;
  Result<int64_t> t = api::ParseTime(c->last_transition_time);
  return t.ok() && *t > 0 ? *t * 1000 : fallback;
}

// The hold of a Workload that holds quota now, or nullopt.
std::optional<budget::Hold> HoldOf(const api::Workload& w) {
  if (!w.status || !w.status->admission || IsFinished(w)) return std::nullopt;
  budget::Hold h;
  h.key = w.metadata.namespace_ + "/" + w.metadata.name;
  h.cluster_queue = w.status->admission->cluster_queue;
  for (const auto& psa : w.status->admission->pod_set_assignments)
    for (const auto& [resource, q] : psa.resource_usage) h.usage_milli[resource] += q.milli();
  h.start = TransitionMs(api::FindCondition(w.status->conditions, api::workload_condition::kQuotaReserved), 0);
  return h;
}

std::string Describe(const api::Budget& b) { return "Budget \"" + b.metadata.name + "\""; }

// Finished runs kept for the first sync while not accounting (a follower, or before Run).
constexpr size_t kMaxFinishedKept = 20000;

}  // namespace

BudgetController::BudgetController(ClusterCache& cache, apiclient::Client& client, Logger log, Metrics* metrics,
                                   apiclient::EventRecorder* events, apiclient::Clock& clock,
                                   std::chrono::milliseconds sync_period)
    : cache_(cache),
      client_(client),
      log_(std::move(log)),
      metrics_(metrics),
      events_(events),
      clock_(clock),
      sync_period_(sync_period) {
  cache_.OnWorkloadChange([this](const api::Workload& w) { WorkloadChanged(w); });
  cache_.OnFinishedRun([this](const FinishedRun& run) {
    if (run.key.size() < 3) return;
    budget::Hold h{run.key, run.cluster_queue, run.usage_milli, (run.finished_at - run.seconds) * 1000,
                   run.finished_at * 1000};
    std::lock_guard l(mu_);
    // (Kept before Run too, for the first list after a start, but bounded while nothing takes them.)
    if (!active_.load() && finished_.size() >= kMaxFinishedKept) return;
    finished_[run.key] = std::move(h);  // (one per workload: a run is reported again on later events)
  });
  cache_.OnBudgetChange([this] {
    std::lock_guard l(mu_);
    dirty_ = true;
    wake_.notify_all();
  });
}

void BudgetController::WorkloadChanged(const api::Workload& w) {
  // (Only while accounting: a follower keeps nothing.)
  if (!active_.load() || w.metadata.name.empty()) return;
  const std::string key = w.metadata.namespace_ + "/" + w.metadata.name;
  if (std::optional<budget::Hold> h = HoldOf(w)) {
    // Seen holding quota: charged even if it lets go again before the next sync.
    std::lock_guard l(mu_);
    std::vector<budget::Hold>& seen = seen_[key];
    if (seen.empty() || seen.back().start != h->start) seen.push_back(std::move(*h));
    return;
  }
  // It holds no quota (finished, evicted): note when it let go, for the charge up to it.
  int64_t at = WallMs(clock_);
  if (w.status && IsFinished(w))
    at = TransitionMs(api::FindCondition(w.status->conditions, api::workload_condition::kFinished), at);
  std::lock_guard l(mu_);
  stopped_at_.try_emplace(key, at);
}

std::shared_ptr<const BudgetGates> BudgetController::Gates() const {
  std::lock_guard l(mu_);
  return gates_;
}

void BudgetController::Run(const std::atomic<bool>& stop) {
  active_.store(true);
  while (!stop.load()) {
    // (Until the cache has synced, looks again soon: the scheduler waits for the first sync.)
    if (!cache_.HasSynced()) {
      clock_.SleepFor(std::chrono::milliseconds(50));
      continue;
    }
    Sync();
    std::unique_lock l(mu_);
    // (Waits in short steps, so that `stop` is seen within a second.)
    const auto deadline = clock_.Now() + sync_period_;
    while (!stop.load() && !dirty_ && clock_.Now() < deadline) {
      clock_.WaitUntil(wake_, l, std::min(deadline, clock_.Now() + std::chrono::seconds(1)));
    }
    dirty_ = false;
  }
  active_.store(false);
}

std::vector<budget::Hold> BudgetController::CurrentHolds(int64_t now_ms) {
  std::map<std::string, budget::Hold> now_holding;
  cache_.workloads().ForEach([&](const std::string&, const std::shared_ptr<const api::Workload>& w) {
    if (std::optional<budget::Hold> h = HoldOf(*w)) now_holding.emplace(h->key, std::move(*h));
  });
  std::map<std::string, int64_t> stopped;
  std::map<std::string, budget::Hold> finished;
  std::map<std::string, std::vector<budget::Hold>> seen;
  {
    std::lock_guard l(mu_);
    stopped.swap(stopped_at_);
    finished.swap(finished_);
    seen.swap(seen_);
  }
  // A hold whose admission time is unknown is charged from when it was first seen.
  for (auto& [key, h] : now_holding) {
    auto before = holding_.find(key);
    if (h.start <= 0) h.start = before != holding_.end() && before->second.start > 0 ? before->second.start : now_ms;
  }
  // Every hold since the last sync that is not held now: the ones held then, and the ones seen
  // since (admitted and let go in between, or evicted and admitted again), once each.
  std::map<std::pair<std::string, int64_t>, budget::Hold> ended;
  for (const auto& [key, h] : holding_) ended.emplace(std::make_pair(key, h.start), h);
  for (const auto& [key, list] : seen)
    for (const budget::Hold& h : list)
      if (h.start > 0) ended.emplace(std::make_pair(key, h.start), h);
  std::vector<budget::Hold> holds;
  for (auto& [id, h] : ended) {
    auto now = now_holding.find(id.first);
    if (now != now_holding.end() && now->second.start == h.start) continue;
    // Charged up to when it let go: its stop, else its next admission, else now.
    auto at = stopped.find(id.first);
    h.end = now != now_holding.end() ? now->second.start : now_ms;
    if (at != stopped.end() && at->second >= h.start) h.end = std::min(h.end, at->second);
    holds.push_back(h);
    finished.erase(id.first);  // (charged here, up to when it let go)
  }
  // Runs seen finished that rota never saw holding quota (e.g. they finished while it was not
  // the leader): charged from accountedUntil up to their end.
  for (auto& [key, h] : finished)
    if (!now_holding.count(key)) holds.push_back(std::move(h));
  holding_ = std::move(now_holding);
  for (const auto& [key, h] : holding_) holds.push_back(h);
  return holds;
}

BudgetController::Entry* BudgetController::EntryOf(const api::Budget& b, int64_t now_ms) {
  const std::string& name = b.metadata.name;
  auto it = entries_.find(name);
  const int64_t generation = b.metadata.generation.value_or(0);
  if (it != entries_.end() && it->second.uid == b.metadata.uid && it->second.generation == generation) {
    Result<int64_t> theirs = api::ParseTime(b.status ? b.status->accounted_until : "");
    // (Whole seconds: ahead means by a second or more, written by another leader.)
    if (!theirs.ok() || *theirs * 1000 <= it->second.ledger.accounted_until()) return &it->second;
  }
  Result<budget::Ledger> ledger = budget::Ledger::Resume(b, now_ms);
  if (!ledger.ok()) {
    log_("error", Describe(b) + ": not accounted: " + ledger.status().message());
    entries_.erase(name);
    return nullptr;
  }
  Entry e{b.metadata.uid, generation, std::move(*ledger), b.status.value_or(api::BudgetStatus{})};
  return &entries_.insert_or_assign(name, std::move(e)).first->second;
}

void BudgetController::SyncOne(const api::Budget& b, const std::vector<budget::Hold>& holds,
                               const std::map<std::string, std::string>& cohort_of,
                               const std::map<std::string, std::string>& parent_of, int64_t now_ms,
                               BudgetGates& gates) {
  Entry* e = EntryOf(b, now_ms);
  if (!e) return;
  const std::vector<std::string> queues = budget::QueuesCovered(b.spec, cohort_of, parent_of);
  std::vector<budget::Hold> mine;
  for (const budget::Hold& h : holds)
    if (std::find(queues.begin(), queues.end(), h.cluster_queue) != queues.end()) mine.push_back(h);
  e->ledger.ChargeUntil(mine, now_ms);
  api::BudgetStatus status = e->ledger.ToStatus(e->status);
  const std::vector<budget::ConditionChange> changes =
      budget::UpdateConditions(status.conditions, b, e->ledger, api::FormatTime(now_ms / 1000));
  WriteStatus(b, status);
  e->status = std::move(status);
  Tell(b, changes);
  const int64_t since =
      TransitionMs(api::FindCondition(e->status.conditions, api::budget_condition::kExhausted), now_ms) / 1000;
  const api::BudgetGate gate = budget::GateOf(b, e->ledger, since);
  for (const std::string& q : queues) gates[q].push_back(gate);
  if (gate.exhausted && b.spec.stop_running) StopRunning(b, mine, gate.message, now_ms);
}

void BudgetController::Sync() {
  const int64_t now_ms = WallMs(clock_);
  const std::vector<budget::Hold> holds = CurrentHolds(now_ms);
  std::map<std::string, std::string> cohort_of, parent_of;
  for (const auto& q : cache_.cluster_queues().List()) cohort_of[q->metadata.name] = q->spec.cohort_name;
  for (const auto& c : cache_.cohorts().List()) parent_of[c->metadata.name] = c->spec.parent_name;
  const std::vector<std::shared_ptr<const api::Budget>> budgets = cache_.budgets().List();
  auto gates = std::make_shared<BudgetGates>();
  std::set<std::string> present;
  for (const auto& b : budgets) {
    present.insert(b->metadata.name);
    SyncOne(*b, holds, cohort_of, parent_of, now_ms, *gates);
  }
  std::erase_if(entries_, [&](const auto& e) { return !present.count(e.first); });
  ExportMetrics(budgets);
  bool changed;
  {
    std::lock_guard l(mu_);
    changed = !(*gates_ == *gates);
    gates_ = std::move(gates);
  }
  synced_.store(true);
  if (changed && on_gates_changed_) on_gates_changed_();
}

void BudgetController::WriteStatus(const api::Budget& b, const api::BudgetStatus& status) {
  api::Json body = {{"status", api::EncodeValue(status)}};
  // (A merge patch keeps what it does not name: a window that is no longer rolling drops its buckets.)
  if (status.buckets.empty()) body["status"]["buckets"] = nullptr;
  auto r = client_.Patch(apiclient::resources::kBudgets, "", b.metadata.name, apiclient::PatchType::kMerge, body,
                         {.subresource = "status"});
  if (!r.ok()) log_("warn", Describe(b) + ": status not written: " + r.error().ToString());
}

void BudgetController::StopRunning(const api::Budget& b, const std::vector<budget::Hold>& holds,
                                   const std::string& message, int64_t now_ms) {
  Result<int64_t> created = api::ParseTime(b.metadata.creation_timestamp);
  for (const budget::Hold& h : holds) {
    if (h.end != std::numeric_limits<int64_t>::max() || (created.ok() && h.start < *created * 1000)) continue;
    std::shared_ptr<const api::Workload> wl = cache_.workloads().Get(h.key);
    if (!wl || !budget::Running(*wl)) continue;
    auto r = client_.Patch(apiclient::resources::kWorkloads, wl->metadata.namespace_, wl->metadata.name,
                           apiclient::PatchType::kMerge, budget::EvictionPatch(*wl, message, now_ms / 1000),
                           {.subresource = "status"});
    if (r.ok()) {
      log_("info", "evicted " + h.key + ": " + Describe(b) + " is used up (stopRunning)");
    } else if (!r.error().IsConflict()) {  // (a conflict: it changed meanwhile; the next sync sees it)
      log_("warn", "Workload \"" + h.key + "\" not evicted for " + Describe(b) + ": " + r.error().ToString());
    }
  }
}

void BudgetController::Tell(const api::Budget& b, const std::vector<budget::ConditionChange>& changes) {
  for (const budget::ConditionChange& c : changes) {
    log_("info", Describe(b) + ": " + c.type + " is " + (c.now_true ? "True" : "False") + ": " + c.message);
    if (!events_) continue;
    const std::string reason = !c.now_true                                   ? "BudgetAvailable"
                               : c.type == api::budget_condition::kExhausted ? std::string(api::kBudgetExhaustedReason)
                                                                             : "BudgetWarning";
    events_->Post({std::string(api::kBudgetApiVersion), "Budget", "", b.metadata.name, b.metadata.uid},
                  c.now_true ? "Warning" : "Normal", reason, c.message);
  }
}

void BudgetController::ExportMetrics(const std::vector<std::shared_ptr<const api::Budget>>& budgets) {
  if (!metrics_) return;
  Metrics::GaugeValues series;
  std::vector<std::string> owners = metric_owners_;
  metric_owners_.clear();
  for (const auto& b : budgets) {
    auto e = entries_.find(b->metadata.name);
    if (e == entries_.end()) continue;
    const std::string& name = b->metadata.name;
    metric_owners_.push_back(name);
    owners.push_back(name);
    const std::map<std::string, double> used = e->second.ledger.Used();
    for (const api::BudgetLimit& l : b->spec.limits) {
      auto u = used.find(l.resource);
      series["rota_budget_used_hours"][{{"budget", name}, {"resource", l.resource}}] = u == used.end() ? 0 : u->second;
      series["rota_budget_limit_hours"][{{"budget", name}, {"resource", l.resource}}] = double(l.hours.milli()) / 1000;
    }
    series["rota_budget_exhausted"][{{"budget", name}}] = e->second.ledger.Exhausted() ? 1 : 0;
  }
  metrics_->ReplaceGaugeSeries({"rota_budget_used_hours", "rota_budget_limit_hours", "rota_budget_exhausted"}, "budget",
                               owners, std::move(series));
}

}  // namespace rota::controller
