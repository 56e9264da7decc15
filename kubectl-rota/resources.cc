#include "rota/kubectl/resources.h"

#include <cstdio>

#include "rota/admission/lost_work.h"
#include "rota/admission/quantity.h"
#include "rota/replay/simulator.h"

namespace rota::kubectl {

bool IsGpuResource(const std::string& resource) {
  return admission::IsAccelerator(resource) || replay::GpuWeight(resource, {}) > 0;
}

double GpuEquivalents(const Amounts& amounts) {
  double gpus = 0;
  for (const auto& [resource, milli] : amounts)
    gpus += static_cast<double>(milli) / 1000.0 * replay::GpuWeight(resource, {});
  return gpus;
}

std::vector<std::string> OrderResources(const std::set<std::string>& resources) {
  auto rank = [](const std::string& r) { return IsGpuResource(r) ? 0 : r == "cpu" ? 1 : r == "memory" ? 2 : 3; };
  std::vector<std::string> out(resources.begin(), resources.end());
  std::stable_sort(out.begin(), out.end(),
                   [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
  return out;
}

std::string FormatAmount(const std::string& resource, int64_t milli) {
  const bool bytes = resource == "memory" || resource == "ephemeral-storage" || resource.rfind("hugepages-", 0) == 0;
  return Quantity::FromMilli(milli, bytes ? Quantity::Format::kBinarySI : Quantity::Format::kDecimalSI).ToString();
}

void AddAmounts(Amounts& into, const Amounts& more) {
  for (const auto& [resource, milli] : more) into[resource] += milli;
}

std::string FormatGpuHours(double gpu_hours) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", gpu_hours);
  return text;
}

}  // namespace rota::kubectl
