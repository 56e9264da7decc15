#pragma once
// A realistic status page model: three ClusterQueues sharing a cohort (whole GPUs and MIG
// slices, one queue borrowing), five pending workloads with positions and forecasts, and
// recent admissions and preemptions. Used by the unit tests and by statuspage-sample.

#include "status_page.h"

namespace rota::statuspage::testing {

StatusPage SamplePage();

}  // namespace rota::statuspage::testing
