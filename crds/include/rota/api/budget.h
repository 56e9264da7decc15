#pragma once

// rota's Budget (rota.dev/v1alpha1, cluster-scoped): a cap on the GPU-hours a ClusterQueue, or
// every ClusterQueue under a Cohort, may use in a window (docs/budgets.md). rota charges each
// admitted workload's resources for the time it holds them and keeps the running total in the
// Budget's status, so that a restart or a new leader goes on from `accountedUntil`.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rota/admission/quantity.h"
#include "rota/admission/status.h"
#include "rota/api/codec.h"
#include "rota/api/kueue.h"
#include "rota/api/meta.h"

namespace rota::api {

inline constexpr std::string_view kRotaGroup = "rota.dev";
inline constexpr std::string_view kBudgetVersion = "v1alpha1";
inline constexpr std::string_view kBudgetApiVersion = "rota.dev/v1alpha1";
// The resource a budget's `weights` convert into (GPU-equivalents).
inline constexpr std::string_view kGpuResource = "nvidia.com/gpu";

enum class CalendarPeriod { kDaily, kWeekly, kMonthly, kQuarterly };
template <>
struct EnumNames<CalendarPeriod> {
  static constexpr std::pair<CalendarPeriod, std::string_view> kValues[] = {{CalendarPeriod::kDaily, "Daily"},
                                                                            {CalendarPeriod::kWeekly, "Weekly"},
                                                                            {CalendarPeriod::kMonthly, "Monthly"},
                                                                            {CalendarPeriod::kQuarterly, "Quarterly"}};
};

// Exactly one of `calendar` and `rolling`.
struct BudgetWindow {
  std::optional<CalendarPeriod> calendar;
  std::string time_zone = "UTC";  // an IANA name, for calendar windows
  std::string rolling;            // a Go duration ("168h"): the last that long
  Extra extra;

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("calendar", s.calendar);
    v.Optional("timeZone", s.time_zone);
    v.Optional("rolling", s.rolling);
  }
};

struct BudgetLimit {
  std::string resource;
  Quantity hours;
  Extra extra;

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Required("resource", s.resource);
    v.Required("hours", s.hours);
  }
};

enum class WhenExhausted { kHold, kBestEffort };
template <>
struct EnumNames<WhenExhausted> {
  static constexpr std::pair<WhenExhausted, std::string_view> kValues[] = {{WhenExhausted::kHold, "Hold"},
                                                                           {WhenExhausted::kBestEffort, "BestEffort"}};
};

struct BudgetSpec {
  std::string cluster_queue;  // exactly one of clusterQueue and cohort
  std::string cohort;         // every ClusterQueue in the cohort's subtree
  BudgetWindow window;
  std::vector<BudgetLimit> limits;
  // resource -> GPU-equivalents per unit, added to the limit on nvidia.com/gpu.
  std::map<std::string, Quantity> weights;
  WhenExhausted when_exhausted = WhenExhausted::kHold;
  int32_t warn_at = 80;      // percent
  bool require_fit = false;  // a workload whose maximumExecutionTimeSeconds x resources exceeds what remains waits
  // Evict the running workloads it charges once it is used up (Evicted, reason BudgetExhausted).
  bool stop_running = false;
  Extra extra;

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("clusterQueue", s.cluster_queue);
    v.Optional("cohort", s.cohort);
    v.Required("window", s.window);
    v.Required("limits", s.limits);
    v.Optional("weights", s.weights);
    v.Optional("whenExhausted", s.when_exhausted);
    v.Optional("warnAt", s.warn_at);
    v.Optional("requireFit", s.require_fit);
    v.Optional("stopRunning", s.stop_running);
  }
};

// Hours as a decimal string ("4211.5"), in status.
struct BudgetUsage {
  std::string resource;
  std::string hours;
  Extra extra;

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Required("resource", s.resource);
    v.Required("hours", s.hours);
  }
};

// A rolling window's usage from `start` for the bucket's width.
struct UsageBucket {
  std::string start;  // RFC 3339
  std::vector<BudgetUsage> used;
  Extra extra;

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Required("start", s.start);
    v.Optional("used", s.used);
  }
};

struct BudgetStatus {
  std::string window_start, window_end, accounted_until;  // RFC 3339
  std::vector<BudgetUsage> used;
  std::vector<UsageBucket> buckets;     // rolling windows only
  std::optional<int32_t> percent_used;  // the largest used/limit over the limits, for `kubectl get`
  std::vector<Condition> conditions;
  Extra extra;

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("windowStart", s.window_start);
    v.Optional("windowEnd", s.window_end);
    v.Optional("accountedUntil", s.accounted_until);
    v.Optional("used", s.used);
    v.Optional("buckets", s.buckets);
    v.Optional("percentUsed", s.percent_used);
    v.Optional("conditions", s.conditions);
  }
};

namespace budget_condition {
inline constexpr std::string_view kExhausted = "Exhausted";
inline constexpr std::string_view kWarning = "Warning";
}  // namespace budget_condition
// The pending reason (and preemption reason) of a workload held back by a budget.
inline constexpr std::string_view kBudgetExhaustedReason = "BudgetExhausted";

struct Budget {
  static constexpr std::string_view kKind = "Budget";
  static constexpr bool kNamespaced = false;
  static constexpr std::string_view kApiVersion = kBudgetApiVersion;
  ObjectMeta metadata;
  BudgetSpec spec;
  std::optional<BudgetStatus> status;
  Extra extra;

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("metadata", s.metadata);
    v.Required("spec", s.spec);
    v.Optional("status", s.status);
  }
};

// What one Budget does to the admission of a ClusterQueue's workloads, as rota's accounting
// found it (controller/budget): snapshot data, so that the engine, `rota simulate` and replay
// decide the same way from it.
struct BudgetGate {
  std::string budget;  // its name
  WhenExhausted when_exhausted = WhenExhausted::kHold;
  bool exhausted = false;
  // Why a workload waits while it is exhausted (reason BudgetExhausted): a sentence a person can
  // act on, which stays the same while the budget stays exhausted.
  std::string message;
  // BestEffort: workloads admitted at or after this (Unix seconds) are best effort, the first
  // victims; 0 while it is not exhausted.
  int64_t exhausted_since = 0;
  // requireFit: per limit resource, what remains (milli GPU-seconds) and what each resource
  // counts toward it (milli GPU-equivalents per unit). Empty without requireFit.
  struct Pool {
    int64_t remaining = 0;
    std::map<std::string, int64_t> weights_milli;
    friend bool operator==(const Pool&, const Pool&) = default;
  };
  std::map<std::string, Pool> fit_pools;
  std::string fit_message;  // the words of a workload that does not fit (e.g. "3.5 GPU-hours left")
  friend bool operator==(const BudgetGate&, const BudgetGate&) = default;
};

// What a Budget's spec must satisfy beyond its schema (the webhook's and rota's own check): one
// of clusterQueue and cohort, one of calendar and rolling (the time zone is checked where the
// time zone database is: budget::ValidateBudget), a rolling duration of at least a minute, limits on
// distinct resources with hours > 0, weights >= 0 and not on nvidia.com/gpu itself, warnAt in
// 1..100. Errors name the field ("spec.limits[1].hours: must be more than 0").
Status ValidateBudgetSpec(const BudgetSpec& spec);

// Hours with at most 4 decimals and no trailing zeros ("4211.5", "0.0125", "0").
std::string FormatHours(double hours);
// The other way round; an error names `field`.
Result<double> ParseHours(const std::string& text, const std::string& field);

}  // namespace rota::api
