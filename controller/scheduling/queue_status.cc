#include "scheduling/queue_status.h"

#include <algorithm>

#include "rota/apiclient/client.h"
#include "scheduling/workload_status.h"

namespace rota::controller {
namespace {

using api::Json;

Json UsageJson(const std::vector<api::ResourceGroup>& groups, const QueueCounts& c, bool borrowed_from_nominal) {
  Json out = Json::array();
  for (const auto& g : groups) {
    for (const auto& f : g.flavors) {
      Json resources = Json::array();
      for (const auto& q : f.resources) {
        auto it = c.usage.find({f.name, q.name});
        const int64_t total = it == c.usage.end() ? 0 : it->second;
        Json r = {{"name", q.name}, {"total", FormatAmount(q.name, total)}};
        const int64_t borrowed = borrowed_from_nominal ? std::max<int64_t>(0, total - q.nominal_quota.milli()) : 0;
        r["borrowed"] = FormatAmount(q.name, borrowed);
        resources.push_back(r);
      }
      out.push_back({{"name", f.name}, {"resources", resources}});
    }
  }
  return out;
}

Json CountsJson(const QueueCounts& c, const Json& usage) {
  return {{"pendingWorkloads", c.pending},
          {"reservingWorkloads", c.admitted},
          {"admittedWorkloads", c.admitted},
          {"flavorsReservation", usage},
          {"flavorsUsage", usage}};
}

// Whether the object's current status (as JSON) shows every field of `status`.
bool Shows(const Json& current, const Json& status) {
  for (const auto& [k, v] : status.items())
    if (!current.contains(k) || current[k] != v) return false;
  return true;
}

struct Active {
  std::string status, reason, message;
};

Active ActiveOf(const api::ClusterQueue& cq, const std::set<std::string>& flavors) {
  std::string missing;
  for (const auto& g : cq.spec.resource_groups)
    for (const auto& f : g.flavors)
      if (!flavors.count(f.name)) missing += (missing.empty() ? "" : ", ") + f.name;
  if (!cq.unusable.empty()) {
    return {"False", "InvalidSpec", "Can't admit new workloads: rota cannot use its spec: " + cq.unusable};
  }
  if (cq.spec.stop_policy != api::StopPolicy::kNone) return {"False", "Stopped", "ClusterQueue is stopped"};
  if (!missing.empty()) {
    return {"False", "FlavorNotFound", "Can't admit new workloads: references missing ResourceFlavor(s): " + missing};
  }
  return {"True", "Ready", "Can admit new workloads"};
}

StatusWriter::Write QueueWrite(const char* kind, const std::string& ns, const std::string& name, Json status) {
  Json metadata = {{"name", name}};
  if (!ns.empty()) metadata["namespace"] = ns;
  const bool cluster = std::string(kind) == "ClusterQueue";
  return {cluster ? apiclient::resources::kClusterQueues.plural : apiclient::resources::kLocalQueues.plural,
          ns,
          name,
          {{"apiVersion", api::kApiVersion},
           {"kind", kind},
           {"metadata", std::move(metadata)},
           {"status", std::move(status)}}};
}

}  // namespace

std::optional<Json> ClusterQueueStatusChange(const api::ClusterQueue& cq, const QueueCounts& c,
                                             const std::set<std::string>& flavors, const std::string& now) {
  const Active active = ActiveOf(cq, flavors);
  Json status = CountsJson(c, UsageJson(cq.spec.resource_groups, c, true));
  // Unchanged? Compare with what the object has (conditions by status, reason and message).
  const api::ClusterQueueStatus current = cq.status.value_or(api::ClusterQueueStatus{});
  const api::Condition* cur = api::FindCondition(current.conditions, "Active");
  const bool same_active = cur && std::string(api::EnumName(cur->status)) == active.status;
  if (same_active && cur->reason == active.reason && cur->message == active.message &&
      Shows(api::EncodeValue(current), status)) {
    return std::nullopt;
  }
  status["conditions"] = Json::array({{{"type", "Active"},
                                       {"status", active.status},
                                       {"reason", active.reason},
                                       {"message", active.message},
                                       {"lastTransitionTime", same_active ? cur->last_transition_time : now}}});
  return status;
}

std::optional<Json> LocalQueueStatusChange(const api::LocalQueue& lq, const api::ClusterQueue* cq,
                                           const QueueCounts& c) {
  static const std::vector<api::ResourceGroup> kNoGroups;
  Json status = CountsJson(c, UsageJson(cq ? cq->spec.resource_groups : kNoGroups, c, false));
  if (Shows(api::EncodeValue(lq.status.value_or(api::LocalQueueStatus{})), status)) return std::nullopt;
  return status;
}

bool QueueStatus::Wanted(const std::string& key, const std::string& versions, const QueueCounts& c, const Pass& pass) {
  auto memo = memo_.find(key);
  if (!versions.empty() && memo != memo_.end() && memo->second.versions == versions && memo->second.counts.Same(c)) {
    return false;
  }
  const auto it = written_.find(key);
  if (it == written_.end() || pass.start - it->second.at >= pass.interval) return true;
  if (c.idle() != it->second.idle) return true;  // drained, or busy again after being idle
  held_[key] = Held{it->second.at + pass.interval, pass.number};
  return false;
}

void QueueStatus::Built(const std::string& key, std::string versions, const QueueCounts& c, bool changed,
                        const Pass& pass) {
  if (changed) {
    written_[key] = Written{pass.start, c.idle()};
    held_.erase(key);
    return;
  }
  if (versions.empty()) return;  // (a change to objects without a resourceVersion could not be told)
  memo_[key] = Memo{std::move(versions), CountsMemo::Of(c)};
}

void QueueStatus::ClusterQueueWrites(const api::ClusterState& state, const CountsByName& counts, const Pass& pass,
                                     std::vector<StatusWriter::Write>& out) {
  std::set<std::string> flavor_names;
  std::string flavor_versions;
  for (const auto& f : state.flavors) {
    flavor_names.insert(f.metadata.name);
    flavor_versions.append(f.metadata.name).append("@").append(f.metadata.resource_version).append(",");
  }
  for (const auto& cq : state.cluster_queues) {
    const QueueCounts& c = CountsOf(counts, cq.metadata.name);
    const std::string key = "clusterqueues/" + cq.metadata.name;
    std::string versions =
        cq.metadata.resource_version.empty() ? "" : cq.metadata.resource_version + "|" + flavor_versions;
    if (!Wanted(key, versions, c, pass)) continue;
    std::optional<Json> status = ClusterQueueStatusChange(cq, c, flavor_names, pass.now);
    Built(key, std::move(versions), c, status.has_value(), pass);
    if (status) out.push_back(QueueWrite("ClusterQueue", "", cq.metadata.name, std::move(*status)));
  }
}

void QueueStatus::LocalQueueWrites(const api::ClusterState& state, const CountsByName& counts, const Pass& pass,
                                   std::vector<StatusWriter::Write>& out) {
  std::unordered_map<std::string_view, const api::ClusterQueue*> cq_by_name;
  for (const auto& cq : state.cluster_queues) cq_by_name.emplace(cq.metadata.name, &cq);
  for (const auto& lq : state.local_queues) {
    const std::string name = lq.metadata.namespace_ + "/" + lq.metadata.name;
    const QueueCounts& c = CountsOf(counts, name);
    const auto found = cq_by_name.find(lq.spec.cluster_queue);
    const api::ClusterQueue* cq = found == cq_by_name.end() ? nullptr : found->second;
    const std::string key = "localqueues/" + name;
    // (Of its ClusterQueue the spec counts, whose generation does not move with the status.)
    std::string versions;
    if (!lq.metadata.resource_version.empty()) {
      versions = lq.metadata.resource_version + "|";
      if (!cq)
        versions += "-";
      else if (cq->metadata.generation)
        versions += "#" + std::to_string(*cq->metadata.generation);
      else
        versions += cq->metadata.resource_version;
    }
    if (!Wanted(key, versions, c, pass)) continue;
    std::optional<Json> status = LocalQueueStatusChange(lq, cq, c);
    Built(key, std::move(versions), c, status.has_value(), pass);
    if (status) out.push_back(QueueWrite("LocalQueue", lq.metadata.namespace_, lq.metadata.name, std::move(*status)));
  }
}

std::vector<StatusWriter::Write> QueueStatus::Writes(const api::ClusterState& state, const QueueTally::Result& tally,
                                                     const Pass& pass) {
  // (Memos of queues that are gone are dropped now and then.)
  if (memo_.size() > 2 * (state.cluster_queues.size() + state.local_queues.size()) + 64) memo_.clear();
  std::vector<StatusWriter::Write> out;
  ClusterQueueWrites(state, tally.cluster_queues, pass, out);
  LocalQueueWrites(state, tally.local_queues, pass, out);
  // A held status of a queue this pass did not find changed (up to date on the object again,
  // skipped as such by its memo, or gone) is not wanted any more.
  std::erase_if(held_, [&](const auto& e) { return e.second.pass != pass.number; });
  return out;
}

std::optional<QueueStatus::TimePoint> QueueStatus::NextHeld(TimePoint after) const {
  std::optional<TimePoint> next;
  for (const auto& [key, held] : held_) {
    if (held.due > after && (!next || held.due < *next)) next = held.due;
  }
  return next;
}

}  // namespace rota::controller
