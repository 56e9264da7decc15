#pragma once

// Workload status as rota writes it (Kueue's pkg/workload): the bodies of the server-side apply
// patches for an admission, a preemption, an eviction by a stopped queue and a pending reason.
// Pure functions of the cached Workload and the decision; `now` is the RFC 3339 time given to a
// condition whose status changes.

#include <optional>
#include <string>
#include <vector>

#include "rota/admission/engine.h"
#include "rota/api/kueue.h"

namespace rota::controller {

// A Workload status write: the object and the apply body.
struct WorkloadWrite {
  std::string ns, name;
  api::Json body;
  // For an admission or eviction, what the cache will hold once the write is back (the admission
  // set, or nullopt when cleared): the pass assumes it until then. Unset for a pending reason.
  std::optional<std::optional<api::Admission>> assume;
  std::string key() const { return ns + "/" + name; }
};

WorkloadWrite AdmitWrite(const api::Workload& w, const admission::AdmitDecision& d, const std::string& now);
WorkloadWrite PreemptWrite(const api::Workload& w, const admission::PreemptDecision& p, const std::string& now);
// The checkpoint handshake's condition (checkpoint/requests.h), set with a write.
struct CheckpointCondition {
  std::string status;  // True / False
  std::string reason;
  std::string message;
};

// A preemption whose victim keeps its quota until its pods are gone (preemption_hold.h): Evicted
// and Preempted set, the admission and QuotaReserved as they are. Assumes nothing. After a
// checkpoint handshake, `checkpoint` closes its request.
WorkloadWrite EvictWrite(const api::Workload& w, const admission::PreemptDecision& p, const std::string& now,
                         const CheckpointCondition* checkpoint = nullptr);
// PreemptWrite after a checkpoint handshake (a victim with no pods to stop).
WorkloadWrite PreemptWrite(const api::Workload& w, const admission::PreemptDecision& p, const std::string& now,
                           const CheckpointCondition& checkpoint);
// Only the CheckpointRequested condition changes (a request, or its withdrawal); the admission
// is applied as it is.
WorkloadWrite CheckpointWrite(const api::Workload& w, const CheckpointCondition& checkpoint, const std::string& now);
// Evicted because its ClusterQueue (`by_cluster_queue`) or its LocalQueue has stopPolicy
// HoldAndDrain. A workload with pods to stop (`keep_quota`) keeps its admission, as a preempted
// one does, until they are gone (jobs/quota_release.h); another gives it back at once.
WorkloadWrite DrainWrite(const api::Workload& w, bool by_cluster_queue, const std::string& now,
                         bool keep_quota = false);
WorkloadWrite PendingWrite(const api::Workload& w, const std::string& reason, const std::string& message,
                           const std::string& now);

// The Workload's condition of `type`, or null (also when it has no status).
const api::Condition* WorkloadCondition(const api::Workload& w, std::string_view type);

// Kueue's message for a preemption: "Preempted to accommodate workload X due to ...".
std::string PreemptionMessage(const admission::PreemptDecision& p);

// An amount as the apiserver prints the request it came from: byte-sized resources in binary SI
// ("256Gi"), the rest in decimal SI ("64", "500m").
std::string FormatAmount(const std::string& resource, int64_t milli);

}  // namespace rota::controller
