#pragma once

// The conditions of a Workload status merge patch: a merge patch replaces the whole list, so
// the patch carries the current conditions with some set anew (pods_ready.h, max_exec_time.h).

#include <map>
#include <string>
#include <string_view>

#include "rota/api/kueue.h"

namespace rota::controller {

class ConditionPatch {
 public:
  // The Workload's conditions as they are; those Set from now on carry `at` (RFC 3339).
  ConditionPatch(const api::Workload& wl, std::string at);
  void Set(std::string_view type, const char* status, const std::string& reason, const std::string& message);
  // Every condition, in order of type.
  api::Json List() const;

 private:
  std::string at_;
  std::map<std::string, api::Json> conditions_;
};

}  // namespace rota::controller
