#pragma once

// One Budget's usage (issue 39): GPU-hours charged to the workloads that hold quota in the
// budget's ClusterQueues, by window. A value class with no clock, I/O or logging: the caller
// passes the holds and the time to account up to, and writes ToStatus() to the Budget's status,
// from which Resume() goes on after a restart without counting any time twice.
//
// Not thread-safe: one owner (the budget controller's pass) at a time.

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "budget/window.h"
#include "rota/admission/status.h"
#include "rota/api/budget.h"

namespace rota::controller::budget {

// One workload's hold on quota: its admitted resources summed over its pod sets, in milli-units
// (2 GPUs = 2000), from admission at `start` until `end` (INT64_MAX while it still holds them).
struct Hold {
  std::string key;  // namespace/name
  std::string cluster_queue;
  std::map<std::string, int64_t> usage_milli;
  int64_t start = 0;
  int64_t end = std::numeric_limits<int64_t>::max();
};

// GPU-equivalent units charged per hour of holding `usage_milli` toward the limit on
// `limit_resource`: the usage of that resource, plus, for the limit on nvidia.com/gpu only, each
// weighted resource's usage times its weight in spec.weights.
double ChargeOf(const api::BudgetSpec& spec, const std::string& limit_resource,
                const std::map<std::string, int64_t>& usage_milli);

class Ledger {
 public:
  // The ledger of `budget` as its status left it. Without a status (or accountedUntil) it starts
  // empty at the budget's creation (metadata.creationTimestamp), or at `now_ms` when that is
  // unknown or later. A calendar status whose windowStart/windowEnd are not the window at
  // accountedUntil (the spec's period or zone changed) starts the new window at 0. A rolling
  // window's usage is its buckets' (status.used is not read), re-aligned to the bucket width.
  // Errors: the spec's (ValidateBudget), or a status field that does not parse, named
  // ("status.used[0].hours: ...").
  static Result<Ledger> Resume(const api::Budget& budget, int64_t now_ms);

  // Charges `holds` (the budget's queues' holds only) for [accounted_until(), until_ms), then
  // accounted_until() = until_ms. A hold admitted before the budget was created is not charged:
  // the budget applies to workloads admitted after it. Calendar usage starts again at 0 when a
  // window ends; rolling buckets that have left the window are dropped. Does nothing when
  // until_ms <= accounted_until(), so charging up to the same time twice counts it once.
  void ChargeUntil(const std::vector<Hold>& holds, int64_t until_ms);

  // Per limit resource, the hours used in the window as of accounted_until(). A rolling window
  // counts whole buckets: the oldest one may have started up to a bucket width before the window.
  std::map<std::string, double> Used() const;
  // Calendar: the period at accounted_until(). Rolling: from accounted_until() - rolling until the
  // oldest usage leaves the window (accounted_until() + rolling when there is none).
  Window CurrentWindow() const;
  int64_t accounted_until() const { return accounted_until_; }

  // Whether any limit is used up (used >= hours).
  bool Exhausted() const;
  // The largest used/hours over the limits, as a whole percent rounded down.
  int PercentUsed() const;
  // Per limit resource, hours - used, at least 0.
  std::map<std::string, double> Remaining() const;

  // `previous` with the window, accountedUntil (RFC 3339; with milliseconds when not whole
  // seconds), used[] in the order of spec.limits, percentUsed and, for rolling windows, the
  // buckets in start order with their nonzero usage. Conditions and unknown fields are kept.
  api::BudgetStatus ToStatus(const api::BudgetStatus& previous) const;

 private:
  using Usage = std::map<std::string, double>;  // limit resource -> hours

  explicit Ledger(api::BudgetSpec spec) : spec_(std::move(spec)) {}
  Status ResumeCalendar(const api::BudgetStatus& status);
  Status ResumeRolling(const api::BudgetStatus& status);
  void ChargeCalendar(const std::vector<Hold>& holds, int64_t until_ms);
  void ChargeRolling(const std::vector<Hold>& holds, int64_t until_ms);
  // Adds each hold's charge for its overlap with [from, to) to `usage`.
  void Charge(const std::vector<Hold>& holds, int64_t from, int64_t to, Usage& usage) const;
  Window WindowAt(int64_t t_ms) const;
  bool Expired(int64_t bucket_start, int64_t as_of) const;

  api::BudgetSpec spec_;
  int64_t creation_ms_ = 0;
  int64_t accounted_until_ = 0;
  int64_t rolling_ms_ = 0;  // 0 for a calendar window
  int64_t bucket_ms_ = 0;
  Window window_;                     // calendar: the window at accounted_until_
  Usage used_;                        // calendar: usage in window_
  std::map<int64_t, Usage> buckets_;  // rolling: bucket start -> usage
};

}  // namespace rota::controller::budget
