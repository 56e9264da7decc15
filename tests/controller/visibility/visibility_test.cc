// The visibility API's parts: the front proxy's identity, run-time estimates, and the API's
// answers over a board a test posts views to.

#include <gtest/gtest.h>

#include "rota/apiclient/clock.h"
#include "visibility/board.h"
#include "visibility/front_proxy.h"
#include "visibility/run_times.h"
#include "visibility/visibility_api.h"

namespace rota::visibility {
namespace {

using apiclient::Json;

api::Workload Decode(const Json& j) { return *api::DecodeObject<api::Workload>(j); }

// A finished Workload's document as the apiserver sends it, and the run the cache reads from it.
Json FinishedDocument(const std::string& uid, const std::string& cq, const std::string& cls,
                      const std::string& reserved, const std::string& finished) {
  Json spec = {{"podSets", Json::array()}};
  if (!cls.empty())
    spec["priorityClassRef"] = {{"group", "kueue.x-k8s.io"}, {"kind", "WorkloadPriorityClass"}, {"name", cls}};
  auto cond = [](const char* type, const std::string& at) {
    return Json{{"type", type}, {"status", "True"}, {"reason", type}, {"message", ""}, {"lastTransitionTime", at}};
  };
  return {{"metadata", {{"name", uid}, {"namespace", "ml"}, {"uid", uid}}},
          {"spec", spec},
          {"status",
           {{"conditions", {cond("QuotaReserved", reserved), cond("Finished", finished)}},
            {"admission", {{"clusterQueue", cq}, {"podSetAssignments", Json::array()}}}}}};
}
controller::FinishedRun Finished(const std::string& uid, const std::string& cq, const std::string& cls,
                                 const std::string& reserved, const std::string& finished) {
  std::optional<controller::FinishedRun> run =
      controller::FinishedRunOf(FinishedDocument(uid, cq, cls, reserved, finished));
  EXPECT_TRUE(run.has_value());
  return run.value_or(controller::FinishedRun{});
}

TEST(RunTimes, OnlyARunThatFinishedAfterItsReservationCounts) {
  Json doc = FinishedDocument("a", "team", "", "2026-11-01T10:00:00Z", "2026-11-01T10:10:00Z");
  EXPECT_EQ(controller::FinishedRunOf(doc)->seconds, 600);
  // What a budget charges for it: which workload, when it let go, and what it held.
  doc["status"]["admission"]["podSetAssignments"] =
      Json::parse(R"([{"name": "main", "resourceUsage": {"nvidia.com/gpu": "2"}},
                      {"name": "aux", "resourceUsage": {"nvidia.com/gpu": "500m", "cpu": 4}}])");
  std::optional<controller::FinishedRun> run = controller::FinishedRunOf(doc);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->key, "ml/a");
  EXPECT_EQ(run->finished_at, 1793527800);
  EXPECT_EQ(run->usage_milli, (std::map<std::string, int64_t>{{"cpu", 4000}, {"nvidia.com/gpu", 2500}}));
  Json unfinished = doc;
  unfinished["status"]["conditions"][1]["status"] = "False";
  EXPECT_FALSE(controller::FinishedRunOf(unfinished).has_value());
  Json never_admitted = doc;
  never_admitted["status"].erase("admission");
  EXPECT_FALSE(controller::FinishedRunOf(never_admitted).has_value());
  Json backwards = FinishedDocument("a", "team", "", "2026-11-01T10:10:00Z", "2026-11-01T10:00:00Z");
  EXPECT_FALSE(controller::FinishedRunOf(backwards).has_value());
}

TEST(RunTimes, TheMedianOfFinishedRunsByQueueAndPriorityClass) {
  RunTimeHistory h;
  h.Observe(Finished("a", "team", "train", "2026-11-01T10:00:00Z", "2026-11-01T10:10:00Z"));
  h.Observe(Finished("b", "team", "train", "2026-11-01T10:00:00Z", "2026-11-01T10:30:00Z"));
  h.Observe(Finished("c", "team", "train", "2026-11-01T10:00:00Z", "2026-11-01T10:20:00Z"));
  h.Observe(Finished("c", "team", "train", "2026-11-01T10:00:00Z", "2026-11-01T10:20:00Z"));  // (again)
  h.Observe(Finished("d", "team", "", "2026-11-01T10:00:00Z", "2026-11-01T11:00:00Z"));
  EXPECT_EQ(h.Median("team", "train"), std::make_pair(int64_t{1200}, size_t{3}));
  EXPECT_EQ(h.Median("team", ""), std::make_pair(int64_t{3600}, size_t{1}));
  EXPECT_EQ(h.Median("other", "train"), std::nullopt);
}

