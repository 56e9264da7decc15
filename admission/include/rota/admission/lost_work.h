#pragma once

// The work a preemption throws away. A victim evicted at `now` loses what it computed since the
// later of its admission and its last checkpoint: its admitted resources times that time. GPUs
// (any accelerator resource) count first, then CPU; other resources do not rank victims.

#include <cstdint>
#include <string_view>

#include "rota/admission/snapshot.h"

namespace rota::admission {

// nvidia.com/..., amd.com/..., gpu.intel.com/... and any resource whose name says "gpu".
bool IsAccelerator(std::string_view resource);

// Seconds since the workload last saved its work (its admission, or a later checkpoint); 0 when
// `now` is 0 (not known), the workload is not admitted, or the times are in the future.
int64_t SecondsSinceSave(const WorkloadSpec& w, int64_t now);

struct LostWork {
  double accelerator = 0;  // milli-units x seconds, over accelerator resources
  double cpu = 0;          // milli-CPU x seconds
  bool operator<(const LostWork& o) const {
    return accelerator != o.accelerator ? accelerator < o.accelerator : cpu < o.cpu;
  }
};

LostWork LostWorkOf(const WorkloadSpec& w, int64_t now);

}  // namespace rota::admission
