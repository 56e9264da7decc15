#pragma once

// ClusterQueue and LocalQueue status (Kueue's pkg/controller/core): counts, flavor usage and, for
// a ClusterQueue, its Active condition, from a pass's tally.
//
// Writes happen only when something changed, and a busy queue's status at most once per
// interval (QueueStatusInterval): a change within the interval is held, and the first pass after
// it is due builds the status as it is by then (NextHeld tells the loop when). A queue that has
// just become idle (nothing pending or admitted) or busy again is written at once, since that a
// queue has drained is what people and tools wait for (Kueue's benchmark runner ends its run
// once every ClusterQueue shows it). A queue whose objects and counts are as they were when its
// status was last found up to date is skipped without building its status (a memo by the
// objects' resourceVersions).
//
// Loop thread only.

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "rota/api/snapshot.h"
#include "scheduling/queue_tally.h"
#include "status_writer.h"

namespace rota::controller {

// The status a ClusterQueue should show, or nullopt when its object shows it already.
// `flavors` are the ResourceFlavors that exist; `now` dates a changed Active condition.
std::optional<api::Json> ClusterQueueStatusChange(const api::ClusterQueue& cq, const QueueCounts& c,
                                                  const std::set<std::string>& flavors, const std::string& now);
// The status a LocalQueue should show, or nullopt when it shows it already. `cq` is the
// ClusterQueue it points to, if that exists.
std::optional<api::Json> LocalQueueStatusChange(const api::LocalQueue& lq, const api::ClusterQueue* cq,
                                                const QueueCounts& c);

class QueueStatus {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  struct Pass {
    uint64_t number = 0;
    TimePoint start;                               // the loop's time
    std::string now;                               // wall time, RFC 3339
    std::chrono::steady_clock::duration interval;  // QueueStatusInterval
  };
  // The queue status writes this pass calls for.
  std::vector<StatusWriter::Write> Writes(const api::ClusterState& state, const QueueTally::Result& tally,
                                          const Pass& pass);
  // When the first held status is due, if any is after `after` (one due before the last pass
  // began is one that pass did not get to, and waits for the next).
  std::optional<TimePoint> NextHeld(TimePoint after) const;

 private:
  // What a queue's status was last found up to date with: the versions of the objects it is made
  // from, and the queue's counts.
  struct Memo {
    std::string versions;
    CountsMemo counts;
  };
  struct Written {
    TimePoint at;
    bool idle = false;
  };
  struct Held {
    TimePoint due;
    uint64_t pass = 0;  // the last pass that found the queue changed
  };
  // Whether queue `key` (with objects at `versions`, "" when they have none) needs its status
  // built now: false when its memo says it is up to date, or when it is held.
  bool Wanted(const std::string& key, const std::string& versions, const QueueCounts& c, const Pass& pass);
  // After the status was built: `changed` is nullopt when the object showed it already.
  void Built(const std::string& key, std::string versions, const QueueCounts& c, bool changed, const Pass& pass);
  void ClusterQueueWrites(const api::ClusterState& state, const CountsByName& counts, const Pass& pass,
                          std::vector<StatusWriter::Write>& out);
  void LocalQueueWrites(const api::ClusterState& state, const CountsByName& counts, const Pass& pass,
                        std::vector<StatusWriter::Write>& out);

  std::unordered_map<std::string, Memo> memo_;  // by "clusterqueues/NAME" or "localqueues/NS/NAME"
  std::map<std::string, Written> written_;
  std::map<std::string, Held> held_;
};

}  // namespace rota::controller
