#include "visibility/visibility_api.h"

#include <charconv>
#include <sstream>
#include <vector>

#include "rota/api/snapshot.h"

namespace rota::visibility {
namespace {

using apiclient::Json;
constexpr size_t kDefaultLimit = 1000;
constexpr std::chrono::milliseconds kViewWait{2000};

controller::HttpReply JsonReply(int status, const Json& body) {
  // (Names and queries come from users: bytes that are not UTF-8 are replaced, not thrown at.)
  return {status, "application/json", body.dump(-1, ' ', false, Json::error_handler_t::replace)};
}

controller::HttpReply StatusReply(int code, const std::string& reason, const std::string& message) {
  return JsonReply(code, {{"kind", "Status"},
                          {"apiVersion", "v1"},
                          {"metadata", Json::object()},
                          {"status", "Failure"},
                          {"message", message},
                          {"reason", reason},
                          {"code", code}});
}

std::vector<std::string> Split(const std::string& path) {
  std::vector<std::string> parts;
  std::stringstream in(path);
  for (std::string p; std::getline(in, p, '/');)
    if (!p.empty()) parts.push_back(p);
  return parts;
}

bool Served(const std::string& version) { return version == "v1beta2" || version == "v1beta1"; }

Json GroupDocument() {
  Json versions = Json::array();
  for (const char* v : {"v1beta2", "v1beta1"})
    versions.push_back({{"groupVersion", std::string(kGroup) + "/" + v}, {"version", v}});
  return {{"kind", "APIGroup"},
          {"apiVersion", "v1"},
          {"name", kGroup},
          {"versions", versions},
          {"preferredVersion", versions[0]}};
}

Json ResourceList(const std::string& version) {
  auto resource = [](const char* name, const char* singular, bool namespaced, const char* kind) {
    return Json{
        {"name", name}, {"singularName", singular}, {"namespaced", namespaced}, {"kind", kind}, {"verbs", {"get"}}};
  };
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", std::string(kGroup) + "/" + version},
          {"resources",
           {resource("clusterqueues", "clusterqueue", false, "ClusterQueue"),
            resource("clusterqueues/pendingworkloads", "", false, "PendingWorkloadsSummary"),
            resource("localqueues", "localqueue", true, "LocalQueue"),
            resource("localqueues/pendingworkloads", "", true, "PendingWorkloadsSummary")}}};
}

// offset and limit: non-negative integers; an error names the bad one.
Result<std::pair<size_t, size_t>> Paging(const std::string& query) {
  size_t offset = 0, limit = kDefaultLimit;
  std::stringstream in(query);
  for (std::string kv; std::getline(in, kv, '&');) {
    const size_t eq = kv.find('=');
    const std::string key = kv.substr(0, eq), value = eq == std::string::npos ? "" : kv.substr(eq + 1);
    if (key != "offset" && key != "limit") continue;
    size_t n = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || end != value.data() + value.size())
      return InvalidArgument(key + ": \"" + value + "\" is not a non-negative integer");
    (key == "offset" ? offset : limit) = n;
  }
  return std::make_pair(offset, limit);
}

Json Item(const PendingEntry& e, const StartForecast* forecast) {
  Json meta = {{"name", e.name}, {"namespace", e.ns}, {"creationTimestamp", e.created}};
  if (!e.owner_references.empty()) meta["ownerReferences"] = e.owner_references;
  Json item = {{"metadata", std::move(meta)},
               {"priority", e.priority},
               {"localQueueName", e.local_queue},
               {"positionInClusterQueue", e.position_in_cluster_queue},
               {"positionInLocalQueue", e.position_in_local_queue}};
  if (!forecast) {
    item["estimateBasis"] = "no forecast has been made yet";
    return item;
  }
  auto start = forecast->start.find(e.ns + "/" + e.name);
  if (start == forecast->start.end()) {
    item["estimateBasis"] =
        std::string(forecast->hit_limit ? "no estimate: it starts beyond the forecast's horizon, or "
                                          "only after workloads whose run time is not known"
                                        : "no estimate: it starts only after workloads whose run "
                                          "time is not known, or cannot start as things are") +
        " (" + forecast->assumption + ")";
  } else {
    item["estimatedStartTime"] = api::FormatTime(std::max(start->second, forecast->made_at));
    item["estimateBasis"] = forecast->assumption;
  }
  return item;
}

}  // namespace

// A request's target, once its path is understood.
struct VisibilityApi::Target {
  enum Kind { kGroupDoc, kVersionDoc, kClusterQueue, kLocalQueue } kind;
  std::string version, ns, name;
};

