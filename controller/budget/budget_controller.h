#pragma once

// The budget controller (docs/budgets.md): on the leader, every sync period, it charges each
// Budget for the quota its ClusterQueues' workloads held since the Budget's accountedUntil,
// writes the usage, window and conditions to the Budget's status (so that a restart or a new
// leader goes on from there), posts Events when a budget reaches its warnAt or is used up, sets
// the rota_budget_* metrics, and publishes each ClusterQueue's gates for the scheduler's
// snapshot.
//
// Threads: Run() on a thread of its own (the leader's); Gates() from any thread; the cache's
// threads tell it when a workload stops holding quota.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "budget/gates.h"
#include "budget/ledger.h"
#include "cache/cluster_cache.h"
#include "logger.h"
#include "metrics.h"
#include "rota/api/budget.h"
#include "rota/apiclient/client.h"
#include "rota/apiclient/clock.h"
#include "rota/apiclient/events.h"

namespace rota::controller {

using BudgetGates = std::map<std::string, std::vector<api::BudgetGate>>;  // by ClusterQueue

class BudgetController {
 public:
  // Registers its listeners with `cache` (construct before the cache starts).
  BudgetController(ClusterCache& cache, apiclient::Client& client, Logger log, Metrics* metrics,
                   apiclient::EventRecorder* events, apiclient::Clock& clock, std::chrono::milliseconds sync_period);

  // Syncs every sync period, and soon after a Budget changes, until `stop`.
  void Run(const std::atomic<bool>& stop);
  // One round: charges every Budget up to now and writes what changed (Run's body; for tests).
  void Sync();

  // The gates of the last sync, by ClusterQueue (empty before the first). Any thread.
  std::shared_ptr<const BudgetGates> Gates() const;
  // Whether a sync has run (its gates are known). Any thread.
  bool Synced() const { return synced_.load(); }
  // Called (on Run's thread) after a sync whose gates differ from the last one's.
  void OnGatesChanged(std::function<void()> listener) { on_gates_changed_ = std::move(listener); }

 private:
  struct Entry {
    std::string uid;
    int64_t generation = 0;
    budget::Ledger ledger;
    api::BudgetStatus status;  // as last written (or read)
  };
  // The holds of the workloads holding quota now, and of those that stopped since the last sync.
  std::vector<budget::Hold> CurrentHolds(int64_t now_ms);
  // The entry of `b`, resumed from its status when rota has none for it, its spec changed, or
  // its status is ahead of the entry (written by another leader); null when the status cannot be read.
  Entry* EntryOf(const api::Budget& b, int64_t now_ms);
  // Charges one Budget and writes its status; adds its gate to `gates`.
  void SyncOne(const api::Budget& b, const std::vector<budget::Hold>& holds,
               const std::map<std::string, std::string>& cohort_of, const std::map<std::string, std::string>& parent_of,
               int64_t now_ms, BudgetGates& gates);
  void WriteStatus(const api::Budget& b, const api::BudgetStatus& status);
  // stopRunning: evicts the running workloads of `holds` admitted since the Budget was created.
  void StopRunning(const api::Budget& b, const std::vector<budget::Hold>& holds, const std::string& message,
                   int64_t now_ms);
  void Tell(const api::Budget& b, const std::vector<budget::ConditionChange>& changes);
  void ExportMetrics(const std::vector<std::shared_ptr<const api::Budget>>& budgets);
  void WorkloadChanged(const api::Workload& w);

  ClusterCache& cache_;
  apiclient::Client& client_;
  Logger log_;
  Metrics* metrics_;
  apiclient::EventRecorder* events_;
  apiclient::Clock& clock_;
  const std::chrono::milliseconds sync_period_;
  std::function<void()> on_gates_changed_;

  // Run's thread only.
  std::map<std::string, Entry> entries_;         // by Budget name
  std::map<std::string, budget::Hold> holding_;  // by workload key, as of the last sync
  std::vector<std::string> metric_owners_;       // budgets with metric series

  mutable std::mutex mu_;
  std::shared_ptr<const BudgetGates> gates_ = std::make_shared<BudgetGates>();  // guarded by mu_
  std::map<std::string, int64_t> stopped_at_;  // workload key -> when it stopped holding (ms); mu_
  // Runs seen finished since the last sync, by workload (on a relist too, e.g. after a restart:
  // those that finished while no leader was charging are charged from accountedUntil). mu_
  std::map<std::string, budget::Hold> finished_;
  // Holds seen by the listener since the last sync, by workload. mu_
  std::map<std::string, std::vector<budget::Hold>> seen_;
  std::atomic<bool> active_{false};  // Run is accounting: the listeners keep what they see
  std::condition_variable wake_;
  bool dirty_ = false;  // a Budget changed; mu_
  std::atomic<bool> synced_{false};
};

}  // namespace rota::controller
