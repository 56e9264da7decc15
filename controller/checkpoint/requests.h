#pragma once

// The checkpoint handshake on the scheduler's side (docs/checkpoint.md). A victim annotated
// rota.dev/checkpoint: "true" is not evicted when a pass chooses it: it is asked to checkpoint
// (condition CheckpointRequested=True, whose message names its preemptor and deadline) and keeps
// its quota, and its preemptor stays pending. A later pass evicts it once its last checkpoint
// (rota.dev/checkpointed-at, copied to the Workload by the Job integration) reaches the request
// time, or once the deadline passes; it withdraws the request (Cancelled) when the preemptor no
// longer needs it. Everything a request is made of is in the Workload, so a restarted rota or a
// new leader carries on with the same requests and deadlines.
//
// Threads: Observe from the cache's threads; everything else from the scheduling loop.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "rota/admission/engine.h"
#include "rota/api/kueue.h"
#include "rota/api/snapshot.h"
#include "scheduling/preemption_hold.h"
#include "scheduling/workload_status.h"

namespace rota::controller {

struct CheckpointTimeouts {
  std::chrono::seconds default_timeout{300};
  std::chrono::seconds max_timeout{1800};
};

// A request as its Workload records it.
struct CheckpointRequest {
  std::string preemptor;
  admission::PreemptionReason reason = admission::PreemptionReason::kInClusterQueue;
  int64_t requested_at = 0;  // Unix seconds
  int64_t deadline = 0;
};

// The CheckpointRequested=True condition's message; OpenCheckpointRequest reads it back.
std::string CheckpointRequestMessage(const admission::PreemptDecision& p, int64_t deadline);
// The open request of `w` (CheckpointRequested=True), or nullopt.
std::optional<CheckpointRequest> OpenCheckpointRequest(const api::Workload& w);
// How long `w` may take to checkpoint: its rota.dev/checkpoint-timeout (at most max_timeout;
// one that cannot be read counts as the default) or default_timeout.
std::chrono::seconds CheckpointTimeout(const api::Workload& w, const CheckpointTimeouts& timeouts);

// What a pass decided about checkpoints, for the controller to write, count and tell.
struct CheckpointPass {
  std::vector<WorkloadWrite> writes;  // requests and withdrawals (evictions go through Decisions)
  // Victims evicted in this pass after their handshake, with the condition closing the request.
  std::map<std::string, CheckpointCondition> closing;
  std::optional<int64_t> next_deadline;  // Unix seconds: when a pass must look again
  struct Outcome {
    std::string workload, cluster_queue;
    std::string result;  // requested, acknowledged, timed_out, cancelled
    std::string message;
    double wait_seconds = 0;  // from the request to the outcome (acknowledged, timed_out)
  };
  std::vector<Outcome> outcomes;
};

class CheckpointRequests {
 public:
  explicit CheckpointRequests(CheckpointTimeouts timeouts) : timeouts_(timeouts) {}

  // Follows the cache: which Workloads show an open request (how a restarted rota finds them).
  void Observe(const api::Workload& w);

  // Before the engine: every victim with an open request is marked `evicted` in the snapshot, a
  // victim of first choice, so that its preemptor chooses it again rather than others.
  void MarkOpen(api::SnapshotBuilder& builder);

  // After PreemptionHold::Hold. New victims of the waiting preemptor that take part in the
  // handshake are taken out of `d.preempted` and `held.victims` and asked; open requests that
  // were answered or timed out become evictions in `d.preempted` (in `held.victims` when
  // `has_pods`, and promised to their preemptor in `hold`); those no longer needed are
  // withdrawn. The waiting preemptor's pending message says what it waits for.
  CheckpointPass Decide(admission::Decisions& d, HeldPreemptions& held, PreemptionHold& hold,
                        const api::SnapshotBuilder& builder, int64_t now, const std::string& now_text,
                        const std::function<bool(const std::string& key)>& has_pods);

  // A write about `key` failed: what it said is decided again.
  void WriteFailed(const std::string& key);

  size_t open() const { return requests_.size(); }

 private:
  struct Open {
    CheckpointRequest request;
    std::string cluster_queue;
  };
  void Adopt(const api::SnapshotBuilder& builder);
  void Ask(admission::Decisions& d, HeldPreemptions& held, const api::SnapshotBuilder& builder, int64_t now,
           const std::string& now_text, CheckpointPass& out);
  // What becomes of one open request in this pass; true when it is closed.
  bool Settle(const std::string& key, const Open& open, admission::Decisions& d, HeldPreemptions& held,
              PreemptionHold& hold, const api::SnapshotBuilder& builder, int64_t now, const std::string& now_text,
              const std::function<bool(const std::string& key)>& has_pods, CheckpointPass& out);
  void TellPreemptor(admission::Decisions& d, const HeldPreemptions& held) const;

  CheckpointTimeouts timeouts_;
  std::map<std::string, Open> requests_;  // victim -> its open request
  std::set<std::string> closing_;         // closed, until the cache shows it
  // The request (victim -> requested_at) whose closing was last told: a close whose write fails
  // (e.g. fenced while the lease is in doubt) is decided again each pass, and told once.
  std::map<std::string, int64_t> told_;
  std::mutex mu_;
  std::set<std::string> observed_;  // guarded by mu_: shown open by the cache
};

}  // namespace rota::controller
