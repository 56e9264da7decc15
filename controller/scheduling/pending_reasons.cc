#include "scheduling/pending_reasons.h"

namespace rota::controller {
namespace {

namespace wc = api::workload_condition;

void WakeAt(std::optional<PendingReasons::TimePoint>& wake, PendingReasons::TimePoint due) {
  if (!wake || due < *wake) wake = due;
}

}  // namespace

bool PendingReasons::HeadDue(const admission::WorkloadSpec& spec, TimePoint pass_start, Result& out) {
  auto was = heads_.find(spec.cluster_queue);
  const TimePoint since = was != heads_.end() && was->second.key == spec.key ? was->second.since : pass_start;
  next_heads_.emplace(spec.cluster_queue, Head{spec.key, since});
  if (pass_start - since >= tuning_.first_pending_delay) return true;
  WakeAt(out.wake, since + tuning_.first_pending_delay);
  return false;
}

std::optional<WorkloadWrite> PendingReasons::ReasonFor(const admission::PendingDecision& p, const api::Workload& w,
                                                       const AssumedAdmissions& assumed, TimePoint pass_start,
                                                       int64_t now_seconds, const std::string& now, size_t& room,
                                                       Result& out) {
  if (w.status && w.status->admission) return std::nullopt;  // evicted this pass; its write is elsewhere
  const api::Condition* qr = WorkloadCondition(w, wc::kQuotaReserved);
  const bool pending = qr && qr->status == api::ConditionStatus::kFalse;
  if (pending && qr->reason == p.reason && qr->message == p.message) return std::nullopt;  // as written
  const std::string key = w.metadata.namespace_ + "/" + w.metadata.name;
  // Our eviction of it is not in the cache yet: its cached conditions are stale, and a pending
  // condition built on them would undo the eviction's.
  if (assumed.Contains(key)) return std::nullopt;
  const bool same_reason = pending && qr->reason == p.reason;
  auto last = written_.find(key);
  if (last != written_.end() && last->second.reason == p.reason && last->second.message == p.message &&
      pass_start - last->second.at < tuning_.pending_settle) {
    return std::nullopt;  // queued or written, and not yet seen back
  }
  if (!qr) {
    auto created = api::ParseTime(w.metadata.creation_timestamp);
    if (created.ok() && now_seconds - *created < tuning_.first_pending_delay.count()) {
      WakeAt(out.wake, pass_start + tuning_.first_pending_delay);
      return std::nullopt;
    }
  } else if (same_reason && last != written_.end() && pass_start - last->second.at < tuning_.pending_message_interval) {
    WakeAt(out.wake, last->second.at + tuning_.pending_message_interval);
    return std::nullopt;
  }
  if (room == 0) {
    WakeAt(out.wake, pass_start + tuning_.pending_retry);  // the writer is behind: try again shortly
    return std::nullopt;
  }
  --room;
  if (!pending)
    ++out.first;
  else if (same_reason)
    ++out.new_message;
  else
    ++out.new_reason;
  written_[key] = {pass_start, std::string(p.reason), std::string(p.message)};
  return PendingWrite(w, std::string(p.reason), std::string(p.message), now);
}

PendingReasons::Result PendingReasons::Decide(const admission::Decisions& d, const api::SnapshotBuilder& builder,
                                              const AssumedAdmissions& assumed, TimePoint pass_start,
                                              int64_t now_seconds, const std::string& now, size_t room) {
  Result out;
  next_heads_.clear();
  for (const auto& p : d.pending) {
    if (p.reason == "WaitingForQuota") {
      if (p.position != 0) continue;
      if (!HeadDue(builder.snapshot().workloads[p.index], pass_start, out)) continue;
    }
    auto write = ReasonFor(p, builder.ObjectAt(p.index), assumed, pass_start, now_seconds, now, room, out);
    if (write) out.writes.push_back(std::move(*write));
  }
  // A pass that stopped at its limit did not reach every queue's head: the heads it did not
  // reach keep the time they became heads.
  if (d.not_considered > 0) next_heads_.insert(heads_.begin(), heads_.end());
  heads_.swap(next_heads_);
  return out;
}

}  // namespace rota::controller
