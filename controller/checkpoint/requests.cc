#include "checkpoint/requests.h"

#include <algorithm>

#include "rota/api/checkpoint.h"

namespace rota::controller {
namespace {

namespace wc = api::workload_condition;
using admission::PreemptionReason;

constexpr std::string_view kByPrefix = "; asked to checkpoint by ";

PreemptionReason ReasonNamed(const std::string& name) {
  for (PreemptionReason r :
       {PreemptionReason::kInClusterQueue, PreemptionReason::kInCohortReclamation,
        PreemptionReason::kInCohortReclaimWhileBorrowing, PreemptionReason::kInCohortFairSharing}) {
    if (name == admission::ToString(r)) return r;
  }
  return PreemptionReason::kInClusterQueue;
}

bool Admitted(const api::Workload& w) {
  const api::Condition* evicted = WorkloadCondition(w, wc::kEvicted);
  return w.status && w.status->admission && !(evicted && evicted->status == api::ConditionStatus::kTrue);
}

const std::string& Texts(admission::Decisions& d, std::string text) { return d.texts.emplace_back(std::move(text)); }

}  // namespace

std::string CheckpointRequestMessage(const admission::PreemptDecision& p, int64_t deadline) {
  return PreemptionMessage(p) + std::string(kByPrefix) + api::FormatTime(deadline);
}

std::optional<CheckpointRequest> OpenCheckpointRequest(const api::Workload& w) {
  const api::Condition* c = WorkloadCondition(w, wc::kCheckpointRequested);
  if (!c || c->status != api::ConditionStatus::kTrue) return std::nullopt;
  CheckpointRequest r;
  r.reason = ReasonNamed(c->reason);
  auto at = api::ParseTime(c->last_transition_time);
  r.requested_at = at.ok() ? *at : 0;
  // "Preempted to accommodate workload <ns/name> due to ...; asked to checkpoint by <time>"
  constexpr std::string_view kWorkload = "workload ";
  const size_t from = c->message.find(kWorkload);
  const size_t due = c->message.find(" due to ", from);
  if (from != std::string::npos && due != std::string::npos)
    r.preemptor = c->message.substr(from + kWorkload.size(), due - from - kWorkload.size());
  const size_t by = c->message.rfind(kByPrefix);
  auto deadline = by == std::string::npos ? Result<int64_t>(InvalidArgument("no deadline"))
                                          : api::ParseTime(c->message.substr(by + kByPrefix.size()));
  // (A message rota did not write leaves the request to end at once: it cannot be waited for.)
  r.deadline = deadline.ok() ? *deadline : r.requested_at;
  return r;
}

std::chrono::seconds CheckpointTimeout(const api::Workload& w, const CheckpointTimeouts& timeouts) {
  const std::string text = api::AnnotationOr(w.metadata.annotations, api::kCheckpointTimeoutAnnotation);
  if (text.empty()) return timeouts.default_timeout;
  auto millis = api::ParseGoDuration(text);
  if (!millis.ok() || *millis <= 0) return timeouts.default_timeout;
  return std::min(std::chrono::duration_cast<std::chrono::seconds>(std::chrono::milliseconds(*millis)),
                  timeouts.max_timeout);
}

void CheckpointRequests::Observe(const api::Workload& w) {
  const api::Condition* c = WorkloadCondition(w, wc::kCheckpointRequested);
  const std::string key = w.metadata.namespace_ + "/" + w.metadata.name;
  std::lock_guard<std::mutex> l(mu_);
  if (c && c->status == api::ConditionStatus::kTrue)
    observed_.insert(key);
  else
    observed_.erase(key);
}

void CheckpointRequests::Adopt(const api::SnapshotBuilder& builder) {
  std::set<std::string> observed;
  {
    std::lock_guard<std::mutex> l(mu_);
    observed = observed_;
  }
  // A closed request stays closed until the cache shows it so. A Workload that finished or went
  // away is forgotten (the cache's last word on it may still show its request).
  std::vector<std::string> gone;
  for (const std::string& key : observed)
    if (!builder.Object(key)) gone.push_back(key);
  if (!gone.empty()) {
    std::lock_guard<std::mutex> l(mu_);
    for (const std::string& key : gone) observed_.erase(key);
  }
  for (const std::string& key : gone) observed.erase(key);
  std::erase_if(closing_, [&](const std::string& key) { return !observed.count(key); });
  for (const std::string& key : observed) {
    if (requests_.count(key) || closing_.count(key)) continue;
    const api::Workload* w = builder.Object(key);
    auto r = OpenCheckpointRequest(*w);
    if (!r) continue;
    requests_[key] = {*r, w->status && w->status->admission ? w->status->admission->cluster_queue : ""};
  }
}

void CheckpointRequests::MarkOpen(api::SnapshotBuilder& builder) {
  Adopt(builder);
  for (const auto& [key, open] : requests_) {
    const admission::WorkloadSpec* spec = builder.Find(key);
    if (spec && spec->admission && !spec->evicted) builder.Mutable(key)->evicted = true;
  }
}

void CheckpointRequests::WriteFailed(const std::string& key) {
  closing_.erase(key);
  requests_.erase(key);  // (an open one is found again in the cache, if it was written)
}

void CheckpointRequests::Ask(admission::Decisions& d, HeldPreemptions& held, const api::SnapshotBuilder& builder,
                             int64_t now, const std::string& now_text, CheckpointPass& out) {
  std::erase_if(d.preempted, [&](const admission::PreemptDecision& p) {
    if (!held.victims.count(p.workload) || requests_.count(p.workload) || closing_.count(p.workload)) return false;
    const api::Workload* w = builder.Object(p.workload);
    if (!w || !api::Checkpointable(w->metadata.annotations)) return false;
    const int64_t deadline = now + CheckpointTimeout(*w, timeouts_).count();
    const std::string message = CheckpointRequestMessage(p, deadline);
    out.writes.push_back(CheckpointWrite(*w, {"True", admission::ToString(p.reason), message}, now_text));
    requests_[p.workload] = {{p.preemptor, p.reason, now, deadline}, p.cluster_queue};
    out.outcomes.push_back({p.workload, p.cluster_queue, "requested", message, 0});
    held.victims.erase(p.workload);
    return true;
  });
}

bool CheckpointRequests::Settle(const std::string& key, const Open& open, admission::Decisions& d,
                                HeldPreemptions& held, PreemptionHold& hold, const api::SnapshotBuilder& builder,
                                int64_t now, const std::string& now_text,
                                const std::function<bool(const std::string& key)>& has_pods, CheckpointPass& out) {
  const CheckpointRequest& r = open.request;
  const api::Workload* w = builder.Object(key);
  const admission::WorkloadSpec* spec = builder.Find(key);
  if (!w || !spec) return true;  // gone
  auto tell = [&](CheckpointPass::Outcome o) {
    if (told_.size() > 4096) told_.clear();  // (bounded: at worst an outcome is told twice)
    auto [it, first] = told_.try_emplace(key, r.requested_at);
    if (!first && it->second == r.requested_at) return;
    it->second = r.requested_at;
    out.outcomes.push_back(std::move(o));
  };
  auto cancel = [&](const std::string& why) {
    out.writes.push_back(CheckpointWrite(*w, {"False", "Cancelled", why}, now_text));
    tell({key, open.cluster_queue, "cancelled", why, 0});
    return true;
  };
  if (!Admitted(*w)) return cancel("Evicted for another reason before it checkpointed");
  const admission::WorkloadSpec* preemptor = builder.Find(r.preemptor);
  const bool admitted_now = std::any_of(d.admitted.begin(), d.admitted.end(),
                                        [&](const admission::AdmitDecision& a) { return a.workload == r.preemptor; });
  if (!preemptor) return cancel("Its preemptor " + r.preemptor + " no longer exists");
  if (preemptor->admission || admitted_now) return cancel("Its preemptor " + r.preemptor + " was admitted without it");
  if (held.preemptor == r.preemptor && !held.chosen.count(key))
    return cancel("Its preemptor " + r.preemptor + " no longer needs it");
  CheckpointCondition closed;
  std::string result;
  if (spec->last_checkpoint >= r.requested_at && spec->last_checkpoint > 0) {
    closed = {"False", "Checkpointed", "Checkpoint saved at " + api::FormatTime(spec->last_checkpoint)};
    result = "acknowledged";
  } else if (now >= r.deadline) {
    closed = {"False", "CheckpointTimeout", "No checkpoint by the deadline " + api::FormatTime(r.deadline)};
    result = "timed_out";
  } else {
    return false;  // still waiting (Decide takes the earliest deadline of those left)
  }
  auto chosen = held.chosen.find(key);
  const admission::PreemptDecision p{key, r.preemptor, open.cluster_queue,
                                     chosen != held.chosen.end() ? chosen->second : r.reason};
  d.preempted.push_back(p);
  if (has_pods(key)) held.victims.insert(key);
  hold.Promise(key, r.preemptor);
  out.closing[key] = closed;
  tell({key, open.cluster_queue, result, closed.message,
        static_cast<double>(std::max<int64_t>(0, now - r.requested_at))});
  return true;
}

CheckpointPass CheckpointRequests::Decide(admission::Decisions& d, HeldPreemptions& held, PreemptionHold& hold,
                                          const api::SnapshotBuilder& builder, int64_t now, const std::string& now_text,
                                          const std::function<bool(const std::string& key)>& has_pods) {
  CheckpointPass out;
  for (auto it = requests_.begin(); it != requests_.end();) {
    if (Settle(it->first, it->second, d, held, hold, builder, now, now_text, has_pods, out)) {
      closing_.insert(it->first);
      it = requests_.erase(it);
    } else {
      ++it;
    }
  }
  Ask(d, held, builder, now, now_text, out);
  for (const auto& [key, open] : requests_)
    out.next_deadline = std::min(out.next_deadline.value_or(open.request.deadline), open.request.deadline);
  TellPreemptor(d, held);
  return out;
}

void CheckpointRequests::TellPreemptor(admission::Decisions& d, const HeldPreemptions& held) const {
  if (held.preemptor.empty()) return;
  size_t waiting = 0;
  int64_t deadline = 0;
  for (const auto& [key, open] : requests_) {
    if (open.request.preemptor != held.preemptor && !held.chosen.count(key)) continue;
    ++waiting;
    deadline = std::max(deadline, open.request.deadline);
  }
  if (waiting == 0) return;
  for (auto it = d.pending.rbegin(); it != d.pending.rend(); ++it) {
    if (it->workload != held.preemptor) continue;
    it->message = Texts(d, "waiting for " + std::to_string(waiting) + " workload(s) to checkpoint (deadline " +
                               api::FormatTime(deadline) + ")");
    return;
  }
}

}  // namespace rota::controller
