#include "soak/fault_schedule.h"

#include <algorithm>
#include <random>

namespace rota::soak {

std::string ToString(FaultKind kind) {
  switch (kind) {
    case FaultKind::kKillLeader:
      return "kill -9 of the leader";
    case FaultKind::kStopLeader:
      return "SIGSTOP of the leader past its lease";
    case FaultKind::kRestartApiserver:
      return "kube-apiserver restart";
    case FaultKind::kCompactEtcd:
      return "etcd compaction (watches get 410)";
    case FaultKind::kStallProxy:
      return "proxy stall";
    case FaultKind::kCutProxy:
      return "proxy cut";
    case FaultKind::kFreezeProxy:
      return "proxy freeze (open connections fall silent)";
  }
  return "?";
}

std::vector<Fault> MakeSchedule(uint64_t seed, const ScheduleOptions& o) {
  std::mt19937_64 rng(seed);
  auto between = [&rng](std::chrono::seconds lo, std::chrono::seconds hi) {
    return std::chrono::seconds(std::uniform_int_distribution<int64_t>(lo.count(), hi.count())(rng));
  };
  std::vector<FaultKind> kinds(std::begin(kAllFaultKinds), std::end(kAllFaultKinds));
  std::shuffle(kinds.begin(), kinds.end(), rng);
  std::vector<Fault> out;
  std::chrono::seconds planned{0};
  for (size_t i = 0;; ++i) {
    const FaultKind kind =
        i < kinds.size() ? kinds[i]
                         : kAllFaultKinds[std::uniform_int_distribution<size_t>(0, std::size(kAllFaultKinds) - 1)(rng)];
    Fault f{between(o.gap_min, o.gap_max), kind, std::chrono::seconds(0)};
    if (kind == FaultKind::kStallProxy) f.length = between(o.stall_min, o.stall_max);
    if (kind == FaultKind::kStopLeader) f.length = o.stop_length;
    const std::chrono::seconds cost = f.gap + f.length + o.expected_recovery;
    // The first round goes in whatever the duration, so that every kind is tried.
    if (i >= kinds.size() && planned + cost > o.duration) break;
    planned += cost;
    out.push_back(f);
  }
  return out;
}

}  // namespace rota::soak
