#include "rota/admission/engine.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "quota_tree.h"
#include "rota/admission/lost_work.h"
#include "rota/admission/quantity.h"

namespace rota::admission {

const char* ToString(PreemptionReason reason) {
  switch (reason) {
    case PreemptionReason::kInClusterQueue:
      return "InClusterQueue";
    case PreemptionReason::kInCohortReclamation:
      return "InCohortReclamation";
    case PreemptionReason::kInCohortReclaimWhileBorrowing:
      return "InCohortReclaimWhileBorrowing";
    case PreemptionReason::kInCohortFairSharing:
      return "InCohortFairSharing";
  }
  return "";
}

namespace {

using internal::kUnlimited;
using internal::QuotaTree;
using internal::SatAdd;
__extension__ typedef __int128 Wide;  // exact intermediate products of int64 quantities

std::string Amount(int64_t milli) { return Quantity::FromMilli(milli).ToString(); }

const char* EffectName(TaintEffect e) {
  switch (e) {
    case TaintEffect::kNoSchedule:
      return "NoSchedule";
    case TaintEffect::kPreferNoSchedule:
      return "PreferNoSchedule";
    case TaintEffect::kNoExecute:
      return "NoExecute";
  }
  return "";
}

bool Tolerates(const Toleration& t, const Taint& taint) {
  if (t.effect.has_value() && *t.effect != taint.effect) return false;
  if (t.key.empty()) return t.exists;
  if (t.key != taint.key) return false;
  return t.exists || t.value == taint.value;
}

// Whether a requirement on node labels can hold on nodes labelled `labels` for the keys the flavor
// pins. Keys the flavor does not set are left to the scheduler (they may hold on some node).
bool RequirementCompatible(const NodeSelectorRequirement& r, const std::map<std::string, std::string>& labels) {
  auto it = labels.find(r.key);
  if (it == labels.end()) return true;
  const std::string& v = it->second;
  switch (r.op) {
    case NodeSelectorRequirement::Op::kIn:
      return std::find(r.values.begin(), r.values.end(), v) != r.values.end();
    case NodeSelectorRequirement::Op::kNotIn:
      return std::find(r.values.begin(), r.values.end(), v) == r.values.end();
    case NodeSelectorRequirement::Op::kExists:
      return true;
    case NodeSelectorRequirement::Op::kDoesNotExist:
      return false;
    case NodeSelectorRequirement::Op::kGt:
    case NodeSelectorRequirement::Op::kLt: {
      if (r.values.size() != 1) return false;
      try {
        long long lhs = std::stoll(v), rhs = std::stoll(r.values[0]);
        return r.op == NodeSelectorRequirement::Op::kGt ? lhs > rhs : lhs < rhs;
      } catch (...) {
        return false;
      }
    }
  }
  return false;
}

// Why a flavor cannot serve a pod set, or "" when it can.
std::string FlavorMismatch(const FlavorSpec& flavor, const PodSetSpec& ps) {
  for (const Taint& taint : flavor.node_taints) {
    if (taint.effect == TaintEffect::kPreferNoSchedule) continue;
    bool tolerated = std::any_of(ps.tolerations.begin(), ps.tolerations.end(),
                                 [&](const Toleration& t) { return Tolerates(t, taint); });
    if (!tolerated) {
      return "untolerated taint {" + taint.key + (taint.value.empty() ? "" : "=" + taint.value) + ":" +
             EffectName(taint.effect) + "} in flavor " + flavor.name;
    }
  }
  for (const auto& [key, value] : ps.node_selector) {
    auto it = flavor.node_labels.find(key);
    if (it != flavor.node_labels.end() && it->second != value) {
      return "flavor " + flavor.name + " doesn't match node affinity";
    }
  }
  if (!ps.required_affinity.empty()) {
    bool any_term = false;
    for (const auto& term : ps.required_affinity) {
      if (std::all_of(term.begin(), term.end(),
                      [&](const NodeSelectorRequirement& r) { return RequirementCompatible(r, flavor.node_labels); })) {
        any_term = true;
        break;
      }
    }
    if (!any_term) return "flavor " + flavor.name + " doesn't match node affinity";
  }
  return "";
}

enum class Mode { kFit = 0, kPreempt = 1, kNoFit = 2 };

// One workload's quota need: (fr, amount), aggregated.
using Needs = std::vector<std::pair<int, int64_t>>;

void AddNeed(Needs& needs, int fr, int64_t amount) {
  for (auto& [f, a] : needs) {
    if (f == fr) {
      a = SatAdd(a, amount);
      return;
    }
  }
  needs.emplace_back(fr, amount);
}

struct Workload {
  const WorkloadSpec* spec = nullptr;
  uint32_t index = 0;  // its place in Snapshot::workloads
  int cq = -1;         // node index of its ClusterQueue, or -1
  bool admitted = false;
  bool admitted_this_pass = false;
  bool victim = false;
  // Copied from the spec, for the passes over thousands of waiting workloads in scheduling order:
  // read there, the specs (large, and far apart in that order) cost a cache miss each.
  bool inadmissible = false;  // spec->inadmissible_reason is set
  int32_t priority = 0;
  uint32_t shape = 0;
  std::string_view key;
  Needs usage;  // what it holds, when admitted
};

// The result of assigning flavors to a whole workload at some set of counts.
struct Assignment {
  Mode mode = Mode::kFit;
  bool borrowing = false;
  std::vector<PodSetAdmission> pod_sets;
  Needs needs;
  std::string reason;
  std::string message;
};

struct ClusterQueue {
  const ClusterQueueSpec* spec = nullptr;
  int node = -1;
  std::string inactive;            // why it admits nothing, or ""
  std::string_view inactive_kept;  // `inactive` as kept for the pending decisions, once needed
  // Per resource group: its resources (index) and flavors (index) in order.
  struct Group {
    std::vector<int> resources;
    std::vector<int> flavors;
  };
  std::vector<Group> groups;
  std::unordered_map<int, int> group_of_resource;  // resource -> group
  std::vector<int> admitted;                       // workload indices holding quota here
  // Workloads of one shape (the same pod sets with no placement constraints of their own, and
  // the same tier): a deep queue of look-alikes is assigned once per change of the queue's tree,
  // not once per workload, and once one of them at some priority cannot be admitted, the next
  // one at that priority is not tried again until the tree changes.
  struct Shape {
    const WorkloadSpec* example = nullptr;  // a workload of this shape
    uint64_t version = ~0ull;               // the tree version `assignment` is for
    Assignment assignment;
    uint64_t failed_version = ~0ull;  // the tree version of the last failed attempt
    int32_t failed_priority = 0;
    bool failed_may_preempt = true;                  // (its message says whether it could preempt)
    std::string_view failed_reason, failed_message;  // views as in PendingDecision
  };
  std::deque<Shape> shapes;                                       // stable addresses
  std::unordered_map<uint64_t, std::vector<Shape*>> shape_index;  // by ShapeHash, for shape 0
  std::unordered_map<uint32_t, Shape*> shape_by_number;           // by WorkloadSpec::shape
  uint32_t last_shape_number = 0;                                 // the last found by number (0: none), and its entry
  Shape* last_shape = nullptr;
  // StrictFIFO: its head did not fit, and those behind it wait (with this message).
  bool blocked = false;
  std::string_view blocked_by;
  // A cached failed preemption search, valid while the tree is unchanged (FindVictims says for
  // which later searches).
  uint64_t failed_version = ~0ull;
  int32_t failed_priority = 0;
  int64_t failed_creation = 0;
  bool failed_preemptible = true;
  bool failed_within_nominal = false;
  bool failed_reusable = false;
  Needs failed_needs;
};

// A vector whose memory is mostly unused: more than four times its size, beyond a few thousand.
template <typename T>
bool Oversized(const std::vector<T>& v) {
  return v.capacity() > 4 * v.size() + 4096;
}

// Moves `from`'s memory into `to`, empty.
template <typename T>
void Borrow(std::vector<T>& to, std::vector<T>& from) {
  from.clear();
  to.swap(from);
  from.clear();
}

// Borrow, back into a workspace, unless the pass used under a quarter of the memory: after a
// burst drains, the workspace does not keep the burst's arrays.
template <typename T>
void GiveBack(std::vector<T>& to, std::vector<T>& from) {
  if (Oversized(from)) {
    to = std::vector<T>();
    return;
  }
  Borrow(to, from);
}

}  // namespace

struct Workspace::Buffers {
  std::vector<Workload> by_index, wls;
  std::vector<int> pending;
  std::vector<std::string_view> reason, message;
  std::vector<PendingDecision> decisions;  // a recycled Decisions' pending list
};

namespace {

class Scheduler {
 public:
  // With `buffers`, the pass's per-workload arrays are those of the last pass in the workspace
  // (emptied, their memory kept), and go back to it when the pass is done.
  explicit Scheduler(const Snapshot& s, Workspace::Buffers* buffers = nullptr, ScheduleLimits limits = {})
      : snap_(s), buffers_(buffers), limits_(limits) {
    if (!buffers_) return;
    Borrow(by_index_, buffers_->by_index);
    Borrow(wls_, buffers_->wls);
    Borrow(pending_, buffers_->pending);
    Borrow(pending_reason_, buffers_->reason);
    Borrow(pending_message_, buffers_->message);
    Borrow(out_.pending, buffers_->decisions);
  }
  ~Scheduler() {
    if (!buffers_) return;
    GiveBack(buffers_->by_index, by_index_);
    GiveBack(buffers_->wls, wls_);
    GiveBack(buffers_->pending, pending_);
    GiveBack(buffers_->reason, pending_reason_);
    GiveBack(buffers_->message, pending_message_);
  }
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Makes the pass's decisions (once per Scheduler: they are moved out).
  Decisions Run();

