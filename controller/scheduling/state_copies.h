#pragma once

// A pass's copy of the cache (the engine's input), taken at the start of every pass. The
// ClusterQueues' and LocalQueues' copies are kept for the next pass, which reuses the copy of
// each object the cache still holds unchanged (the same shared object) instead of copying its
// spec and status again.
//
// Loop thread only.

#include <memory>
#include <vector>

#include "cache/cluster_cache.h"
#include "rota/api/snapshot.h"

namespace rota::controller {

class StateCopies {
 public:
  // Everything but the Workloads (which the pass overlays with what it assumes).
  api::ClusterState Take(const ClusterCache& cache);
  // The pass is done with `state`'s queues (unchanged); the next Take may reuse them.
  void GiveBack(api::ClusterState& state);

 private:
  template <typename T>
  struct Kept {
    std::vector<std::shared_ptr<const T>> from;  // the objects copied, in the informer's order
    std::vector<T> copies;                       // copies[i] of *from[i]; empty while a pass has them
    std::vector<T> Take(const apiclient::Informer<T>& informer);
    void GiveBack(std::vector<T>&& used);
  };
  Kept<api::ClusterQueue> cluster_queues_;
  Kept<api::LocalQueue> local_queues_;
};

}  // namespace rota::controller
