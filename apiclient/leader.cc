#include "rota/apiclient/leader.h"

#include <cstdio>
#include <ctime>

namespace rota::apiclient {
namespace {

// MicroTime as the apiserver writes it: 2026-11-22T01:02:03.123456Z.
std::string MicroTime(std::chrono::system_clock::time_point t) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(us / 1000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[80];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long long>(us % 1000000));
  return buf;
}

}  // namespace

LeaderElector::LeaderElector(Client& client, LeaderElectionConfig config)
    : client_(client), config_(std::move(config)) {}

bool LeaderElector::HoldsLease() const {
  return leader_ && client_.clock().Now().time_since_epoch().count() < holds_until_.load();
}

bool LeaderElector::TryAcquireOrRenew() {
  Clock& clock = client_.clock();
  const Clock::TimePoint began = clock.Now();
  const auto held_until = (began + config_.renew_deadline).time_since_epoch().count();
  const std::string now = MicroTime(clock.WallNow());
  const int duration = static_cast<int>(config_.lease_duration.count());
  auto current = client_.Get(resources::kLeases, config_.lease_namespace, config_.lease_name);
  if (!current.ok()) {
    if (!current.error().IsNotFound()) return false;
    Json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                  {"kind", "Lease"},
                  {"metadata", {{"name", config_.lease_name}, {"namespace", config_.lease_namespace}}},
                  {"spec",
                   {{"holderIdentity", config_.identity},
                    {"leaseDurationSeconds", duration},
                    {"acquireTime", now},
                    {"renewTime", now},
                    {"leaseTransitions", 0}}}};
    auto created = client_.Create(resources::kLeases, config_.lease_namespace, lease);
    if (!created.ok()) return false;
    Observe(config_.identity, now);
    holds_until_ = held_until;
    return true;
  }
  Json lease = std::move(*current);
  Json& spec = lease["spec"];
  const std::string holder = spec.value("holderIdentity", "");
  const std::string renew = spec.value("renewTime", "");
  Observe(holder, renew);
  const bool ours = holder == config_.identity;
  const int held_for = spec.value("leaseDurationSeconds", duration);
  if (!ours && !holder.empty() && clock.Now() < observed_at_ + std::chrono::seconds(held_for)) {
    return false;  // someone else holds a live lease
  }
  if (!ours) {
    spec["acquireTime"] = now;
    spec["leaseTransitions"] = spec.value("leaseTransitions", 0) + (holder.empty() ? 0 : 1);
  }
  spec["holderIdentity"] = config_.identity;
  spec["leaseDurationSeconds"] = duration;
  spec["renewTime"] = now;
  // The resourceVersion in `lease` makes this fail with 409 if anyone wrote it since our read.
  auto updated = client_.Update(resources::kLeases, config_.lease_namespace, lease);
  if (!updated.ok()) return false;
  Observe(config_.identity, now);
  holds_until_ = held_until;
  return true;
}

void LeaderElector::Observe(const std::string& holder, const std::string& renew_time) {
  if (holder == observed_holder_ && renew_time == observed_renew_time_) return;
  observed_holder_ = holder;
  observed_renew_time_ = renew_time;
  observed_at_ = client_.clock().Now();
}

void LeaderElector::Release() {
  auto current = client_.Get(resources::kLeases, config_.lease_namespace, config_.lease_name);
  if (!current.ok() || (*current)["spec"].value("holderIdentity", "") != config_.identity) return;
  Json lease = std::move(*current);
  // An empty holder with a 1 s duration lets the next candidate take over at once.
  lease["spec"]["holderIdentity"] = "";
  lease["spec"]["leaseDurationSeconds"] = 1;
  lease["spec"]["renewTime"] = MicroTime(client_.clock().WallNow());
  (void)client_.Update(resources::kLeases, config_.lease_namespace, lease);
}

void LeaderElector::SleepUnlessStopped(std::chrono::milliseconds d, const std::atomic<bool>& stop) {
  Clock& clock = client_.clock();
  const auto deadline = clock.Now() + d;
  while (!stop && clock.Now() < deadline) {
    clock.SleepFor(std::min<Clock::Duration>(deadline - clock.Now(), std::chrono::milliseconds(100)));
  }
}

bool LeaderElector::Run(const std::atomic<bool>& stop, const std::function<void()>& on_started_leading,
                        const std::function<void()>& on_stopped_leading) {
  Clock& clock = client_.clock();
  const auto retry = config_.retry_period;
  while (!stop && !TryAcquireOrRenew()) SleepUnlessStopped(retry, stop);
  if (stop) return false;
  leader_ = true;
  if (on_started_leading) on_started_leading();
  auto last_renew = clock.Now();
  while (!stop) {
    SleepUnlessStopped(retry, stop);
    if (stop) break;
    if (TryAcquireOrRenew()) {
      last_renew = clock.Now();
    } else if (clock.Now() - last_renew > config_.renew_deadline) {
      leader_ = false;
      if (on_stopped_leading) on_stopped_leading();
      return true;
    }
  }
  Release();
  leader_ = false;
  if (on_stopped_leading) on_stopped_leading();
  return true;
}

}  // namespace rota::apiclient
