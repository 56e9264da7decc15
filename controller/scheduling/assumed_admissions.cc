#include "scheduling/assumed_admissions.h"

#include <cstdlib>
#include <functional>

namespace rota::controller {

bool SeenVersion(const std::string& cached, const std::string& written) {
  if (written.empty() || cached.empty()) return false;
  if (cached == written) return true;
  char* end_c = nullptr;
  char* end_w = nullptr;
  const unsigned long long c = std::strtoull(cached.c_str(), &end_c, 10);
  const unsigned long long w = std::strtoull(written.c_str(), &end_w, 10);
  return *end_c == 0 && *end_w == 0 && c >= w;
}

void AssumedAdmissions::Assume(const std::string& key, std::optional<api::Admission> admission, uint64_t write) {
  assumed_[key] = Assumed{std::move(admission), write, "", pass_};
}

void AssumedAdmissions::WriteSucceeded(const std::string& key, uint64_t write, const std::string& resource_version) {
  auto it = assumed_.find(key);
  if (it != assumed_.end() && it->second.write == write) it->second.written_version = resource_version;
}

void AssumedAdmissions::WriteFailed(const std::string& key, uint64_t write) {
  auto it = assumed_.find(key);
  if (it != assumed_.end() && it->second.write == write) assumed_.erase(it);
}

void AssumedAdmissions::BeginPass(uint64_t pass) {
  pass_ = pass;
  hashes_.clear();
  for (const auto& entry : assumed_) hashes_.insert(std::hash<std::string>{}(entry.first));
}

std::shared_ptr<const api::Workload> AssumedAdmissions::Overlay(const std::string& key,
                                                                const std::shared_ptr<const api::Workload>& object) {
  auto it = assumed_.find(key);
  if (it == assumed_.end()) return object;
  const api::Workload& w = *object;
  it->second.seen = pass_;
  const bool has = w.status && w.status->admission;
  if (has == it->second.admission.has_value() || SeenVersion(w.metadata.resource_version, it->second.written_version)) {
    assumed_.erase(it);
    return object;
  }
  auto copy = std::make_shared<api::Workload>(w);  // the cache's object stays as it is
  if (!copy->status) copy->status = api::WorkloadStatus{};
  copy->status->admission = it->second.admission;
  return copy;
}

void AssumedAdmissions::EndPass() {
  std::erase_if(assumed_, [&](const auto& entry) { return entry.second.seen != pass_; });
}

void AssumedAdmissions::HoldEvicted(api::SnapshotBuilder& builder) const {
  for (const auto& [key, assumed] : assumed_) {
    if (assumed.admission) continue;
    const admission::WorkloadSpec* spec = builder.Find(key);
    if (!spec || spec->admission || !spec->inadmissible_reason.empty()) continue;
    admission::WorkloadSpec* w = builder.Mutable(key);
    w->inadmissible_reason = "WaitingForQuota";
    w->inadmissible_message = "its eviction is being written";
  }
}

}  // namespace rota::controller
