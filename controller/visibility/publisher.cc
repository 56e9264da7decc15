#include "visibility/publisher.h"

namespace rota::visibility {

void ViewPublisher::Observe(const api::SnapshotBuilder& snapshot, const admission::Decisions& d, int64_t now) {
  if (!d.admitted.empty() || !d.preempted.empty()) {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& a : d.admitted)
      recent_.push_back({now, "Admitted", a.workload, a.cluster_queue, a.borrowing ? "borrowing" : ""});
    for (const auto& p : d.preempted)
      recent_.push_back(
          {now, "Preempted", p.workload, p.cluster_queue, "by " + p.preemptor + ": " + admission::ToString(p.reason)});
    while (recent_.size() > keep_) recent_.pop_front();
  }
  if (board_.Wanted())
    board_.Post(std::make_shared<const PendingView>(MakePendingView(snapshot, d, history_, now, board_.NextVersion())));
}

std::vector<Activity> ViewPublisher::Recent(size_t n) const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<Activity> out;
  for (auto it = recent_.rbegin(); it != recent_.rend() && out.size() < n; ++it) out.push_back(*it);
  return out;
}

}  // namespace rota::visibility