 private:
  // The snapshot's workloads, wherever it keeps them (Snapshot::workload_refs).
  size_t WorkloadCount() const { return snap_.workloads.empty() ? snap_.workload_refs.size() : snap_.workloads.size(); }
  const WorkloadSpec& Spec(size_t i) const {
    return snap_.workloads.empty() ? *snap_.workload_refs[i] : snap_.workloads[i];
  }
  void Index();
  void BuildTree();
  int FlavorResource(int flavor, int resource) const { return flavor * resource_count_ + resource; }
  int ResourceIndex(const std::string& name) const {
    auto it = resource_index_.find(name);
    return it == resource_index_.end() ? -1 : it->second;
  }

  Assignment Assign(const Workload& w, const std::vector<int32_t>& counts) const;
  // The workload's shape in its queue, or null when it has placement constraints of its own.
  ClusterQueue::Shape* ShapeOf(const Workload& w, ClusterQueue& cq);
  // Assign at full counts, through the queue's cache when the workload has a shape. The result
  // stays valid until the next call.
  const Assignment& CachedAssign(const Workload& w, ClusterQueue& cq);
  bool Fits(const ClusterQueue& cq, const Workload& w, const Needs& needs) const;
  bool WithinNominal(const ClusterQueue& cq, const Needs& needs) const;
  std::optional<std::vector<PreemptDecision>> FindVictims(int wi, const Needs& needs);
  // Whether the queue's last failed victim search says that this one fails too.
  bool FailsAsBefore(const ClusterQueue& cq, const WorkloadSpec& ws, const Needs& needs, bool within_nominal) const;
  int64_t Share(int cq_index, const Needs* extra) const;
  bool CanPreempt(const ClusterQueue& cq) const {
    return cq.spec->within_cluster_queue != WithinClusterQueue::kNever ||
           cq.spec->reclaim_within_cohort != ReclaimWithinCohort::kNever ||
           cq.spec->borrow_within_cohort != BorrowWithinCohort::kNever;
  }
  bool CanPreempt(const ClusterQueue& cq, const WorkloadSpec& w) const { return w.may_preempt && CanPreempt(cq); }
  // Whether every budget pool the workload draws on still holds its charge.
  bool BudgetHolds(const WorkloadSpec& w) const {
    for (const BudgetCharge& c : w.budget_charges) {
      if (c.pool >= budget_left_.size() || budget_left_[c.pool] < c.amount) return false;
    }
    return true;
  }
  // Gives workload wi the reason BudgetExhausted when a pool cannot hold its charge.
  bool OverBudget(int wi);
  void Hold(Workload& w, const Needs& needs);
  void Release(Workload& w);
  // Tries to admit pending workload wi; returns true when it was.
  bool TryAdmit(int wi);
  // Holds the quota of `a` for workload `wi` in `cq` and records the admission.
  void Admit(int wi, ClusterQueue& cq, Assignment a, bool first_round = false);
  // Admits, in order, the pending workloads that fit in their ClusterQueue's nominal quota
  // without borrowing or preempting.
  void AdmitWithinNominal();
  // Puts `pending` (indices into the snapshot's workloads) in scheduling order (InSchedulingOrder).
  void SortPending(std::vector<uint32_t>& pending) const;
  // Whether the snapshot's `order` names every workload once (and can stand for the sort).
  bool GivenOrderUsable() const;
  // Reorders the pending workloads of each ClusterQueue with admission fair sharing (those with a
  // fair_queue) among the places they hold: least-used LocalQueue first, with entry penalties.
  void OrderByAdmissionFairSharing(size_t first_pending);
  double EntryPenalty(const WorkloadSpec& w) const;

  // Run's phases besides Index and BuildTree, in the order it takes them.
  //
  // Whether every workload is admitted. Then there is nothing to decide (a pass evicts only to
  // make room for a waiting workload): a busy cluster's quiet spells, when workloads finish and
  // none arrive, are passes of this kind, and laying out every admitted workload's quota for them
  // was most of what they cost.
  bool NothingWaits() const;
  // Makes by_index_'s compact entries, one per workload in the snapshot's order, each with its
  // ClusterQueue's node; returns how many workloads are admitted.
  size_t MakeEntries();
  // Fills wls_: the admitted workloads (in the snapshot's order), which hold their quota first,
  // then the pending ones in scheduling order, the snapshot's when it gives one. Every order the
  // pass depends on is a total one, so the input's order does not show in the decisions. Returns
  // the index in wls_ of the first pending workload.
  size_t LayOutWorkloads();
  // Holds, in the tree and their queues, the quota of wls_'s admitted workloads (those before
  // `first_pending`), as their admissions name it.
  void HoldAdmittedQuota(size_t first_pending);
  // Sizes the per-workload state of the pending workloads (from `first_pending` on in wls_).
  void StartPending(size_t first_pending);
  // Decides pending workload wi: the reason it waits when its queue cannot admit it (it is
  // inadmissible, names no ClusterQueue that exists, its queue is inactive, or a StrictFIFO queue
  // is blocked), else TryAdmit; a StrictFIFO queue whose workload stays pending blocks the rest.
  void Consider(int wi);
  // Considers the pending workloads not yet admitted in scheduling order, up to the change limit.
  void ConsiderInOrder();
  // With fair sharing, queues take turns: the head whose queue would have the lowest share after
  // its admission goes next (scheduling order breaks ties), up to the change limit.
  void ConsiderByFairShare();
  // Lists every pending workload not admitted, in scheduling order, with its place in its
  // ClusterQueue; under a change limit, those not considered are only counted.
  void ListPending();

  // The pass has made as many changes as its limits allow: it considers no more workloads.
  bool AtLimit() const {
    return limits_.max_changes > 0 && out_.admitted.size() + out_.preempted.size() >= limits_.max_changes;
  }

