// libFuzzer target: the AdmissionReview parser and every webhook rule on whatever it accepts.
// Nothing here may crash, hang or read out of bounds, whatever the apiserver (or an attacker on
// the webhook port) sends. Built and run by tests/fuzz/run.sh with Debian's clang.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "admission_review.h"
#include "webhooks.h"

namespace {

class EmptyView : public rota::webhook::ClusterView {
 public:
  bool LocalQueueExists(const std::string&, const std::string& name) const override { return name == "default"; }
  bool PriorityClassExists(const std::string& name) const override { return name.size() % 2 == 0; }
  std::optional<std::string> CohortParent(const std::string& name) const override {
    if (name.empty()) return std::nullopt;
    return name.substr(1);  // a chain that ends, through every suffix
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  auto req = rota::webhook::ParseAdmissionReview(body);
  if (!req.ok()) return 0;
  static const EmptyView view;
  for (const auto& route : rota::webhook::Routes()) {
    const rota::webhook::AdmissionResponse res = route.handle(*req, view);
    (void)rota::webhook::EncodeAdmissionReview(req->uid, res);
  }
  return 0;
}
