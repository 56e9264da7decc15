#include "visibility/pending_view.h"

#include <algorithm>

namespace rota::visibility {
namespace {

std::string NameOf(const std::string& ns_name) {
  const size_t slash = ns_name.find('/');
  return slash == std::string::npos ? ns_name : ns_name.substr(slash + 1);
}

PendingEntry EntryOf(const api::SnapshotBuilder& builder, const admission::PendingDecision& p) {
  const api::Workload& w = builder.ObjectAt(p.index);
  const admission::WorkloadSpec& spec = builder.snapshot().workloads[p.index];
  PendingEntry e;
  e.ns = w.metadata.namespace_;
  e.name = w.metadata.name;
  e.uid = w.metadata.uid;
  e.created = w.metadata.creation_timestamp;
  e.local_queue = NameOf(builder.LocalQueueOf(p.index));
  e.cluster_queue = spec.cluster_queue;
  e.priority = spec.priority;
  e.reason = std::string(p.reason);
  e.message = std::string(p.message);
  if (w.metadata.extra.is_object() && w.metadata.extra.contains("ownerReferences"))
    e.owner_references = w.metadata.extra["ownerReferences"];
  e.snapshot_index = p.index;
  return e;
}

}  // namespace

PendingView MakePendingView(const api::SnapshotBuilder& builder, const admission::Decisions& d,
                            const RunTimeHistory& history, int64_t now, uint64_t version) {
  PendingView v;
  v.now = now;
  v.version = version;
  v.snapshot = builder.snapshot();
  v.snapshot.now = now;
  // A preemptor held while its victims stop (or checkpoint) waits for quota like any other in the
  // forecast: it starts once they are gone.
  for (admission::WorkloadSpec& w : v.snapshot.workloads)
    if (w.inadmissible_reason == "WaitingForQuota") w.inadmissible_reason.clear();
  v.run_times.reserve(v.snapshot.workloads.size());
  for (size_t i = 0; i < v.snapshot.workloads.size(); ++i) {
    const admission::WorkloadSpec& w = v.snapshot.workloads[i];
    const std::string& cq = w.admission ? w.admission->cluster_queue : w.cluster_queue;
    v.run_times.push_back(ExpectedRunTime(builder.ObjectAt(i), cq, history));
  }
  // In scheduling order: the controller appends to the pass's list those it holds back (a
  // preemptor waiting for its victims), which keep their place in their queues. (A pass that
  // stopped at its change limit lists only what it considered: the rest are seen next time.)
  std::vector<const admission::PendingDecision*> order;
  order.reserve(d.pending.size());
  for (const admission::PendingDecision& p : d.pending) order.push_back(&p);
  const auto& ws = v.snapshot.workloads;
  std::stable_sort(order.begin(), order.end(), [&ws](const auto* a, const auto* b) {
    return admission::InSchedulingOrder(ws[a->index], ws[b->index]);
  });
  v.entries.reserve(d.pending.size());
  for (const admission::PendingDecision* pp : order) {
    const admission::PendingDecision& p = *pp;
    // (A deactivated workload is in no queue, as in Kueue.)
    if (v.snapshot.workloads[p.index].inadmissible_reason == "Inactive") continue;
    PendingEntry e = EntryOf(builder, p);
    const auto n = static_cast<uint32_t>(v.entries.size());
    if (!e.cluster_queue.empty()) {
      // Positions in the pass's scheduling order, counting those the engine passed through for a
      // reason of the controller's (a preemptor held for its victims is still in its queue).
      std::vector<uint32_t>& queue = v.by_cluster_queue[e.cluster_queue];
      e.position_in_cluster_queue = static_cast<int32_t>(queue.size());
      queue.push_back(n);
    }
    std::vector<uint32_t>& local = v.by_local_queue[e.ns + "/" + e.local_queue];
    e.position_in_local_queue = static_cast<int32_t>(local.size());
    local.push_back(n);
    v.entries.push_back(std::move(e));
  }
  return v;
}

}  // namespace rota::visibility
