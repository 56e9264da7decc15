#pragma once

// Only the leader schedules, so only it can answer the visibility API. In a cluster, its pod
// carries the label rota.dev/leader: "true", and the Service the APIService names selects it
// (config/visibility): rota labels its own pod (POD_NAME and POD_NAMESPACE from the downward API)
// when it takes the lease, and unlabels it when it starts, since a container restarted in the same
// pod finds the label of its previous run. Outside a pod (no POD_NAME), nothing is done.

#include <string>

#include "logger.h"
#include "rota/apiclient/client.h"

namespace rota::visibility {

inline constexpr const char* kLeaderLabel = "rota.dev/leader";

void LabelOwnPod(apiclient::Client& client, bool leader, const controller::Logger& log);

}  // namespace rota::visibility
