#pragma once

// Kueue's Events on the Workloads whose status a pass queued: QuotaReserved and Admitted for an
// admission, Preempted and Evicted for a preemption, a Warning "Pending" for a pending reason.
// Posted through the recorder, off the scheduling loop (the next pass does not wait for them).

#include <functional>
#include <string>
#include <vector>

#include "rota/admission/engine.h"
#include "rota/api/kueue.h"
#include "rota/apiclient/events.h"
#include "scheduling/workload_status.h"

namespace rota::controller {

// `object_of` finds the Workload a decision is about by key ("namespace/name"), or null.
void PostWorkloadEvents(apiclient::EventRecorder& events, const admission::Decisions& d,
                        const std::vector<WorkloadWrite>& pending_writes,
                        const std::function<const api::Workload*(const std::string&)>& object_of);

}  // namespace rota::controller