VisibilityApi::VisibilityApi(FrontProxyConfig front_proxy, serving::Reviewer& reviewer, VisibilityBoard& board,
                             LocalQueueExists local_queue_exists, Logger log)
    : front_proxy_(std::move(front_proxy)),
      reviewer_(reviewer),
      board_(board),
      local_queue_exists_(std::move(local_queue_exists)),
      log_(std::move(log)) {}

controller::HttpReply VisibilityApi::Serve(const controller::HttpsRequest& request) {
  const std::optional<serving::User> user = FrontProxyUser(front_proxy_, request);
  if (!user) return StatusReply(401, "Unauthorized", "Unauthorized: requests must come through the apiserver");
  const std::vector<std::string> p = Split(request.path);
  std::optional<Target> t;
  if (p.size() == 2 && p[0] == "apis" && p[1] == kGroup) t = Target{Target::kGroupDoc, "", "", ""};
  if (p.size() >= 3 && p[0] == "apis" && p[1] == kGroup && Served(p[2])) {
    if (p.size() == 3) t = Target{Target::kVersionDoc, p[2], "", ""};
    if (p.size() == 6 && p[3] == "clusterqueues" && p[5] == "pendingworkloads")
      t = Target{Target::kClusterQueue, p[2], "", p[4]};
    if (p.size() == 8 && p[3] == "namespaces" && p[5] == "localqueues" && p[7] == "pendingworkloads")
      t = Target{Target::kLocalQueue, p[2], p[4], p[6]};
  }
  if (!t) return StatusReply(404, "NotFound", "the server could not find the requested resource: " + request.path);
  // Discovery is for every authenticated user, as the apiserver's system:discovery role has it.
  if (t->kind == Target::kGroupDoc) return JsonReply(200, GroupDocument());
  if (t->kind == Target::kVersionDoc) return JsonReply(200, ResourceList(t->version));
  if (auto refused = Authorize(*user, *t)) return *refused;
  return Pending(*t, request.query);
}

std::optional<controller::HttpReply> VisibilityApi::Authorize(const serving::User& user, const Target& t) {
  const bool local = t.kind == Target::kLocalQueue;
  Json attributes = {{"verb", "get"},
                     {"group", kGroup},
                     {"version", t.version},
                     {"resource", local ? "localqueues" : "clusterqueues"},
                     {"subresource", "pendingworkloads"},
                     {"name", t.name}};
  if (local) attributes["namespace"] = t.ns;
  auto allowed = reviewer_.AllowedResource(user, attributes);
  if (!allowed.ok()) {
    log_("warn", "visibility API: cannot authorize " + user.name + ": " + allowed.status().message());
    return StatusReply(500, "InternalError", "the apiserver could not review the access");
  }
  if (*allowed) return std::nullopt;
  const std::string what =
      std::string(local ? "localqueues" : "clusterqueues") + ".visibility.kueue.x-k8s.io \"" + t.name + "\"";
  return StatusReply(403, "Forbidden",
                     what + " is forbidden: User \"" + user.name + "\" cannot get resource \"" +
                         (local ? "localqueues/pendingworkloads" : "clusterqueues/pendingworkloads") +
                         "\" in API group \"" + kGroup + "\"" + (local ? " in the namespace \"" + t.ns + "\"" : ""));
}

controller::HttpReply VisibilityApi::Pending(const Target& t, const std::string& query) {
  auto paging = Paging(query);
  if (!paging.ok()) return StatusReply(400, "BadRequest", paging.status().message());
  const VisibilityBoard::Reading r = board_.Read(kViewWait);
  if (!r.view) return StatusReply(503, "ServiceUnavailable", "rota has not scheduled yet (is it the leader?)");
  const bool local = t.kind == Target::kLocalQueue;
  const auto& index = local ? r.view->by_local_queue : r.view->by_cluster_queue;
  auto found = index.find(local ? t.ns + "/" + t.name : t.name);
  if (found == index.end()) {
    const bool exists =
        local ? local_queue_exists_(t.ns, t.name)
              : std::any_of(r.view->snapshot.cluster_queues.begin(), r.view->snapshot.cluster_queues.end(),
                            [&](const auto& cq) { return cq.name == t.name; });
    if (!exists)
      return StatusReply(
          404, "NotFound",
          std::string(local ? "localqueues" : "clusterqueues") + ".kueue.x-k8s.io \"" + t.name + "\" not found");
  }
  Json items = Json::array();
  if (found != index.end()) {
    const auto& list = found->second;
    for (size_t i = paging->first; i < list.size() && items.size() < paging->second; ++i)
      items.push_back(Item(r.view->entries[list[i]], r.forecast.get()));
  }
  return JsonReply(200, {{"kind", "PendingWorkloadsSummary"},
                         {"apiVersion", std::string(kGroup) + "/" + t.version},
                         {"metadata", {{"creationTimestamp", nullptr}}},
                         {"items", std::move(items)}});
}

}  // namespace rota::visibility