TEST(RunTimes, TheLimitThenTheAnnotationThenTheMedian) {
  RunTimeHistory h;
  h.Observe(Finished("a", "team", "", "2026-11-01T10:00:00Z", "2026-11-01T10:10:00Z"));
  Json w = {{"metadata", {{"name", "w"}, {"namespace", "ml"}}}, {"spec", {{"podSets", Json::array()}}}};
  RunTimeEstimate e = ExpectedRunTime(Decode(w), "team", h);
  EXPECT_EQ(e.seconds, 600);
  EXPECT_EQ(e.source, RunTimeEstimate::Source::kMedian);
  EXPECT_EQ(e.basis, "the median run time (10m) of 1 finished workloads of ClusterQueue team");
  w["metadata"]["annotations"] = {{"rota.dev/expected-runtime", "1h30m"}};
  e = ExpectedRunTime(Decode(w), "team", h);
  EXPECT_EQ(e.seconds, 5400);
  EXPECT_EQ(e.source, RunTimeEstimate::Source::kAnnotation);
  w["spec"]["maximumExecutionTimeSeconds"] = 7200;
  EXPECT_EQ(ExpectedRunTime(Decode(w), "team", h).seconds, 7200);
  w = {{"metadata", {{"name", "w"}, {"namespace", "ml"}, {"annotations", {{"rota.dev/expected-runtime", "soon"}}}}},
       {"spec", {{"podSets", Json::array()}}}};
  EXPECT_EQ(ExpectedRunTime(Decode(w), "other", h).source, RunTimeEstimate::Source::kNone);
}

const Json kAuthData = {{"requestheader-client-ca-file", "CA PEM"},
                        {"requestheader-allowed-names", "[\"front-proxy-client\"]"},
                        {"requestheader-username-headers", "[\"X-Remote-User\"]"},
                        {"requestheader-group-headers", "[\"X-Remote-Group\"]"},
                        {"requestheader-extra-headers-prefix", "[\"X-Remote-Extra-\"]"},
                        {"requestheader-uid-headers", "[\"X-Remote-Uid\"]"}};

controller::HttpsRequest Proxied(const std::string& path, const std::string& user = "alice") {
  controller::HttpsRequest r;
  r.path = path;
  r.client_cn = "front-proxy-client";
  if (!user.empty()) r.headers.emplace("x-remote-user", user);
  r.headers.emplace("x-remote-group", "ml-team");
  r.headers.emplace("x-remote-group", "system:authenticated");
  r.headers.emplace("x-remote-extra-scopes", "view");
  r.headers.emplace("x-remote-uid", "uid-of-" + user);
  return r;
}

TEST(FrontProxy, TheUserIsBelievedOnlyFromAnAllowedVerifiedClient) {
  auto config = ParseFrontProxyConfig(kAuthData);
  ASSERT_TRUE(config.ok()) << config.status().message();
  auto user = FrontProxyUser(*config, Proxied("/"));
  ASSERT_TRUE(user.has_value());
  EXPECT_EQ(user->name, "alice");
  EXPECT_EQ(user->uid, "uid-of-alice");
  EXPECT_EQ(user->groups, (std::vector<std::string>{"ml-team", "system:authenticated"}));
  EXPECT_EQ(user->extra["scopes"], Json::array({"view"}));
  controller::HttpsRequest r = Proxied("/");
  r.client_cn = "someone-else";
  EXPECT_FALSE(FrontProxyUser(*config, r).has_value()) << "a name not allowed";
  r.client_cn = "";
  EXPECT_FALSE(FrontProxyUser(*config, r).has_value()) << "no verified certificate";
  EXPECT_FALSE(FrontProxyUser(*config, Proxied("/", "")).has_value()) << "no user header";
}

TEST(FrontProxy, AnApiserverWithoutAggregationIsNamed) {
  auto config = ParseFrontProxyConfig(Json{{"client-ca-file", "x"}});
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("--requestheader-client-ca-file"), std::string::npos);
  Json bad = kAuthData;
  bad["requestheader-allowed-names"] = "front-proxy-client";
  config = ParseFrontProxyConfig(bad);
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("data.requestheader-allowed-names"), std::string::npos);
}

class AllowAlice : public serving::Reviewer {
 public:
  Result<std::optional<serving::User>> Authenticate(const std::string&) override {
    return std::optional<serving::User>();
  }
  Result<bool> Allowed(const serving::User&, const std::string&, const std::string&) override { return false; }
  Result<bool> AllowedResource(const serving::User& user, const Json& attributes) override {
    last = attributes;
    return user.name == "alice";
  }
  Json last;
};

