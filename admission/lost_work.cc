#include "rota/admission/lost_work.h"

#include <algorithm>

namespace rota::admission {

bool IsAccelerator(std::string_view resource) {
  for (std::string_view vendor : {"nvidia.com/", "amd.com/", "gpu.intel.com/"})
    if (resource.substr(0, vendor.size()) == vendor) return true;
  return resource.find("gpu") != std::string_view::npos;
}

int64_t SecondsSinceSave(const WorkloadSpec& w, int64_t now) {
  if (now <= 0 || !w.admission) return 0;
  return std::max<int64_t>(0, now - std::max(w.admission_time, w.last_checkpoint));
}

LostWork LostWorkOf(const WorkloadSpec& w, int64_t now) {
  LostWork lost;
  const double seconds = static_cast<double>(SecondsSinceSave(w, now));
  if (seconds == 0) return lost;
  for (const PodSetAdmission& ps : w.admission->pod_sets) {
    for (const auto& [resource, milli] : ps.usage) {
      if (IsAccelerator(resource))
        lost.accelerator += static_cast<double>(milli) * seconds;
      else if (resource == "cpu")
        lost.cpu += static_cast<double>(milli) * seconds;
    }
  }
  return lost;
}

}  // namespace rota::admission
