#include "jobs/condition_patch.h"

namespace rota::controller {

ConditionPatch::ConditionPatch(const api::Workload& wl, std::string at) : at_(std::move(at)) {
  if (wl.status)
    for (const auto& c : wl.status->conditions) conditions_[c.type] = api::EncodeValue(c);
}

void ConditionPatch::Set(std::string_view type, const char* status, const std::string& reason,
                         const std::string& message) {
  conditions_[std::string(type)] = {
      {"type", type}, {"status", status}, {"reason", reason}, {"message", message}, {"lastTransitionTime", at_}};
}

api::Json ConditionPatch::List() const {
  api::Json list = api::Json::array();
  for (const auto& [type, c] : conditions_) list.push_back(c);
  return list;
}

}  // namespace rota::controller
