#pragma once

// The scheduling loop's side of what people read: after every pass, the recent admissions and
// preemptions (kept, a few hundred), and a pending view when the board wants one (with run
// times from the history of finished workloads).

#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "queue_controller.h"
#include "visibility/board.h"
#include "visibility/run_times.h"

namespace rota::visibility {

struct Activity {
  int64_t time = 0;  // Unix seconds
  std::string kind;  // Admitted, Preempted
  std::string workload, cluster_queue, detail;
};

class ViewPublisher : public controller::PassObserver {
 public:
  ViewPublisher(VisibilityBoard& board, const RunTimeHistory& history, size_t keep = 200)
      : board_(board), history_(history), keep_(keep) {}
  void Observe(const api::SnapshotBuilder& snapshot, const admission::Decisions& d, int64_t now) override;
  // The newest first. Any thread.
  std::vector<Activity> Recent(size_t n) const;

 private:
  VisibilityBoard& board_;
  const RunTimeHistory& history_;
  const size_t keep_;
  mutable std::mutex mu_;
  std::deque<Activity> recent_;  // oldest first
};

}  // namespace rota::visibility
