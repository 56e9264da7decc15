#include "fairsharing/admission_usage.h"

#include <cmath>
#include <set>
#include <thread>

namespace rota::controller {
namespace {

bool FairShared(const api::ClusterQueue& cq) {
  return cq.spec.admission_scope &&
         cq.spec.admission_scope->admission_mode == api::AdmissionMode::kUsageBasedAdmissionFairSharing;
}

// The usage a LocalQueue's status gives, or nullopt.
std::optional<api::LocalQueueUsage> FromStatus(const api::LocalQueue& lq) {
  if (!lq.status || !lq.status->fair_sharing || !lq.status->fair_sharing->admission_fair_sharing_status)
    return std::nullopt;
  const api::AdmissionFairSharingStatus& s = *lq.status->fair_sharing->admission_fair_sharing_status;
  Result<int64_t> t = api::ParseTime(s.last_update);
  if (!t.ok() || *t <= 0) return std::nullopt;
  api::LocalQueueUsage u;
  u.last_update = *t;
  for (const auto& [resource, q] : s.consumed_resources) u.consumed[resource] = double(q.milli()) / 1000;
  return u;
}

}  // namespace

api::LocalQueueUsage DecayedUsage(const api::LocalQueueUsage& old, const std::map<std::string, double>& now,
                                  int64_t now_seconds, int64_t half_life) {
  api::LocalQueueUsage out;
  out.last_update = now_seconds;
  if (half_life <= 0) return out;
  const double elapsed = double(std::max<int64_t>(0, now_seconds - old.last_update));
  const double alpha = 1 - std::pow(0.5, elapsed / double(half_life));
  for (const auto& [resource, v] : old.consumed) out.consumed[resource] += v * (1 - alpha);
  for (const auto& [resource, v] : now) out.consumed[resource] += v * alpha;
  return out;
}

AdmissionUsage::AdmissionUsage(ClusterCache& cache, apiclient::Client& client, Logger log, apiclient::Clock& clock,
                               api::AdmissionFairSharingConfig config)
    : cache_(cache), client_(client), log_(std::move(log)), clock_(clock), config_(std::move(config)) {}

std::shared_ptr<const LocalQueueUsages> AdmissionUsage::Usage() const {
  std::lock_guard l(mu_);
  return usage_;
}

void AdmissionUsage::Run(const std::atomic<bool>& stop) {
  const auto period = std::chrono::seconds(std::max<int64_t>(1, config_.usage_sampling_interval));
  while (!stop.load()) {
    if (cache_.HasSynced()) Sample();
    const auto deadline = clock_.Now() + period;
    while (!stop.load() && clock_.Now() < deadline) clock_.SleepFor(std::chrono::milliseconds(500));
  }
}

std::map<std::string, std::map<std::string, double>> AdmissionUsage::HeldNow() const {
  std::map<std::string, std::map<std::string, double>> held;
  cache_.workloads().ForEach([&](const std::string&, const std::shared_ptr<const api::Workload>& w) {
    if (!w->status || !w->status->admission) return;
    auto& units = held[w->metadata.namespace_ + "/" + w->spec.queue_name];
    for (const auto& psa : w->status->admission->pod_set_assignments)
      for (const auto& [resource, q] : psa.resource_usage) units[resource] += double(q.milli()) / 1000;
  });
  return held;
}

void AdmissionUsage::Sample() {
  const int64_t now = std::chrono::system_clock::to_time_t(clock_.WallNow());
  std::set<std::string> fair_cqs;
  for (const auto& cq : cache_.cluster_queues().List())
    if (FairShared(*cq)) fair_cqs.insert(cq->metadata.name);
  const auto held = HeldNow();
  LocalQueueUsages next;
  for (const auto& lq : cache_.local_queues().List()) {
    if (!fair_cqs.count(lq->spec.cluster_queue)) continue;
    const std::string key = lq->metadata.namespace_ + "/" + lq->metadata.name;
    auto kept = kept_.find(key);
    // (A LocalQueue first seen goes on from its status, or starts with nothing used; either way
    // its clock starts now, as Kueue's does: the gap before is not counted as held now.)
    api::LocalQueueUsage old = kept != kept_.end() ? kept->second : FromStatus(*lq).value_or(api::LocalQueueUsage{});
    if (kept == kept_.end()) old.last_update = now;
    auto h = held.find(key);
    api::LocalQueueUsage usage =
        DecayedUsage(old, h == held.end() ? std::map<std::string, double>{} : h->second, now, config_.usage_half_life);
    Write(*lq, usage);
    next[key] = std::move(usage);
  }
  kept_ = next;
  {
    std::lock_guard l(mu_);
    usage_ = std::make_shared<const LocalQueueUsages>(std::move(next));
  }
  synced_.store(true);
}

void AdmissionUsage::Write(const api::LocalQueue& lq, const api::LocalQueueUsage& usage) {
  api::Json consumed = api::Json::object();
  for (const auto& [resource, units] : usage.consumed)
    consumed[resource] = Quantity::FromMilli(std::llround(units * 1000)).ToString();
  api::Json body = {{"apiVersion", api::kApiVersion},
                    {"kind", "LocalQueue"},
                    {"metadata", {{"name", lq.metadata.name}, {"namespace", lq.metadata.namespace_}}},
                    {"status",
                     {{"fairSharing",
                       {{"weightedShare", 0},
                        {"admissionFairSharingStatus",
                         {{"consumedResources", consumed}, {"lastUpdate", api::FormatTime(usage.last_update)}}}}}}}};
  apiclient::PatchOptions options;
  options.field_manager = "rota-admission-fair-sharing";
  options.force = true;
  options.subresource = "status";
  auto r = client_.Patch(apiclient::resources::kLocalQueues, lq.metadata.namespace_, lq.metadata.name,
                         apiclient::PatchType::kApply, body, options);
  if (!r.ok()) {
    log_("warn", "LocalQueue \"" + lq.metadata.namespace_ + "/" + lq.metadata.name +
                     "\": admission fair sharing usage not written: " + r.error().ToString());
  }
}

}  // namespace rota::controller
