#pragma once

// The soak's faults, on a schedule drawn from a seed so that a failing run can be replayed.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace rota::soak {

enum class FaultKind {
  kKillLeader,        // kill -9 of the replica holding the Lease
  kStopLeader,        // SIGSTOP of the leader for longer than its Lease, then SIGCONT
  kRestartApiserver,  // kube-apiserver stopped and started again
  kCompactEtcd,       // etcd compacted to its head, then every proxied connection cut: watches get 410
  kStallProxy,        // the proxy between rota and the apiserver holds every byte for a while
  kCutProxy,          // the proxy resets every connection
  kFreezeProxy,       // every open connection through the proxy stays open and falls silent
};
inline constexpr FaultKind kAllFaultKinds[] = {
    FaultKind::kKillLeader, FaultKind::kStopLeader, FaultKind::kRestartApiserver, FaultKind::kCompactEtcd,
    FaultKind::kStallProxy, FaultKind::kCutProxy,   FaultKind::kFreezeProxy};
std::string ToString(FaultKind kind);

struct Fault {
  std::chrono::seconds gap;  // quiet time before it, after the previous fault has recovered
  FaultKind kind;
  std::chrono::seconds length;  // how long it lasts (stalls and stops; 0 for the rest)
};

struct ScheduleOptions {
  std::chrono::seconds duration{180};  // faults are planned to fit in this much time
  std::chrono::seconds gap_min{5}, gap_max{15};
  std::chrono::seconds stall_min{3}, stall_max{12};
  std::chrono::seconds stop_length{8};         // longer than the replicas' lease
  std::chrono::seconds expected_recovery{10};  // time planned for each fault's recovery
};

// Every kind once, in an order drawn from `seed`, then kinds drawn at random while the planned
// time (gaps, lengths and expected recoveries) fits in the duration. Same seed, same schedule.
std::vector<Fault> MakeSchedule(uint64_t seed, const ScheduleOptions& options);

}  // namespace rota::soak
