#pragma once

// The cohort tree's quota arithmetic (private to the engine).
//
// Every ClusterQueue and Cohort is a node; a ClusterQueue is a leaf. Quantities are kept per
// "flavor-resource" (fr), a dense index. For each node and fr:
//   subtree    = own nominal quota + what each child makes available to it (for a ClusterQueue:
//                its nominal quota)
//   guaranteed = the part of subtree the node keeps for itself: subtree - lendingLimit when a
//                lendingLimit is set, else 0
//   usage      = quota in use in the node's subtree; usage beyond `guaranteed` is also counted
//                in the parent (it is stored there)
// A node can use `available` more: what is left of its guaranteed part plus what its parent
// has available, capped by its borrowingLimit. This is the model Kueue documents for
// hierarchical cohorts, so limits hold at every level of the tree.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace rota::admission::internal {

inline constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max() / 4;

// Saturating arithmetic for quota sums (inputs are bounded by Quantity's int64 milli range,
// but sums of many of them are not).
inline int64_t SatAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? kUnlimited : -kUnlimited;
  return std::clamp(r, -kUnlimited, kUnlimited);
}

struct QuotaNode {
  std::string name;
  bool is_cluster_queue = false;
  int parent = -1;
  std::vector<int> children;
  std::vector<int64_t> nominal;          // per fr
  std::vector<int64_t> borrowing_limit;  // per fr; kUnlimited when absent
  std::vector<int64_t> lending_limit;    // per fr; kUnlimited when absent
  std::vector<int64_t> subtree;
  std::vector<int64_t> usage;
  int64_t fair_weight_milli = 1000;
};

class QuotaTree {
 public:
  QuotaTree() = default;
  explicit QuotaTree(int fr_count) : fr_count_(fr_count) {}

  int AddNode(std::string name, bool is_cluster_queue);
  QuotaNode& node(int i) { return nodes_[i]; }
  const QuotaNode& node(int i) const { return nodes_[i]; }
  int size() const { return static_cast<int>(nodes_.size()); }
  int fr_count() const { return fr_count_; }

  // Computes `subtree` bottom-up; call once after the tree's shape and quotas are set.
  void ComputeSubtreeQuota();

  int64_t Guaranteed(int n, int fr) const {
    const QuotaNode& q = nodes_[n];
    if (q.lending_limit[fr] >= kUnlimited) return 0;
    return std::max<int64_t>(0, q.subtree[fr] - q.lending_limit[fr]);
  }

  // How much more of fr node n can use now.
  int64_t Available(int n, int fr) const;
  // How much of fr node n could use if nothing else were running.
  int64_t PotentialAvailable(int n, int fr) const;

  // Adds (or, with a negative amount, removes) usage at node n and the ancestors it is stored in.
  void AddUsage(int n, int fr, int64_t amount);
  void RemoveUsage(int n, int fr, int64_t amount);

  int Root(int n) const {
    while (nodes_[n].parent >= 0) n = nodes_[n].parent;
    return n;
  }

  // Incremented on every usage change: lets callers cache results for an unchanged tree.
  uint64_t version() const { return version_; }
  // Incremented on every usage change within the tree of node n's root (after
  // ComputeSubtreeQuota): results for a queue depend only on its own tree.
  uint64_t TreeVersion(int n) const { return tree_version_[root_[n]]; }

  // Version counters of node n's tree, to put back after an experiment (a preemption search)
  // that changed usage and then restored every change exactly.
  struct Versions {
    int root;
    uint64_t version;
    uint64_t tree_version;
  };
  Versions SaveVersions(int n) const { return {root_[n], version_, tree_version_[root_[n]]}; }
  void RestoreVersions(const Versions& v) {
    version_ = v.version;
    tree_version_[v.root] = v.tree_version;
  }

 private:
  int fr_count_ = 0;
  std::vector<QuotaNode> nodes_;
  uint64_t version_ = 0;
  std::vector<int> root_;               // per node
  std::vector<uint64_t> tree_version_;  // per root node
};

}  // namespace rota::admission::internal
