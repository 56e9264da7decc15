#pragma once

// The soak's load: Jobs of random sizes, priorities, queues and run times, a third of them
// checkpointable, created suspended (as Kueue's webhook would leave them) at random intervals,
// straight to the apiserver. Also the probe
// Jobs that time each recovery.

#include <atomic>
#include <chrono>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "rota/apiclient/client.h"
#include "soak/soak_setup.h"

namespace rota::soak {

struct JobShape {
  std::string queue, priority_class;
  int pods = 1, gpus_each = 1;
  std::chrono::seconds runtime{5};
  bool checkpoint = false;  // takes part in the checkpoint handshake, with a 5 s deadline
};

// A suspended Job of that shape; its pods succeed `runtime` after they run (kwok).
Json JobObject(const std::string& name, const std::string& ns, const JobShape& shape);

class JobStream {
 public:
  JobStream(apiclient::Client& client, const Setup& setup, uint64_t seed, std::chrono::milliseconds mean_gap)
      : client_(client), setup_(setup), rng_(seed), mean_gap_(mean_gap) {}
  // Creates Jobs until `stop`, retrying each create until the apiserver takes it.
  void Run(const std::atomic<bool>& stop);
  std::vector<std::string> submitted() const;

 private:
  JobShape Draw();
  apiclient::Client& client_;
  const Setup& setup_;
  std::mt19937_64 rng_;
  std::chrono::milliseconds mean_gap_;
  mutable std::mutex mu_;
  std::vector<std::string> submitted_;
};

// Creates a probe Job (1 pod, 1 GPU, 1 s) in the probe queue and waits until rota unsuspends it;
// returns when that was, or nullopt after `timeout`. Deletes it afterwards.
std::optional<std::chrono::steady_clock::time_point> Probe(apiclient::Client& client, const Setup& setup, int n,
                                                           std::chrono::seconds timeout);

}  // namespace rota::soak
