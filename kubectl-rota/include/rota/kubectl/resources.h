#pragma once

// Resource amounts as the commands add and show them: milli-units by resource name, GPUs first,
// and GPU-equivalents (replay's GpuWeight: 1 for a whole GPU, N/7 for a MIG slice Ng, 1/4 for a
// time-sliced share).

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace rota::kubectl {

using Amounts = std::map<std::string, int64_t>;  // resource -> milli-units

// A GPU or a part of one: any accelerator (admission::IsAccelerator) or a resource with a GPU
// weight.
bool IsGpuResource(const std::string& resource);

// GPU-equivalents of `amounts`.
double GpuEquivalents(const Amounts& amounts);

// `resources` in the order tables show them: GPUs first, then cpu, memory, then the rest, each
// group by name.
std::vector<std::string> OrderResources(const std::set<std::string>& resources);

// The apiserver's text for an amount ("4", "500m", "64Gi": memory and storage in binary units).
std::string FormatAmount(const std::string& resource, int64_t milli);

// `into` += `more`, resource by resource.
void AddAmounts(Amounts& into, const Amounts& more);

// GPU-hours with two decimals ("0.25", "12.00").
std::string FormatGpuHours(double gpu_hours);

}  // namespace rota::kubectl