// A board with one view: ClusterQueue team holds three pending workloads, two of them in
// LocalQueue ml/main; the forecast has a start for the first.
class VisibilityApiTest : public ::testing::Test {
 protected:
  VisibilityApiTest()
      : board_(
            apiclient::RealClock(), [] {}, VisibilityBoard::Options{}) {
    auto view = std::make_shared<PendingView>();
    view->now = 1793527200;
    view->version = board_.NextVersion();
    admission::ClusterQueueSpec cq;
    cq.name = "team";
    view->snapshot.cluster_queues = {cq};
    for (auto [name, lq] : {std::pair{"a", "main"}, std::pair{"b", "other"}, std::pair{"c", "main"}}) {
      PendingEntry e;
      e.ns = "ml";
      e.name = name;
      e.local_queue = lq;
      e.cluster_queue = "team";
      e.position_in_cluster_queue = static_cast<int32_t>(view->entries.size());
      auto& local = view->by_local_queue["ml/" + std::string(lq)];
      e.position_in_local_queue = static_cast<int32_t>(local.size());
      local.push_back(static_cast<uint32_t>(view->entries.size()));
      view->by_cluster_queue["team"].push_back(static_cast<uint32_t>(view->entries.size()));
      view->entries.push_back(e);
    }
    board_.Post(view);
  }
  Json Get(const std::string& path, const std::string& query = "", int want = 200) {
    controller::HttpsRequest r = Proxied(path);
    r.query = query;
    controller::HttpReply reply = api_.Serve(r);
    EXPECT_EQ(reply.status, want) << path << ": " << reply.body;
    return Json::parse(reply.body);
  }
  VisibilityBoard board_;
  AllowAlice reviewer_;
  VisibilityApi api_{*ParseFrontProxyConfig(kAuthData), reviewer_, board_,
                     [](const std::string& ns, const std::string& name) { return ns == "ml" && name == "empty"; },
                     [](auto&&, auto&&) {}};
};

TEST_F(VisibilityApiTest, ListsAClusterQueuesPendingWorkloadsInOrder) {
  const Json s = Get("/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/team/pendingworkloads");
  EXPECT_EQ(s["kind"], "PendingWorkloadsSummary");
  ASSERT_EQ(s["items"].size(), 3u);
  EXPECT_EQ(s["items"][2]["metadata"]["name"], "c");
  EXPECT_EQ(s["items"][2]["positionInClusterQueue"], 2);
  EXPECT_EQ(s["items"][2]["positionInLocalQueue"], 1);
  EXPECT_EQ(s["items"][1]["localQueueName"], "other");
  EXPECT_EQ(reviewer_.last["resource"], "clusterqueues");
  EXPECT_EQ(reviewer_.last["subresource"], "pendingworkloads");
  EXPECT_EQ(reviewer_.last["name"], "team");
}

TEST_F(VisibilityApiTest, PagesALocalQueue) {
  const Json s = Get("/apis/visibility.kueue.x-k8s.io/v1beta1/namespaces/ml/localqueues/main/pendingworkloads",
                     "offset=1&limit=5");
  ASSERT_EQ(s["items"].size(), 1u);
  EXPECT_EQ(s["items"][0]["metadata"]["name"], "c");
  EXPECT_EQ(s["apiVersion"], "visibility.kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(reviewer_.last["namespace"], "ml");
  EXPECT_EQ(Get("/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/ml/localqueues/empty/pendingworkloads")["items"],
            Json::array());
}

TEST_F(VisibilityApiTest, RefusesAsAnApiServerDoes) {
  controller::HttpsRequest direct = Proxied("/apis/visibility.kueue.x-k8s.io/v1beta2");
  direct.client_cn = "";
  EXPECT_EQ(api_.Serve(direct).status, 401);
  controller::HttpsRequest bob =
      Proxied("/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/team/pendingworkloads", "bob");
  const controller::HttpReply refused = api_.Serve(bob);
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(Json::parse(refused.body)["reason"], "Forbidden");
  EXPECT_NE(refused.body.find("User \\\"bob\\\" cannot get resource \\\"clusterqueues/pendingworkloads\\\""),
            std::string::npos)
      << refused.body;
  EXPECT_EQ(Get("/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/absent/pendingworkloads", "", 404)["reason"],
            "NotFound");
  EXPECT_EQ(
      Get("/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/team/pendingworkloads", "limit=x", 400)["message"],
      "limit: \"x\" is not a non-negative integer");
  Get("/apis/visibility.kueue.x-k8s.io/v1alpha1", "", 404);
  // Bytes that are not UTF-8 come back replaced in the message, not thrown.
  const Json bad =
      Get("/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/team/pendingworkloads", "limit=\xff", 400);
  EXPECT_EQ(bad["reason"], "BadRequest");
}

TEST_F(VisibilityApiTest, DiscoveryForAnyAuthenticatedUser) {
  controller::HttpsRequest bob = Proxied("/apis/visibility.kueue.x-k8s.io", "bob");
  const Json group = Json::parse(api_.Serve(bob).body);
  EXPECT_EQ(group["preferredVersion"]["version"], "v1beta2");
  const Json list = Get("/apis/visibility.kueue.x-k8s.io/v1beta2");
  EXPECT_EQ(list["resources"][1]["name"], "clusterqueues/pendingworkloads");
  EXPECT_EQ(list["resources"][3]["namespaced"], true);
}

}  // namespace
}  // namespace rota::visibility
