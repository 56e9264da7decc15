#pragma once

// Which pending workloads get their pending reason written this pass (Kueue writes one when a
// workload is tried and does not fit). Reasons are for people, and must not crowd out admissions
// at the apiserver: a deep queue must not cost a status write per waiting workload, nor a busy
// queue one per workload passing through its head. So:
// - A workload waiting for quota gets its reason once it has been the head of its ClusterQueue
//   for `first_pending_delay`; the others wait behind it without one.
// - Reasons particular to a workload (no such LocalQueue, more than the quota can ever give, ...)
//   are written whatever its place, but a new workload's first one waits `first_pending_delay`.
// - The same reason with a new message is rewritten at most every `pending_message_interval`; a
//   new reason is written at once; one queued or written is not queued again for
//   `pending_settle`; at most `room` are queued per pass.
// A reason that is not written yet asks for a pass when it comes due (Result::wake).
//
// Loop thread only.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "rota/admission/engine.h"
#include "rota/api/snapshot.h"
#include "scheduling/assumed_admissions.h"
#include "scheduling/tuning.h"
#include "scheduling/workload_status.h"

namespace rota::controller {

class PendingReasons {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  explicit PendingReasons(const SchedulingTuning& tuning) : tuning_(tuning) {}

  struct Result {
    std::vector<WorkloadWrite> writes;
    std::optional<TimePoint> wake;  // when the first reason held back comes due
    // Of `writes`: a workload's first reason, a new reason, the same reason with a new message.
    int64_t first = 0, new_reason = 0, new_message = 0;
  };
  // The reasons to write for this pass's pending decisions, over the snapshot `builder` built
  // (whose objects give each workload's current condition). `pass_start` is the loop's time,
  // `now_seconds` the wall time in seconds and `now` as RFC 3339; `assumed` workloads are
  // skipped (their cached conditions are stale until our write comes back); at most `room`.
  Result Decide(const admission::Decisions& d, const api::SnapshotBuilder& builder, const AssumedAdmissions& assumed,
                TimePoint pass_start, int64_t now_seconds, const std::string& now, size_t room);
  // A reason is new again: its write failed, or the workload was admitted or evicted.
  void Forget(const std::string& key) { written_.erase(key); }
  // Forgets the workloads `exists` no longer finds.
  template <typename Exists>
  void ForgetGone(Exists&& exists) {
    std::erase_if(written_, [&](const auto& e) { return !exists(e.first); });
  }

 private:
  // Whether the head of a ClusterQueue waiting for quota has been the head long enough; tracks
  // the heads in `heads`.
  bool HeadDue(const admission::WorkloadSpec& spec, TimePoint pass_start, Result& out);
  // The write for one pending decision, or nullopt when it is not written now.
  std::optional<WorkloadWrite> ReasonFor(const admission::PendingDecision& p, const api::Workload& w,
                                         const AssumedAdmissions& assumed, TimePoint pass_start, int64_t now_seconds,
                                         const std::string& now, size_t& room, Result& out);

  const SchedulingTuning& tuning_;
  // The pending condition last queued for writing, and when, by "namespace/name".
  struct Written {
    TimePoint at;
    std::string reason, message;
  };
  std::map<std::string, Written> written_;
  // Per ClusterQueue: the workload at the head of its queue waiting for quota, and since when.
  struct Head {
    std::string key;
    TimePoint since;
  };
  std::unordered_map<std::string, Head> heads_, next_heads_;
};

}  // namespace rota::controller
