#pragma once

// The checkpoint handshake on the Job's side (docs/checkpoint.md): what rota relays between a
// checkpointable Job's pods and its Workload. Pure functions; JobController does the writes.
// - A trainer reports each checkpoint on its Job or any of its pods (rota.dev/checkpointed-at);
//   the latest report goes to the Workload, where the scheduler reads it (victim choice, and the
//   answer to a request).
// - A request (the Workload's CheckpointRequested=True) goes to every pod of the Job as
//   rota.dev/checkpoint-requested-at, which the pod sees live through a downward API volume; a
//   withdrawn request (Cancelled) is taken off the pods again.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rota/api/kueue.h"

namespace rota::controller {

struct JobInfo;
struct PodInfo;

// The latest checkpoint the Job and its pods report (Unix seconds; 0: none). A report that is not
// an RFC 3339 time is left out.
int64_t LatestCheckpoint(const JobInfo& job, const std::vector<std::shared_ptr<const PodInfo>>& pods);

// The merge patch of annotations that gives the Workload the Job's rota.dev/checkpoint,
// rota.dev/checkpoint-timeout and rota.dev/expected-runtime (null removes one the Job no longer
// has); empty when they agree.
api::Json CheckpointSettingsPatch(const std::map<std::string, std::string>& job,
                                  const std::map<std::string, std::string>& workload);

// The Workload's rota.dev/checkpointed-at, or 0.
int64_t WorkloadCheckpoint(const api::Workload& wl);

// What the pods' rota.dev/checkpoint-requested-at must say: the open request's time (RFC 3339),
// "" to take it off (the request was withdrawn), or nullopt to leave it as it is.
std::optional<std::string> RequestedAtForPods(const api::Workload& wl);

}  // namespace rota::controller