  const Snapshot& snap_;
  Workspace::Buffers* buffers_;
  const ScheduleLimits limits_;
  Decisions out_;
  std::unordered_map<std::string, int> flavor_index_;
  std::vector<const FlavorSpec*> flavor_specs_;  // by index
  std::unordered_map<std::string, int> resource_index_;
  int resource_count_ = 0;
  std::vector<std::string> resource_names_;
  QuotaTree tree_;
  std::vector<ClusterQueue> cqs_;
  std::vector<int> cq_of_node_;                // node -> index in cqs_, -1 for a cohort
  std::vector<std::vector<int>> cqs_of_root_;  // root node -> indices in cqs_ of its tree's queues
  // The admitted workloads in the snapshot's order, then the pending ones in scheduling order:
  // the passes over thousands of pending workloads read wls_ (and the per-workload vectors
  // below) front to back instead of all over it.
  std::vector<Workload> wls_;
  std::vector<Workload> by_index_;  // (MakeEntries' first layout, in the snapshot's order)
  std::vector<int> pending_;        // indices into wls_, in scheduling order (so ascending)
  // Per workload, whether it was considered: once the pass reaches its change limit, the rest are
  // not. Empty without a limit, where every one is.
  std::vector<char> considered_;
  Assignment unshaped_;  // CachedAssign's result for a workload without a shape
  std::vector<std::string_view> pending_reason_, pending_message_;  // per workload: see PendingDecision
  std::vector<int64_t> budget_left_;                                // what remains of each Snapshot::budget_pools entry
  // Keeps a text for the pending decisions to point to.
  std::string_view Keep(std::string text) { return out_.texts.emplace_back(std::move(text)); }
};

void Scheduler::Index() {
  // Flavors and resources in name order, so indices do not depend on input order.
  std::vector<std::string> flavors;
  for (const FlavorSpec& f : snap_.flavors) flavors.push_back(f.name);
  std::sort(flavors.begin(), flavors.end());
  flavors.erase(std::unique(flavors.begin(), flavors.end()), flavors.end());
  for (size_t i = 0; i < flavors.size(); ++i) flavor_index_[flavors[i]] = static_cast<int>(i);
  flavor_specs_.assign(flavors.size(), nullptr);
  for (const FlavorSpec& f : snap_.flavors) {
    const FlavorSpec*& slot = flavor_specs_[flavor_index_[f.name]];
    if (!slot) slot = &f;  // the first of duplicates wins
  }

  std::set<std::string> resources;
  auto collect = [&](const std::vector<ResourceGroupSpec>& groups) {
    for (const auto& g : groups) {
      for (const auto& r : g.covered_resources) resources.insert(r);
      for (const auto& f : g.flavors)
        for (const auto& q : f.resources) resources.insert(q.resource);
    }
  };
  for (const auto& c : snap_.cohorts) collect(c.resource_groups);
  for (const auto& q : snap_.cluster_queues) collect(q.resource_groups);
  for (const auto& r : resources) {
    resource_index_[r] = resource_count_++;
    resource_names_.push_back(r);
  }
}

void Scheduler::BuildTree() {
  const int fr_count = std::max<int>(1, static_cast<int>(flavor_index_.size()) * resource_count_);
  tree_ = QuotaTree(fr_count);

  auto set_quota = [&](int node, const std::vector<ResourceGroupSpec>& groups) -> std::string {
    for (const auto& g : groups) {
      for (const auto& f : g.flavors) {
        auto fi = flavor_index_.find(f.flavor);
        if (fi == flavor_index_.end()) return "flavor " + f.flavor + " doesn't exist";
        for (const auto& q : f.resources) {
          const int fr = FlavorResource(fi->second, resource_index_.at(q.resource));
          auto& n = tree_.node(node);
          n.nominal[fr] = q.nominal;
          if (q.borrowing_limit) n.borrowing_limit[fr] = *q.borrowing_limit;
          if (q.lending_limit) n.lending_limit[fr] = *q.lending_limit;
        }
      }
    }
    return "";
  };

  // Cohorts: explicit ones (sorted by name, first wins) and the ones ClusterQueues only name.
  std::map<std::string, const CohortSpec*> cohort_specs;
  for (const auto& c : snap_.cohorts) cohort_specs.emplace(c.name, &c);
  std::set<std::string> cohort_names;
  for (const auto& [name, spec] : cohort_specs) {
    cohort_names.insert(name);
    if (!spec->parent.empty()) cohort_names.insert(spec->parent);
  }
  for (const auto& q : snap_.cluster_queues)
    if (!q.cohort.empty()) cohort_names.insert(q.cohort);
  std::map<std::string, int> cohort_node;
  std::map<std::string, std::string> cohort_problem;
  for (const auto& name : cohort_names) {
    int n = tree_.AddNode(name, false);
    cohort_node[name] = n;
    auto it = cohort_specs.find(name);
    if (it != cohort_specs.end()) {
      tree_.node(n).fair_weight_milli = it->second->fair_weight_milli;
      std::string problem = set_quota(n, it->second->resource_groups);
      if (!problem.empty()) cohort_problem[name] = "cohort " + name + ": " + problem;
    }
  }
  // Parent links, refusing cycles: a cohort on a cycle becomes a root and its queues inactive.
  for (const auto& [name, spec] : cohort_specs) {
    if (spec->parent.empty()) continue;
    std::vector<std::string> path{name};
    std::string at = spec->parent;
    bool cycle = false;
    while (!at.empty()) {
      if (std::find(path.begin(), path.end(), at) != path.end()) {
        cycle = true;
        path.push_back(at);
        break;
      }
      path.push_back(at);
      auto p = cohort_specs.find(at);
      at = p == cohort_specs.end() ? "" : p->second->parent;
    }
    if (cycle) {
      std::string text;
      for (size_t i = 0; i < path.size(); ++i) text += (i ? " -> " : "") + path[i];
      cohort_problem[name] = "cohort " + name + " is on a cycle of parents: " + text;
      continue;
    }
    const int child = cohort_node[name], parent = cohort_node[spec->parent];
    tree_.node(child).parent = parent;
    tree_.node(parent).children.push_back(child);
  }

  // ClusterQueues, in name order.
  std::vector<const ClusterQueueSpec*> specs;
  for (const auto& q : snap_.cluster_queues) specs.push_back(&q);
  std::sort(specs.begin(), specs.end(),
            [](const ClusterQueueSpec* a, const ClusterQueueSpec* b) { return a->name < b->name; });
  specs.erase(std::unique(specs.begin(), specs.end(), [](auto* a, auto* b) { return a->name == b->name; }),
              specs.end());
  for (const ClusterQueueSpec* spec : specs) {
    ClusterQueue cq;
    cq.spec = spec;
    cq.node = tree_.AddNode(spec->name, true);
    tree_.node(cq.node).fair_weight_milli = spec->fair_weight_milli;
    cq.inactive = spec->invalid.empty() ? set_quota(cq.node, spec->resource_groups) : spec->invalid;
    if (!cq.inactive.empty()) cq.inactive = "ClusterQueue " + spec->name + " is inactive: " + cq.inactive;
    if (!spec->cohort.empty()) {
      // Any problem on the way to the root makes the queue inactive.
      for (std::string at = spec->cohort; !at.empty() && cq.inactive.empty();) {
        auto p = cohort_problem.find(at);
        if (p != cohort_problem.end()) cq.inactive = "ClusterQueue " + spec->name + " is inactive: " + p->second;
        auto s = cohort_specs.find(at);
        at = (s == cohort_specs.end() || cohort_problem.count(at)) ? "" : s->second->parent;
      }
      const int parent = cohort_node[spec->cohort];
      tree_.node(cq.node).parent = parent;
      tree_.node(parent).children.push_back(cq.node);
    }
    for (const auto& g : spec->resource_groups) {
      ClusterQueue::Group group;
      for (const auto& r : g.covered_resources) {
        const int ri = resource_index_.at(r);
        group.resources.push_back(ri);
        cq.group_of_resource.emplace(ri, static_cast<int>(cq.groups.size()));
      }
      for (const auto& f : g.flavors) {
        auto fi = flavor_index_.find(f.flavor);
        if (fi != flavor_index_.end()) group.flavors.push_back(fi->second);
      }
      cq.groups.push_back(std::move(group));
    }
    if (spec->stopped && cq.inactive.empty()) cq.inactive = "ClusterQueue " + spec->name + " is stopped";
    if (cq_of_node_.size() <= static_cast<size_t>(cq.node)) cq_of_node_.resize(static_cast<size_t>(cq.node) + 1, -1);
    cq_of_node_[static_cast<size_t>(cq.node)] = static_cast<int>(cqs_.size());
    cqs_.push_back(std::move(cq));
  }
  tree_.ComputeSubtreeQuota();
  for (size_t i = 0; i < cqs_.size(); ++i) {
    const int root = tree_.Root(cqs_[i].node);
    if (cqs_of_root_.size() <= static_cast<size_t>(root)) cqs_of_root_.resize(static_cast<size_t>(root) + 1);
    cqs_of_root_[static_cast<size_t>(root)].push_back(static_cast<int>(i));
  }
}

bool Scheduler::WithinNominal(const ClusterQueue& cq, const Needs& needs) const {
  const auto& n = tree_.node(cq.node);
  for (const auto& [fr, amount] : needs) {
    if (SatAdd(n.usage[fr], amount) > n.nominal[fr]) return false;
  }
  return true;
}

bool Scheduler::Fits(const ClusterQueue& cq, const Workload& w, const Needs& needs) const {
  for (const auto& [fr, amount] : needs) {
    if (amount > tree_.Available(cq.node, fr)) return false;
  }
  // The critical tier never borrows.
  return w.spec->preemptible || WithinNominal(cq, needs);
}

Assignment Scheduler::Assign(const Workload& w, const std::vector<int32_t>& counts) const {
  const ClusterQueue& cq = cqs_[cq_of_node_.at(w.cq)];
  const auto& node = tree_.node(cq.node);
  const bool critical = !w.spec->preemptible;
  Assignment a;
  bool any_waiting = false;
  for (size_t p = 0; p < w.spec->pod_sets.size(); ++p) {
    const PodSetSpec& ps = w.spec->pod_sets[p];
    PodSetAdmission psa;
    psa.name = ps.name;
    psa.count = counts[p];
    // This pod set's requests per group.
    std::map<int, std::vector<std::pair<int, int64_t>>> by_group;  // group -> (resource, total)
    for (const auto& [resource, per_pod] : ps.per_pod) {
      if (per_pod == 0) continue;
      int64_t total;
      if (__builtin_mul_overflow(per_pod, static_cast<int64_t>(counts[p]), &total)) total = kUnlimited;
      const int ri = ResourceIndex(resource);
      auto g = ri < 0 ? cq.group_of_resource.end() : cq.group_of_resource.find(ri);
      if (g == cq.group_of_resource.end()) {
        a.mode = Mode::kNoFit;
        a.reason = "NoMatchingFlavor";
        a.message = "couldn't assign flavors to pod set " + ps.name + ": resource " + resource +
                    " unavailable in ClusterQueue " + cq.spec->name;
        return a;
      }
      by_group[g->second].emplace_back(ri, total);
      psa.usage[resource] = total;
    }
    for (const auto& [gi, requests] : by_group) {
      const ClusterQueue::Group& group = cq.groups[gi];
      struct Option {
        int flavor;
        Mode mode;
        bool borrow;
      };
      std::vector<Option> options;
      // Why flavors fell short, formatted only if the workload stays pending.
      struct Note {
        enum Kind { kText, kUnused, kMax } kind;
        std::string text;  // kText
        int flavor = 0, resource = 0;
        int64_t need = 0, limit = 0;
      };
      std::vector<Note> notes;
      auto format_notes = [&] {
        std::string text;
        for (const Note& n : notes) {
          if (!text.empty()) text += "; ";
          const std::string& rname = resource_names_[n.resource];
          const std::string& fname = flavor_specs_[n.flavor]->name;
          switch (n.kind) {
            case Note::kText:
              text += n.text;
              break;
            case Note::kUnused:
              text += "insufficient unused quota for " + rname + " in flavor " + fname + ", " +
                      Amount(n.need - std::max<int64_t>(0, n.limit)) + " more needed";
              break;
            case Note::kMax:
              text += "insufficient quota for " + rname + " in flavor " + fname + ", request > maximum capacity (" +
                      Amount(n.need) + " > " + Amount(n.limit) + ")" +
                      (critical ? " for a workload that never borrows" : "");
              break;
          }
        }
        return "couldn't assign flavors to pod set " + ps.name + ": " + text;
      };
      bool all_exceed = true, any_eligible = false;
      for (int f : group.flavors) {
        const FlavorSpec* spec = flavor_specs_[f];
        std::string mismatch = FlavorMismatch(*spec, ps);
        if (!mismatch.empty()) {
          notes.push_back({Note::kText, std::move(mismatch)});
          continue;
        }
        any_eligible = true;
        Mode mode = Mode::kFit;
        bool borrow = false;
        for (const auto& [ri, total] : requests) {
          const int fr = FlavorResource(f, ri);
          int64_t need = total;
          for (const auto& [nfr, amount] : a.needs)
            if (nfr == fr) need = SatAdd(need, amount);
          int64_t available = tree_.Available(cq.node, fr);
          int64_t potential = tree_.PotentialAvailable(cq.node, fr);
          if (critical) {
            available = std::min(available, node.nominal[fr] - node.usage[fr]);
            potential = std::min(potential, node.nominal[fr]);
          }
          if (need <= available) {
            if (SatAdd(node.usage[fr], need) > node.nominal[fr]) borrow = true;
          } else if (need <= potential) {
            mode = std::max(mode, Mode::kPreempt);
            if (SatAdd(node.usage[fr], need) > node.nominal[fr]) borrow = true;
            notes.push_back({Note::kUnused, "", f, ri, need, available});
          } else {
            mode = Mode::kNoFit;
            notes.push_back({Note::kMax, "", f, ri, need, potential});
          }
        }
        if (mode != Mode::kNoFit) all_exceed = false;
        options.push_back({f, mode, borrow});
        // Stop the search where flavorFungibility says so.
        if (mode == Mode::kFit && !borrow) break;
        if (mode == Mode::kFit && cq.spec->when_can_borrow == FungibilityPolicy::kMayStopSearch) break;
        if (mode == Mode::kPreempt && cq.spec->when_can_preempt == FungibilityPolicy::kMayStopSearch) break;
      }
      // Choose among the options considered.
      const Option* chosen = nullptr;
      auto first = [&](auto pred) -> const Option* {
        for (const auto& o : options)
          if (pred(o)) return &o;
        return nullptr;
      };
      chosen = first([](const Option& o) { return o.mode == Mode::kFit && !o.borrow; });
      const bool preemption_first = cq.spec->preference == FungibilityPreference::kPreemptionOverBorrowing;
      if (!chosen && preemption_first) {
        chosen = first([](const Option& o) { return o.mode == Mode::kPreempt && !o.borrow; });
      }
      if (!chosen) chosen = first([](const Option& o) { return o.mode == Mode::kFit; });
      if (!chosen) chosen = first([](const Option& o) { return o.mode == Mode::kPreempt && !o.borrow; });
      if (!chosen) chosen = first([](const Option& o) { return o.mode == Mode::kPreempt; });
      if (!chosen) {
        a.mode = Mode::kNoFit;
        a.reason = !any_eligible ? "NoMatchingFlavor" : all_exceed ? "ExceedsMaxQuota" : "WaitingForQuota";
        a.message = format_notes();
        return a;
      }
      if (chosen->mode == Mode::kPreempt && !any_waiting) {
        any_waiting = true;
        a.reason = "WaitingForQuota";
        a.message = format_notes();
      }
      a.mode = std::max(a.mode, chosen->mode);
      a.borrowing = a.borrowing || chosen->borrow;
      for (const auto& [ri, total] : requests) {
        psa.flavors[resource_names_[ri]] = flavor_specs_[chosen->flavor]->name;
        AddNeed(a.needs, FlavorResource(chosen->flavor, ri), total);
      }
    }
    a.pod_sets.push_back(std::move(psa));
  }
  return a;
}

namespace {

bool Unconstrained(const PodSetSpec& ps) {
  return ps.node_selector.empty() && ps.required_affinity.empty() && ps.tolerations.empty();
}

uint64_t ShapeHash(const WorkloadSpec& w) {
  uint64_t h = w.preemptible ? 1 : 2;
  auto mix = [&h](uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  const std::hash<std::string> text;
  for (const auto& ps : w.pod_sets) {
    mix(text(ps.name));
    mix(static_cast<uint64_t>(ps.count));
    mix(static_cast<uint64_t>(ps.min_count.value_or(-1)));
    for (const auto& [resource, amount] : ps.per_pod) {
      mix(text(resource));
      mix(static_cast<uint64_t>(amount));
    }
  }
  return h;
}

bool SameShape(const WorkloadSpec& a, const WorkloadSpec& b) {
  if (a.preemptible != b.preemptible || a.pod_sets.size() != b.pod_sets.size()) return false;
  for (size_t i = 0; i < a.pod_sets.size(); ++i) {
    const PodSetSpec& x = a.pod_sets[i];
    const PodSetSpec& y = b.pod_sets[i];
    if (x.name != y.name || x.count != y.count || x.min_count != y.min_count || x.per_pod != y.per_pod) return false;
  }
  return true;
}

}  // namespace

ClusterQueue::Shape* Scheduler::ShapeOf(const Workload& w, ClusterQueue& cq) {
  if (w.shape != 0) {  // numbered by the snapshot's maker: no pod sets to compare
    // (A queue's workloads come in runs of one shape: in scheduling order, those of a tier.)
    if (cq.last_shape_number == w.shape) return cq.last_shape;
    auto [it, fresh] = cq.shape_by_number.try_emplace(w.shape, nullptr);
    if (fresh) {
      it->second = &cq.shapes.emplace_back();
      it->second->example = w.spec;
    }
    cq.last_shape_number = w.shape;
    cq.last_shape = it->second;
    return it->second;
  }
  if (!std::all_of(w.spec->pod_sets.begin(), w.spec->pod_sets.end(), Unconstrained)) return nullptr;
  auto& bucket = cq.shape_index[ShapeHash(*w.spec)];
  for (ClusterQueue::Shape* shape : bucket)
    if (SameShape(*shape->example, *w.spec)) return shape;
  ClusterQueue::Shape& shape = cq.shapes.emplace_back();
  shape.example = w.spec;
  bucket.push_back(&shape);
  return &shape;
}

const Assignment& Scheduler::CachedAssign(const Workload& w, ClusterQueue& cq) {
  auto assign = [&] {
    std::vector<int32_t> counts;
    for (const auto& ps : w.spec->pod_sets) counts.push_back(ps.count);
    return Assign(w, counts);
  };
  ClusterQueue::Shape* shape = ShapeOf(w, cq);
  if (!shape) {
    unshaped_ = assign();
    return unshaped_;
  }
  const uint64_t version = tree_.TreeVersion(cq.node);
  if (shape->version != version) {
    shape->assignment = assign();
    shape->version = version;
  }
  return shape->assignment;
}

void Scheduler::Hold(Workload& w, const Needs& needs) {
  for (const auto& [fr, amount] : needs) tree_.AddUsage(w.cq, fr, amount);
  w.usage = needs;
}

void Scheduler::Release(Workload& w) {
  for (const auto& [fr, amount] : w.usage) tree_.RemoveUsage(w.cq, fr, amount);
}

// Dominant resource share of a ClusterQueue (optionally with `extra` added), divided by its
// weight: the largest fraction of the cohort's lendable quota it borrows, in parts per million.
int64_t Scheduler::Share(int cq_index, const Needs* extra) const {
  const ClusterQueue& cq = cqs_[cq_index];
  const auto& n = tree_.node(cq.node);
  if (n.parent < 0) return 0;
  const int root = tree_.Root(cq.node);
  int64_t dominant = 0;
  for (int fr = 0; fr < tree_.fr_count(); ++fr) {
    int64_t usage = n.usage[fr];
    if (extra)
      for (const auto& [f, a] : *extra)
        if (f == fr) usage = SatAdd(usage, a);
    const int64_t borrowed = usage - n.nominal[fr];
    const int64_t lendable = tree_.node(root).subtree[fr];
    if (borrowed <= 0 || lendable <= 0) continue;
    dominant = std::max<int64_t>(dominant, static_cast<int64_t>(static_cast<Wide>(borrowed) * 1000000 / lendable));
  }
  if (dominant == 0) return 0;
  if (n.fair_weight_milli <= 0) return kUnlimited;
  return static_cast<int64_t>(static_cast<Wide>(dominant) * 1000 / n.fair_weight_milli);
}

bool Scheduler::FailsAsBefore(const ClusterQueue& cq, const WorkloadSpec& ws, const Needs& needs,
                              bool within_nominal) const {
  // A search that failed for an unchanged tree fails again for a workload whose candidates are a
  // subset of the failed one's, taken in the same order, and whose need is larger: a lower
  // priority (in a queue that lets equal priorities preempt newer workloads, an equal priority
  // only if created no earlier), a larger need of the same resources and flavors (another one
  // may find other victims), the same tier (the critical tier must also stay within nominal
  // quota) and the same side of the nominal quota (which decides the cohort rules that apply).
  // Not when the failed search had evicted candidates, which go first whatever their priority
  // (a workload of lower priority, without them, releases others first and may find room), nor
  // under fair sharing, whose shares decide per victim whether it is taken.
  const bool newer_equal = cq.spec->within_cluster_queue == WithinClusterQueue::kLowerOrNewerEqualPriority;
  if (!cq.failed_reusable || cq.failed_version != tree_.TreeVersion(cq.node) || ws.priority > cq.failed_priority ||
      (newer_equal && ws.priority == cq.failed_priority && ws.creation_time < cq.failed_creation) ||
      ws.preemptible != cq.failed_preemptible || within_nominal != cq.failed_within_nominal ||
      needs.size() != cq.failed_needs.size()) {
    return false;
  }
  return std::all_of(cq.failed_needs.begin(), cq.failed_needs.end(), [&](const auto& fn) {
    for (const auto& [fr, a] : needs)
      if (fr == fn.first) return a >= fn.second;
    return false;
  });
}

std::optional<std::vector<PreemptDecision>> Scheduler::FindVictims(int wi, const Needs& needs) {
  Workload& w = wls_[wi];
  ClusterQueue& cq = cqs_[cq_of_node_.at(w.cq)];
  const WorkloadSpec& ws = *w.spec;
  const bool within_nominal = WithinNominal(cq, needs);
  if (FailsAsBefore(cq, ws, needs, within_nominal)) return std::nullopt;
  const int root = tree_.Root(cq.node);
  const bool fair = snap_.fair_sharing;
  const int64_t preemptor_share = fair ? Share(cq_of_node_.at(w.cq), &needs) : 0;

  struct Candidate {
    int wl;
    PreemptionReason reason;
  };
  std::vector<Candidate> candidates;
  auto uses_needed = [&](const Workload& v) {
    for (const auto& [fr, a] : v.usage)
      for (const auto& [nfr, na] : needs)
        if (fr == nfr && a > 0) return true;
    return false;
  };
  auto consider = [&](int vi, const ClusterQueue& vcq) {
    const Workload& v = wls_[vi];
    if (v.victim || v.admitted_this_pass || !v.spec->preemptible || !uses_needed(v)) return;
    const int32_t vp = v.spec->priority;
    // Minimum runtime: the victim's queue protects what it admitted recently.
    const int64_t min_runtime = vcq.node == cq.node ? vcq.spec->preempt_min_runtime : vcq.spec->reclaim_min_runtime;
    if (min_runtime > 0 && snap_.now > 0 && snap_.now - v.spec->admission_time < min_runtime) return;
    if (vcq.node == cq.node) {
      bool ok = false;
      switch (cq.spec->within_cluster_queue) {
        case WithinClusterQueue::kNever:
          break;
        case WithinClusterQueue::kLowerPriority:
          ok = vp < ws.priority;
          break;
        case WithinClusterQueue::kLowerOrNewerEqualPriority:
          ok = vp < ws.priority || (vp == ws.priority && v.spec->creation_time > ws.creation_time);
          break;
      }
      if (ok) candidates.push_back({vi, PreemptionReason::kInClusterQueue});
      return;
    }
    if (fair) {
      if (cq.spec->reclaim_within_cohort == ReclaimWithinCohort::kNever) return;
      if (cq.spec->reclaim_within_cohort == ReclaimWithinCohort::kLowerPriority && vp >= ws.priority) return;
      candidates.push_back({vi, PreemptionReason::kInCohortFairSharing});
      return;
    }
    if (within_nominal) {
      bool ok = cq.spec->reclaim_within_cohort == ReclaimWithinCohort::kAny ||
                (cq.spec->reclaim_within_cohort == ReclaimWithinCohort::kLowerPriority && vp < ws.priority);
      if (ok) candidates.push_back({vi, PreemptionReason::kInCohortReclamation});
    } else if (cq.spec->borrow_within_cohort == BorrowWithinCohort::kLowerPriority && vp < ws.priority &&
               (!cq.spec->borrow_max_priority_threshold || vp <= *cq.spec->borrow_max_priority_threshold)) {
      candidates.push_back({vi, PreemptionReason::kInCohortReclaimWhileBorrowing});
    }
  };
  // Only quota a queue borrows can be taken back from it (checked again as victims go: a queue
  // that borrows nothing now borrows nothing after a release either).
  auto borrowing_in_needed = [&](int node) {
    const auto& n = tree_.node(node);
    for (const auto& [fr, a] : needs)
      if (n.usage[fr] > n.nominal[fr]) return true;
    return false;
  };
  for (int vi : cq.admitted) consider(vi, cq);
  if (tree_.node(cq.node).parent >= 0 && (cq.spec->reclaim_within_cohort != ReclaimWithinCohort::kNever ||
                                          cq.spec->borrow_within_cohort != BorrowWithinCohort::kNever)) {
    for (int oi : cqs_of_root_[static_cast<size_t>(root)]) {
      const ClusterQueue& other = cqs_[static_cast<size_t>(oi)];
      if (other.node == cq.node || !borrowing_in_needed(other.node)) continue;
      for (int vi : other.admitted) consider(vi, other);
    }
  }
  // Already-evicted first, other queues before our own, lower priority first (Kueue's order);
  // then the least work lost per resource freed: the shortest time since its last save (without
  // checkpoints, the most recently admitted, as Kueue); then by key for determinism.
  const int64_t now = snap_.now;
  std::sort(candidates.begin(), candidates.end(), [&](const Candidate& a, const Candidate& b) {
    const Workload& x = wls_[a.wl];
    const Workload& y = wls_[b.wl];
    if (x.spec->evicted != y.spec->evicted) return x.spec->evicted;
    const bool xo = x.cq != w.cq, yo = y.cq != w.cq;
    if (xo != yo) return xo;
    if (x.spec->priority != y.spec->priority) return x.spec->priority < y.spec->priority;
    const int64_t xs = SecondsSinceSave(*x.spec, now), ys = SecondsSinceSave(*y.spec, now);
    if (xs != ys) return xs < ys;
    if (x.spec->admission_time != y.spec->admission_time) return x.spec->admission_time > y.spec->admission_time;
    return x.spec->key < y.spec->key;
  });

  const QuotaTree::Versions saved = tree_.SaveVersions(cq.node);
  std::vector<Candidate> removed;
  for (const Candidate& c : candidates) {
    if (Fits(cq, w, needs)) break;
    Workload& v = wls_[c.wl];
    if (v.cq != w.cq) {
      if (!borrowing_in_needed(v.cq)) continue;
      if (fair) {
        const int vq = cq_of_node_.at(v.cq);
        Needs minus;
        for (const auto& [fr, a] : v.usage) minus.emplace_back(fr, -a);
        if (Share(vq, &minus) < preemptor_share) continue;
      }
    }
    Release(v);
    removed.push_back(c);
  }
  if (!Fits(cq, w, needs)) {
    for (auto it = removed.rbegin(); it != removed.rend(); ++it) Hold(wls_[it->wl], wls_[it->wl].usage);
    tree_.RestoreVersions(saved);  // usage is exactly as it was
    cq.failed_version = tree_.TreeVersion(cq.node);
    cq.failed_priority = ws.priority;
    cq.failed_creation = ws.creation_time;
    cq.failed_preemptible = ws.preemptible;
    cq.failed_within_nominal = within_nominal;
    cq.failed_reusable = !fair && std::none_of(candidates.begin(), candidates.end(),
                                               [&](const Candidate& c) { return wls_[c.wl].spec->evicted; });
    cq.failed_needs = needs;
    return std::nullopt;
  }
  // Minimal: give back every victim the preemptor can do without, the one that would lose the
  // most work first (ties: last chosen first).
  std::vector<size_t> give_back(removed.size());
  std::iota(give_back.rbegin(), give_back.rend(), size_t{0});
  if (now > 0) {
    std::vector<LostWork> lost;
    for (const Candidate& c : removed) lost.push_back(LostWorkOf(*wls_[c.wl].spec, now));
    std::stable_sort(give_back.begin(), give_back.end(), [&](size_t a, size_t b) { return lost[b] < lost[a]; });
  }
  std::vector<bool> kept(removed.size(), false);
  for (size_t i : give_back) {
    Workload& v = wls_[removed[i].wl];
    Hold(v, v.usage);
    if (Fits(cq, w, needs)) continue;
    Release(v);
    kept[i] = true;
  }
  std::vector<Candidate> victims;
  for (size_t i = 0; i < removed.size(); ++i)
    if (kept[i]) victims.push_back(removed[i]);
  std::vector<PreemptDecision> out;
  for (const Candidate& c : victims) {
    Workload& v = wls_[c.wl];
    v.victim = true;
    auto& list = cqs_[cq_of_node_.at(v.cq)].admitted;
    list.erase(std::find(list.begin(), list.end(), c.wl));
    out.push_back({v.spec->key, ws.key, tree_.node(v.cq).name, c.reason});
  }
  return out;
}

bool Scheduler::TryAdmit(int wi) {
  Workload& w = wls_[wi];
  const WorkloadSpec& ws = *w.spec;
  ClusterQueue& cq = cqs_[cq_of_node_.at(w.cq)];
  // A workload of the same shape and priority failed on this very tree: so does this one (the
  // outcome depends on nothing else, unless newer workloads of equal priority may be preempted).
  ClusterQueue::Shape* shape = ShapeOf(w, cq);
  const bool memo = shape && cq.spec->within_cluster_queue != WithinClusterQueue::kLowerOrNewerEqualPriority;
  if (memo && shape->failed_version == tree_.TreeVersion(cq.node) && shape->failed_priority == w.priority &&
      shape->failed_may_preempt == ws.may_preempt) {
    pending_reason_[wi] = shape->failed_reason;
    pending_message_[wi] = shape->failed_message;
    return false;
  }
  const Assignment& cached = CachedAssign(w, cq);

  std::vector<PreemptDecision> victims;
  bool ok = cached.mode == Mode::kFit && Fits(cq, w, cached.needs);
  if (!ok && cached.mode == Mode::kPreempt && CanPreempt(cq, ws)) {
    auto found = FindVictims(wi, cached.needs);
    if (found) {
      victims = std::move(*found);
      ok = true;
    }
  }
  if (ok) {
    Admit(wi, cq, cached);
    for (auto& v : victims) out_.preempted.push_back(std::move(v));
    return true;
  }
  // Partial admission: the largest count >= minCount that fits without preemption.
  std::vector<int32_t> counts;
  for (const auto& ps : ws.pod_sets) counts.push_back(ps.count);
  for (size_t p = 0; p < ws.pod_sets.size(); ++p) {
    const auto& ps = ws.pod_sets[p];
    if (!ps.min_count || *ps.min_count >= ps.count) continue;
    int32_t lo = std::max<int32_t>(1, *ps.min_count), hi = ps.count - 1, best = -1;
    Assignment best_a;
    while (lo <= hi) {
      const int32_t mid = lo + (hi - lo) / 2;
      std::vector<int32_t> c = counts;
      c[p] = mid;
      Assignment trial = Assign(w, c);
      if (trial.mode == Mode::kFit && Fits(cq, w, trial.needs)) {
        best = mid;
        best_a = std::move(trial);
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    if (best >= 0) {
      Admit(wi, cq, std::move(best_a));
      return true;
    }
    break;  // only one pod set may use partial admission
  }
  // (The searches above left the tree as it was, so `cached` is still this tree's assignment.)
  const Assignment& a = cached;
  pending_reason_[wi] = a.reason.empty() ? std::string_view("WaitingForQuota") : Keep(a.reason);
  std::string message = a.message;
  if (a.mode == Mode::kPreempt && CanPreempt(cq, ws)) {
    message += "; no workload can be preempted to make room";
  } else if (a.mode == Mode::kPreempt && CanPreempt(cq) && !ws.may_preempt) {
    message += "; over its budget, it is admitted only into free capacity and preempts no one";
  }
  pending_message_[wi] = Keep(std::move(message));
  if (memo) {
    shape->failed_version = tree_.TreeVersion(cq.node);
    shape->failed_priority = ws.priority;
    shape->failed_may_preempt = ws.may_preempt;
    shape->failed_reason = pending_reason_[wi];
    shape->failed_message = pending_message_[wi];
  }
  return false;
}

bool Scheduler::OverBudget(int wi) {
  const WorkloadSpec& s = *wls_[wi].spec;
  if (s.budget_charges.empty() || BudgetHolds(s)) return false;
  for (const BudgetCharge& c : s.budget_charges) {
    if (c.pool < budget_left_.size() && budget_left_[c.pool] >= c.amount) continue;
    pending_reason_[wi] = "BudgetExhausted";
    pending_message_[wi] = c.pool < budget_left_.size() ? std::string_view(snap_.budget_pools[c.pool].message)
                                                        : std::string_view("it draws on a budget that is not known");
    break;
  }
  return true;
}

void Scheduler::Admit(int wi, ClusterQueue& cq, Assignment a, bool first_round) {
  Workload& w = wls_[wi];
  Hold(w, a.needs);
  for (const BudgetCharge& c : w.spec->budget_charges) budget_left_[c.pool] -= c.amount;
  w.admitted = w.admitted_this_pass = true;
  cq.admitted.push_back(wi);
  out_.admitted.push_back({w.spec->key, cq.spec->name, std::move(a.pod_sets), a.borrowing, first_round, w.index});
}

void Scheduler::AdmitWithinNominal() {
  // Queues whose next workload would borrow or preempt: their later workloads wait for the
  // second round too, so that nothing overtakes it within its queue.
  std::vector<char> stopped(cqs_.size(), 0);
  for (int wi : pending_) {
    if (AtLimit()) return;
    Workload& w = wls_[wi];
    if (w.inadmissible || w.cq < 0) continue;
    const int ci = cq_of_node_.at(w.cq);
    ClusterQueue& cq = cqs_[ci];
    if (!cq.inactive.empty() || stopped[static_cast<size_t>(ci)]) continue;
    if (!w.spec->budget_charges.empty() && !BudgetHolds(*w.spec)) {
      // (The second round gives the reason.)
      if (cq.spec->queueing_strategy == QueueingStrategy::kStrictFIFO) stopped[static_cast<size_t>(ci)] = 1;
      continue;
    }
    const Assignment& a = CachedAssign(w, cq);
    if (a.mode != Mode::kFit || a.borrowing || !Fits(cq, w, a.needs)) {
      // BestEffortFIFO passes over a workload that cannot be admitted at all, as the second
      // round will.
      const bool never = a.mode == Mode::kNoFit || (a.mode == Mode::kPreempt && !CanPreempt(cq, *w.spec));
      if (!never || cq.spec->queueing_strategy == QueueingStrategy::kStrictFIFO) stopped[static_cast<size_t>(ci)] = 1;
      continue;
    }
    Admit(wi, cq, a, true);
  }
}

void Scheduler::SortPending(std::vector<uint32_t>& pending) const {
  // Sorted as compact entries: the specs are large and scattered, and reading them in every
  // comparison costs cache misses.
  struct Order {
    int32_t priority;
    int64_t creation_time;
    std::string_view key;  // (a view: comparing reads the text without the spec's string first)
    uint32_t index;
  };
  std::vector<Order> order;
  order.reserve(pending.size());
  for (uint32_t i : pending) {
    const WorkloadSpec& s = Spec(i);
    order.push_back({s.priority, s.creation_time, s.key, i});
  }
  std::sort(order.begin(), order.end(), [](const Order& x, const Order& y) { return InSchedulingOrder(x, y); });
  for (size_t i = 0; i < order.size(); ++i) pending[i] = order[i].index;
}

bool Scheduler::GivenOrderUsable() const {
  const size_t n = WorkloadCount();
  if (snap_.order.size() != n) return false;
  std::vector<bool> seen(n, false);
  for (uint32_t i : snap_.order) {
    if (i >= n || seen[i]) return false;
    seen[i] = true;
  }
  return true;
}

bool Scheduler::NothingWaits() const {
  for (size_t i = 0; i < WorkloadCount(); ++i)
    if (!Spec(i).admission) return false;
  return true;
}

size_t Scheduler::MakeEntries() {
  std::unordered_map<std::string, int> cq_by_name;
  for (size_t i = 0; i < cqs_.size(); ++i) cq_by_name[cqs_[i].spec->name] = static_cast<int>(i);
  const size_t n = WorkloadCount();
  by_index_.resize(n);
  size_t admitted_count = 0;
  bool last_cq_known = false;
  std::string_view last_cq_name;
  int last_cq_node = -1;
  for (size_t i = 0; i < n; ++i) {
    const WorkloadSpec* s = &Spec(i);
    Workload& w = by_index_[i];
    w.spec = s;
    w.index = static_cast<uint32_t>(i);
    w.inadmissible = !s->inadmissible_reason.empty();
    w.priority = s->priority;
    w.shape = s->shape;
    w.key = s->key;
    w.admitted = s->admission.has_value();
    admitted_count += w.admitted;
    // (The snapshot's neighbours are often of one queue: the last name found is tried first.)
    const std::string& cq_name = s->admission ? s->admission->cluster_queue : s->cluster_queue;
    if (!last_cq_known || cq_name != last_cq_name) {
      auto it = cq_by_name.find(cq_name);
      last_cq_node = it == cq_by_name.end() ? -1 : cqs_[it->second].node;
      last_cq_name = cq_name;
      last_cq_known = true;
    }
    w.cq = last_cq_node;
  }
  return admitted_count;
}

size_t Scheduler::LayOutWorkloads() {
  // (Made in the snapshot's order, which reads the large specs front to back, then laid out.)
  const size_t first_pending = MakeEntries();
  const size_t n = WorkloadCount();
  wls_.reserve(n);
  for (Workload& w : by_index_)
    if (w.admitted) wls_.push_back(std::move(w));
  if (GivenOrderUsable()) {
    for (uint32_t i : snap_.order)
      if (!by_index_[i].admitted) wls_.push_back(std::move(by_index_[i]));
  } else {
    std::vector<uint32_t> pending;
    pending.reserve(n - first_pending);
    for (size_t i = 0; i < n; ++i)
      if (!by_index_[i].admitted) pending.push_back(static_cast<uint32_t>(i));
    SortPending(pending);
    for (uint32_t i : pending) wls_.push_back(std::move(by_index_[i]));
  }
  if (!snap_.admission_fair_sharing.queues.empty()) OrderByAdmissionFairSharing(first_pending);
  return first_pending;
}

double Scheduler::EntryPenalty(const WorkloadSpec& w) const {
  const AdmissionFairSharing& afs = snap_.admission_fair_sharing;
  double units = 0;
  for (const PodSetSpec& ps : w.pod_sets) {
    for (const auto& [resource, milli] : ps.per_pod) {
      auto weight = afs.resource_weights.find(resource);
      units += double(milli) * ps.count / 1000 * (weight == afs.resource_weights.end() ? 1.0 : weight->second);
    }
  }
  return units * afs.entry_penalty;
}

void Scheduler::OrderByAdmissionFairSharing(size_t first_pending) {
  const AdmissionFairSharing& afs = snap_.admission_fair_sharing;
  // Per ClusterQueue: the places its fair-shared workloads hold in scheduling order, and per
  // LocalQueue its workloads in that order. The places are then filled again, each time from the
  // LocalQueue with the least usage (the earlier head on a tie), which takes the entry penalty.
  std::map<int, std::vector<size_t>> places;
  std::map<int, std::map<int32_t, std::deque<size_t>>> queues;
  for (size_t i = first_pending; i < wls_.size(); ++i) {
    const int32_t q = wls_[i].spec->fair_queue;
    if (q < 0 || static_cast<size_t>(q) >= afs.queues.size()) continue;
    places[wls_[i].cq].push_back(i);
    queues[wls_[i].cq][q].push_back(i);
  }
  std::vector<Workload> taken;
  for (auto& [cq, by_queue] : queues) {
    std::map<int32_t, double> usage;
    for (const auto& [q, list] : by_queue) usage[q] = afs.queues[q].usage;
    taken.clear();
    while (taken.size() < places[cq].size()) {
      int32_t best = -1;
      for (const auto& [q, list] : by_queue) {
        if (list.empty()) continue;
        const double share = usage[q] / std::max(afs.queues[q].weight, 1e-9);
        const double best_share = best < 0 ? 0 : usage[best] / std::max(afs.queues[best].weight, 1e-9);
        if (best < 0 || share < best_share || (share == best_share && list.front() < by_queue[best].front())) best = q;
      }
      const size_t i = by_queue[best].front();
      by_queue[best].pop_front();
      usage[best] += EntryPenalty(*wls_[i].spec);
      taken.push_back(std::move(wls_[i]));
    }
    for (size_t k = 0; k < taken.size(); ++k) wls_[places[cq][k]] = std::move(taken[k]);
  }
}

void Scheduler::HoldAdmittedQuota(size_t first_pending) {
  bool last_fr_known = false;
  std::string_view last_resource, last_flavor;
  int last_ri = -1, last_fi = -1;
  for (size_t i = 0; i < first_pending; ++i) {
    Workload& w = wls_[i];
    if (w.cq < 0) continue;  // its ClusterQueue is gone: it holds nothing we can account
    ClusterQueue& cq = cqs_[cq_of_node_.at(w.cq)];
    Needs needs;
    for (const auto& psa : w.spec->admission->pod_sets) {
      const PodSetSpec* ps = nullptr;
      for (const auto& p : w.spec->pod_sets)
        if (p.name == psa.name) ps = &p;
      for (const auto& [resource, flavor] : psa.flavors) {
        // (Most admissions name the same few resources and flavors: the last ones found are
        // tried first.)
        if (!last_fr_known || resource != last_resource) {
          last_ri = ResourceIndex(resource);
          last_resource = resource;
        }
        if (!last_fr_known || flavor != last_flavor) {
          auto fi = flavor_index_.find(flavor);
          last_fi = fi == flavor_index_.end() ? -1 : fi->second;
          last_flavor = flavor;
        }
        last_fr_known = true;
        const int ri = last_ri, fi = last_fi;
        if (ri < 0 || fi < 0) continue;
        int64_t amount = 0;
        auto u = psa.usage.find(resource);
        if (u != psa.usage.end()) {
          amount = u->second;
        } else if (ps) {
          auto r = ps->per_pod.find(resource);
          if (r != ps->per_pod.end() && __builtin_mul_overflow(r->second, static_cast<int64_t>(psa.count), &amount))
            amount = kUnlimited;
        }
        AddNeed(needs, FlavorResource(fi, ri), amount);
      }
    }
    Hold(w, needs);
    cq.admitted.push_back(static_cast<int>(i));
  }
}

void Scheduler::StartPending(size_t first_pending) {
  pending_.resize(wls_.size() - first_pending);
  std::iota(pending_.begin(), pending_.end(), static_cast<int>(first_pending));
  pending_reason_.resize(wls_.size());
  pending_message_.resize(wls_.size());
  considered_.assign(limits_.max_changes > 0 ? wls_.size() : 0, 0);
  budget_left_.clear();
  for (const BudgetPool& p : snap_.budget_pools) budget_left_.push_back(p.remaining);
}

void Scheduler::Consider(int wi) {
  if (!considered_.empty()) considered_[static_cast<size_t>(wi)] = 1;
  Workload& w = wls_[wi];
  if (w.inadmissible) {
    pending_reason_[wi] = w.spec->inadmissible_reason;
    pending_message_[wi] = w.spec->inadmissible_message;
    return;
  }
  const WorkloadSpec& s = *w.spec;
  if (w.cq < 0) {
    pending_reason_[wi] = "Inadmissible";
    pending_message_[wi] = s.cluster_queue.empty() ? std::string_view("the workload names no ClusterQueue")
                                                   : Keep("ClusterQueue " + s.cluster_queue + " doesn't exist");
    return;
  }
  const int ci = cq_of_node_.at(w.cq);
  ClusterQueue& cq = cqs_[ci];
  if (!cq.inactive.empty()) {
    pending_reason_[wi] = cq.spec->stopped ? "Stopped" : "Inadmissible";
    if (cq.inactive_kept.empty()) cq.inactive_kept = Keep(cq.inactive);
    pending_message_[wi] = cq.inactive_kept;
    return;
  }
  if (cq.blocked) {
    pending_reason_[wi] = "WaitingForQuota";
    pending_message_[wi] = cq.blocked_by;
    return;
  }
  const bool admitted = !OverBudget(wi) && TryAdmit(wi);
  if (!admitted && cq.spec->queueing_strategy == QueueingStrategy::kStrictFIFO) {
    cq.blocked = true;
    cq.blocked_by =
        Keep("waiting behind " + s.key + ", which is ahead of it in StrictFIFO ClusterQueue " + cq.spec->name);
  }
}

void Scheduler::ConsiderInOrder() {
  for (int wi : pending_) {
    if (AtLimit()) break;
    if (!wls_[wi].admitted) Consider(wi);
  }
}

void Scheduler::ConsiderByFairShare() {
  std::unordered_map<int, std::vector<int>> by_cq;
  for (int wi : pending_) by_cq[wls_[wi].cq].push_back(wi);
  std::vector<int32_t> rank(wls_.size(), 0);  // place in scheduling order, by workload
  for (size_t i = 0; i < pending_.size(); ++i) rank[pending_[i]] = static_cast<int32_t>(i);
  struct Head {
    int64_t share;
    int wl;
    size_t pos;
    int cq_node;
  };
  auto later = [&](const Head& a, const Head& b) {
    if (a.share != b.share) return a.share > b.share;
    return rank[b.wl] < rank[a.wl];
  };
  std::priority_queue<Head, std::vector<Head>, decltype(later)> heads(later);
  auto push = [&](int node, size_t pos) {
    const auto& list = by_cq[node];
    if (pos >= list.size()) return;
    const int wi = list[pos];
    int64_t share = 0;
    if (node >= 0 && cqs_[cq_of_node_.at(node)].inactive.empty()) {
      std::vector<int32_t> counts;
      for (const auto& ps : wls_[wi].spec->pod_sets) counts.push_back(ps.count);
      Assignment a = Assign(wls_[wi], counts);
      share = Share(cq_of_node_.at(node), &a.needs);
    }
    heads.push({share, wi, pos, node});
  };
  for (const auto& [node, list] : by_cq) push(node, 0);
  while (!heads.empty() && !AtLimit()) {
    Head h = heads.top();
    heads.pop();
    Consider(h.wl);
    push(h.cq_node, h.pos + 1);
  }
}

void Scheduler::ListPending() {
  std::vector<int32_t> queued(cqs_.size(), 0);
  out_.pending.reserve(pending_.size());
  for (int wi : pending_) {
    const Workload& w = wls_[wi];
    if (w.admitted) continue;
    if (AtLimit() && !considered_[static_cast<size_t>(wi)]) {
      ++out_.not_considered;
      continue;
    }
    const int32_t position = w.cq < 0 ? -1 : queued[cq_of_node_.at(w.cq)]++;
    out_.pending.push_back({w.key, pending_reason_[wi], pending_message_[wi], static_cast<size_t>(w.index), position});
  }
}

Decisions Scheduler::Run() {
  if (NothingWaits()) return std::move(out_);
  Index();
  BuildTree();
  const size_t first_pending = LayOutWorkloads();
  HoldAdmittedQuota(first_pending);
  StartPending(first_pending);
  if (!snap_.fair_sharing) {
    // As Kueue orders a scheduling cycle: workloads that fit in their own queue's nominal quota
    // go before any that would borrow or preempt, whatever their priority, so that capacity
    // freed in a cohort goes to the queue it belongs to first instead of being lent out and then
    // taken back by preemption.
    AdmitWithinNominal();
    ConsiderInOrder();
  } else {
    ConsiderByFairShare();
  }
  ListPending();
  return std::move(out_);
}

}  // namespace

Decisions Schedule(const Snapshot& snapshot) { return Scheduler(snapshot).Run(); }

Workspace::Workspace() : buffers_(std::make_unique<Buffers>()) {}
Workspace::~Workspace() = default;

void Workspace::Recycle(Decisions&& decisions) { GiveBack(buffers_->decisions, decisions.pending); }

Decisions Schedule(const Snapshot& snapshot, Workspace& workspace, const ScheduleLimits& limits) {
  return Scheduler(snapshot, workspace.buffers_.get(), limits).Run();
}

uint32_t ShapeTable::Of(const WorkloadSpec& w) {
  if (!std::all_of(w.pod_sets.begin(), w.pod_sets.end(), Unconstrained)) return 0;
  // Every part the engine's look-alike test compares (SameShape), each text with its length
  // first, so that no two different shapes write the same text.
  std::string text(1, w.preemptible ? 'p' : 'c');
  auto add_text = [&text](const std::string& t) { text.append(std::to_string(t.size())).append(":").append(t); };
  auto add_number = [&text](int64_t v) { text.append(std::to_string(v)).append(";"); };
  for (const auto& ps : w.pod_sets) {
    add_text(ps.name);
    add_number(ps.count);
    if (ps.min_count)
      add_number(*ps.min_count);
    else
      text.append("-;");
    add_number(static_cast<int64_t>(ps.per_pod.size()));
    for (const auto& [resource, amount] : ps.per_pod) {
      add_text(resource);
      add_number(amount);
    }
  }
  if (auto it = ids_.find(text); it != ids_.end()) return it->second;
  if (ids_.size() >= max_shapes_) return 0;
  const uint32_t id = static_cast<uint32_t>(ids_.size()) + 1;
  ids_.emplace(std::move(text), id);
  return id;
}

size_t KeepFirstAdmissions(Decisions& d, size_t max_changes) {
  if (d.admitted.size() + d.preempted.size() <= max_changes) return 0;
  std::unordered_map<std::string_view, size_t> victims;  // per preemptor
  for (const auto& p : d.preempted) ++victims[p.preemptor];
  size_t kept = 0, changes = 0;
  for (; kept < d.admitted.size(); ++kept) {
    auto it = victims.find(d.admitted[kept].workload);
    const size_t cost = 1 + (it == victims.end() ? 0 : it->second);
    if (kept > 0 && changes + cost > max_changes) break;
    changes += cost;
  }
  const size_t dropped = d.admitted.size() - kept;
  std::unordered_set<std::string_view> preemptors;
  for (size_t i = 0; i < kept; ++i) preemptors.insert(d.admitted[i].workload);
  // (The views point into the kept admissions, which the resize below leaves in place.)
  d.preempted.erase(std::remove_if(d.preempted.begin(), d.preempted.end(),
                                   [&](const PreemptDecision& p) { return !preemptors.count(p.preemptor); }),
                    d.preempted.end());
  d.admitted.resize(kept);
  return dropped;
}

}  // namespace rota::admission
