#pragma once

// Leader election on a coordination.k8s.io/v1 Lease, as client-go's: acquire when the lease is
// free or its holder has not renewed within the lease duration (judged by when this process saw
// the record change, so clocks need not agree), renew every retry period, step down when renewal
// has failed for the renew deadline, and release the lease on a clean shutdown.

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

#include "rota/apiclient/client.h"

namespace rota::apiclient {

struct LeaderElectionConfig {
  std::string lease_namespace;
  std::string lease_name;
  std::string identity;  // unique per process, e.g. hostname_pid
  std::chrono::seconds lease_duration{15};
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
};

class LeaderElector {
 public:
  LeaderElector(Client& client, LeaderElectionConfig config);

  // Blocks: tries to acquire the lease until it does or `stop` is set; then calls
  // `on_started_leading` (on this thread; it should start work and return) and keeps renewing.
  // Returns after calling `on_stopped_leading` when leadership is lost, or after releasing the
  // lease when `stop` is set. Returns whether it ever led.
  bool Run(const std::atomic<bool>& stop, const std::function<void()>& on_started_leading,
           const std::function<void()>& on_stopped_leading);

  bool IsLeader() const { return leader_.load(); }
  // Whether this process may still act as the leader: it leads, and its last successful renewal
  // began less than the renew deadline ago. A follower takes over only a lease duration after it
  // saw that renewal, so this turns false first, whatever happened meanwhile (a SIGSTOP, a
  // stalled connection). For Client::SetWriteFence.
  bool HoldsLease() const;

 private:
  // One attempt to take or renew the lease; true when this process holds it afterwards.
  bool TryAcquireOrRenew();
  void Release();
  // Notes the lease record seen; the time is taken only when it differs from the last one.
  void Observe(const std::string& holder, const std::string& renew_time);
  void SleepUnlessStopped(std::chrono::milliseconds d, const std::atomic<bool>& stop);

  Client& client_;
  LeaderElectionConfig config_;
  std::atomic<bool> leader_{false};
  // When the last successful acquire or renewal began, plus the renew deadline (ticks of Clock).
  std::atomic<Clock::Duration::rep> holds_until_{0};
  // The last lease record seen, and when (on our clock) it last changed.
  std::string observed_holder_;
  std::string observed_renew_time_;
  Clock::TimePoint observed_at_{};
};

}  // namespace rota::apiclient
