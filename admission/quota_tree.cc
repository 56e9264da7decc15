#include "quota_tree.h"

namespace rota::admission::internal {

int QuotaTree::AddNode(std::string name, bool is_cluster_queue) {
  QuotaNode n;
  n.name = std::move(name);
  n.is_cluster_queue = is_cluster_queue;
  n.nominal.assign(fr_count_, 0);
  n.borrowing_limit.assign(fr_count_, kUnlimited);
  n.lending_limit.assign(fr_count_, kUnlimited);
  n.subtree.assign(fr_count_, 0);
  n.usage.assign(fr_count_, 0);
  nodes_.push_back(std::move(n));
  return static_cast<int>(nodes_.size()) - 1;
}

void QuotaTree::ComputeSubtreeQuota() {
  // Post-order from every root; the caller guarantees the parent links form a forest.
  std::vector<int> order;
  order.reserve(nodes_.size());
  std::vector<int> stack;
  for (int i = 0; i < size(); ++i) {
    if (nodes_[i].parent >= 0) continue;
    stack.push_back(i);
    while (!stack.empty()) {
      int n = stack.back();
      stack.pop_back();
      order.push_back(n);
      for (int c : nodes_[n].children) stack.push_back(c);
    }
  }
  root_.assign(nodes_.size(), -1);
  tree_version_.assign(nodes_.size(), 0);
  for (int n : order) root_[n] = nodes_[n].parent < 0 ? n : root_[nodes_[n].parent];
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    QuotaNode& n = nodes_[*it];
    for (int fr = 0; fr < fr_count_; ++fr) {
      int64_t total = n.nominal[fr];
      for (int c : n.children) total = SatAdd(total, nodes_[c].subtree[fr] - Guaranteed(c, fr));
      n.subtree[fr] = total;
    }
  }
}

int64_t QuotaTree::Available(int n, int fr) const {
  const QuotaNode& q = nodes_[n];
  if (q.parent < 0) return q.subtree[fr] - q.usage[fr];
  const int64_t guaranteed = Guaranteed(n, fr);
  const int64_t local = std::max<int64_t>(0, guaranteed - q.usage[fr]);
  int64_t from_parent = Available(q.parent, fr);
  if (q.borrowing_limit[fr] < kUnlimited) {
    const int64_t stored_in_parent = q.subtree[fr] - guaranteed;
    const int64_t used_in_parent = std::max<int64_t>(0, q.usage[fr] - guaranteed);
    from_parent = std::min(from_parent, SatAdd(stored_in_parent - used_in_parent, q.borrowing_limit[fr]));
  }
  return SatAdd(local, std::max<int64_t>(0, from_parent));
}

int64_t QuotaTree::PotentialAvailable(int n, int fr) const {
  const QuotaNode& q = nodes_[n];
  if (q.parent < 0) return q.subtree[fr];
  const int64_t guaranteed = Guaranteed(n, fr);
  int64_t from_parent = PotentialAvailable(q.parent, fr);
  if (q.borrowing_limit[fr] < kUnlimited) {
    from_parent = std::min(from_parent, SatAdd(q.subtree[fr] - guaranteed, q.borrowing_limit[fr]));
  }
  return SatAdd(guaranteed, from_parent);
}

void QuotaTree::AddUsage(int n, int fr, int64_t amount) {
  ++version_;
  ++tree_version_[root_[n]];
  while (n >= 0 && amount > 0) {
    QuotaNode& q = nodes_[n];
    const int64_t local_available = std::max<int64_t>(0, Guaranteed(n, fr) - q.usage[fr]);
    q.usage[fr] = SatAdd(q.usage[fr], amount);
    if (amount <= local_available) return;
    amount -= local_available;
    n = q.parent;
  }
}

void QuotaTree::RemoveUsage(int n, int fr, int64_t amount) {
  ++version_;
  ++tree_version_[root_[n]];
  while (n >= 0 && amount > 0) {
    QuotaNode& q = nodes_[n];
    const int64_t stored_in_parent = q.usage[fr] - Guaranteed(n, fr);
    q.usage[fr] -= amount;
    if (stored_in_parent <= 0) return;
    amount = std::min(amount, stored_in_parent);
    n = q.parent;
  }
}

}  // namespace rota::admission::internal
