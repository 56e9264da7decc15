#include "scheduling/state_copies.h"

namespace rota::controller {
namespace {

template <typename T>
std::vector<T> Copy(const apiclient::Informer<T>& informer) {
  std::vector<T> out;
  for (const auto& p : informer.List()) out.push_back(*p);
  return out;
}

}  // namespace

template <typename T>
std::vector<T> StateCopies::Kept<T>::Take(const apiclient::Informer<T>& informer) {
  std::vector<std::shared_ptr<const T>> now = informer.List();
  std::vector<T> out;
  out.reserve(now.size());
  // (The informer's order moves only when its objects come or go: an unchanged object is at its
  // old place, or copied again.)
  for (size_t i = 0; i < now.size(); ++i) {
    if (i < copies.size() && from[i] == now[i])
      out.push_back(std::move(copies[i]));
    else
      out.push_back(*now[i]);
  }
  from = std::move(now);
  copies.clear();
  return out;
}

template <typename T>
void StateCopies::Kept<T>::GiveBack(std::vector<T>&& used) {
  if (used.size() == from.size()) copies = std::move(used);
}

api::ClusterState StateCopies::Take(const ClusterCache& cache) {
  api::ClusterState state;
  state.flavors = Copy(cache.flavors());
  state.cohorts = Copy(cache.cohorts());
  state.cluster_queues = cluster_queues_.Take(cache.cluster_queues());
  state.local_queues = local_queues_.Take(cache.local_queues());
  state.priority_classes = Copy(cache.priority_classes());
  for (const auto& ns : cache.namespaces().List()) state.namespace_labels[ns->name] = ns->labels;
  return state;
}

void StateCopies::GiveBack(api::ClusterState& state) {
  cluster_queues_.GiveBack(std::move(state.cluster_queues));
  local_queues_.GiveBack(std::move(state.local_queues));
}

}  // namespace rota::controller
