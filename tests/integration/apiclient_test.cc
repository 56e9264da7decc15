// rota's Kubernetes client against the real local apiserver: verbs, conflicts, server-side apply,
// pagination, authentication, TLS, RBAC, watch order, 410 Gone, informers and events.

#include "rota/apiclient/client.h"

#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "rota/apiclient/events.h"
#include "rota/apiclient/informer.h"
#include "support/kube.h"

namespace rota::testing {
namespace {

using namespace std::chrono_literals;
using namespace rota::apiclient;
namespace fs = std::filesystem;

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  std::string t = s.str();
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  return t;
}

Json ConfigMap(const std::string& name, const std::string& value) {
  return {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", name}}}, {"data", {{"value", value}}}};
}

class ApiClientTest : public ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    if (HasFatalFailure()) return;
    cluster_dir_ = fs::path(KubeconfigFromEnv()).parent_path();
    Result<RestConfig> cfg = LoadKubeconfig(KubeconfigFromEnv());
    ASSERT_TRUE(cfg.ok()) << cfg.status().message();
    config_ = *cfg;
    auto client = Client::Create(config_);
    ASSERT_TRUE(client.ok()) << client.status().message();
    client_ = std::move(*client);
  }

  fs::path cluster_dir_;
  RestConfig config_;
  std::unique_ptr<Client> client_;
};

TEST_F(ApiClientTest, CreateGetUpdateDeleteWithOptimisticConcurrency) {
  const Resource& cm = resources::kConfigMaps;
  auto created = client_->Create(cm, ns(), ConfigMap("settings", "1"));
  ASSERT_TRUE(created.ok()) << created.error().ToString();
  auto again = client_->Create(cm, ns(), ConfigMap("settings", "1"));
  ASSERT_FALSE(again.ok());
  EXPECT_TRUE(again.error().IsAlreadyExists()) << again.error().ToString();

  Json first = *client_->Get(cm, ns(), "settings");
  Json stale = first;
  first["data"]["value"] = "2";
  auto updated = client_->Update(cm, ns(), first);
  ASSERT_TRUE(updated.ok()) << updated.error().ToString();
  EXPECT_EQ((*updated)["data"]["value"], "2");

  // The stale copy's resourceVersion is gone: 409, and the caller is told to re-read.
  stale["data"]["value"] = "3";
  auto conflict = client_->Update(cm, ns(), stale);
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.error().code, 409);
  EXPECT_EQ(conflict.error().reason, "Conflict");
  EXPECT_EQ(conflict.error().retry, Retry::kReread);
  EXPECT_NE(conflict.error().message.find("the object has been modified"), std::string::npos)
      << conflict.error().message;

  auto patched = client_->Patch(cm, ns(), "settings", PatchType::kMerge, {{"data", {{"extra", "x"}}}});
  ASSERT_TRUE(patched.ok()) << patched.error().ToString();
  EXPECT_EQ((*patched)["data"]["extra"], "x");
  auto json_patched = client_->Patch(cm, ns(), "settings", PatchType::kJson,
                                     Json::parse(R"([{"op": "remove", "path": "/data/extra"}])"));
  ASSERT_TRUE(json_patched.ok()) << json_patched.error().ToString();
  EXPECT_FALSE((*json_patched)["data"].contains("extra"));

  DeleteOptions wrong_uid;
  wrong_uid.precondition_uid = "not-the-uid";
  auto refused = client_->Delete(cm, ns(), "settings", wrong_uid);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, 409);
  DeleteOptions right_uid;
  right_uid.precondition_uid = (*updated)["metadata"]["uid"];
  right_uid.propagation_policy = "Background";
  ASSERT_TRUE(client_->Delete(cm, ns(), "settings", right_uid).ok());
  auto gone = client_->Get(cm, ns(), "settings");
  ASSERT_FALSE(gone.ok());
  EXPECT_TRUE(gone.error().IsNotFound());
  EXPECT_EQ(gone.error().retry, Retry::kNo);
  EXPECT_EQ(gone.error().message, "configmaps \"settings\" not found");
}

TEST_F(ApiClientTest, ServerSideApplyWritesWorkloadStatus) {
  kubectl()({"apply", "-f", (fs::path(ROTA_SOURCE_DIR) / "crds").string()});
  kubectl()(
      {"wait", "--for=condition=Established", "--timeout=60s", "-f", (fs::path(ROTA_SOURCE_DIR) / "crds").string()});
  Json wl = Json::parse(R"({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
    "metadata": {"name": "ssa"}, "spec": {"queueName": "gpu", "podSets": [{"name": "main", "count": 1,
    "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}]}})");
  ASSERT_TRUE(client_->Create(resources::kWorkloads, ns(), wl).ok());
  Json status = Json::parse(R"({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
    "metadata": {"name": "ssa"}, "status": {"conditions": [{"type": "QuotaReserved", "status": "False",
    "reason": "Pending", "message": "waiting", "lastTransitionTime": "2026-11-22T00:00:00Z"}]}})");
  PatchOptions apply;
  apply.field_manager = "rota-test";
  apply.force = true;
  apply.subresource = "status";
  auto applied = client_->Patch(resources::kWorkloads, ns(), "ssa", PatchType::kApply, status, apply);
  ASSERT_TRUE(applied.ok()) << applied.error().ToString();
  EXPECT_EQ((*applied)["status"]["conditions"][0]["reason"], "Pending");
  bool managed = false;
  for (const auto& f : (*applied)["metadata"]["managedFields"])
    if (f.value("manager", "") == "rota-test" && f.value("subresource", "") == "status") managed = true;
  EXPECT_TRUE(managed) << (*applied)["metadata"].dump();
}

TEST_F(ApiClientTest, ListsEveryPage) {
  for (int i = 0; i < 23; ++i) {
    ASSERT_TRUE(client_->Create(resources::kConfigMaps, ns(), ConfigMap("page-" + std::to_string(i), "v")).ok());
  }
  const int64_t before = client_->requests_sent();
  ListOptions small;
  small.limit = 5;
  auto list = client_->ListAll(resources::kConfigMaps, ns(), small);
  ASSERT_TRUE(list.ok()) << list.error().ToString();
  int pages = 0;
  for (const auto& item : list->items)
    if (item["metadata"]["name"].get<std::string>().rfind("page-", 0) == 0) ++pages;
  EXPECT_EQ(pages, 23);
  EXPECT_GE(client_->requests_sent() - before, 5);  // 24+ objects in pages of 5
  EXPECT_FALSE(list->resource_version.empty());
}

TEST_F(ApiClientTest, AuthenticatesWithTokenOrCertificateAndVerifiesTls) {
  // The kubeconfig uses the client certificate.
  ASSERT_FALSE(config_.client_cert_file.empty());
  auto by_cert = client_->GetRaw("/readyz");
  ASSERT_TRUE(by_cert.ok()) << by_cert.error().ToString();
  EXPECT_EQ(*by_cert, "ok");

  RestConfig token = config_;
  token.client_cert_file.clear();
  token.client_key_file.clear();
  token.token = ReadFile(cluster_dir_ / "pki" / "admin.token");
  auto by_token = Client::Create(token);
  ASSERT_TRUE(by_token.ok());
  EXPECT_TRUE((*by_token)->Get(resources::kNamespaces, "", ns()).ok());

  RestConfig wrong = token;
  wrong.token = "not-a-valid-token";
  auto unauthorized = (*Client::Create(wrong))->Get(resources::kNamespaces, "", ns());
  ASSERT_FALSE(unauthorized.ok());
  EXPECT_EQ(unauthorized.error().code, 401);

  // A CA that did not sign the apiserver's certificate: TLS verification refuses to talk.
  RestConfig other_ca = config_;
  other_ca.ca_file = "/etc/ssl/certs/ca-certificates.crt";
  auto untrusted = (*Client::Create(other_ca))->GetRaw("/readyz");
  ASSERT_FALSE(untrusted.ok());
  EXPECT_EQ(untrusted.error().code, 0);
  EXPECT_NE(untrusted.error().message.find("certificate"), std::string::npos) << untrusted.error().message;
}

// tls-server-name: the certificate is checked against that name, while the connection goes to the
// server's address (the apiserver's certificate names "kubernetes", not "wrong.example").
TEST_F(ApiClientTest, TheTlsServerNameIsWhatTheCertificateIsCheckedAgainst) {
  ASSERT_EQ(config_.server.rfind("https://127.0.0.1:", 0), 0u) << config_.server;
  RestConfig named = config_;
  named.tls_server_name = "kubernetes";
  auto ok = (*Client::Create(named))->GetRaw("/readyz");
  ASSERT_TRUE(ok.ok()) << ok.error().ToString();
  EXPECT_EQ(*ok, "ok");

  RestConfig wrong = config_;
  wrong.tls_server_name = "wrong.example";
  auto refused = (*Client::Create(wrong))->GetRaw("/readyz");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, 0);
  EXPECT_NE(refused.error().message.find("wrong.example"), std::string::npos) << refused.error().message;
}

TEST_F(ApiClientTest, RbacDenialCarriesTheApiserversMessage) {
  ASSERT_TRUE(kubectl()({"create", "serviceaccount", "nobody", "-n", ns()}).ok());
  CommandResult token = kubectl()({"create", "token", "nobody", "-n", ns()});
  ASSERT_TRUE(token.ok()) << token.err;
  RestConfig sa = config_;
  sa.client_cert_file.clear();
  sa.client_key_file.clear();
  sa.token = token.out;
  while (!sa.token.empty() && sa.token.back() == '\n') sa.token.pop_back();
  auto denied = (*Client::Create(sa))->ListAll(resources::kPods, "kube-system");
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().code, 403);
  EXPECT_EQ(denied.error().reason, "Forbidden");
  EXPECT_EQ(denied.error().retry, Retry::kNo);
  EXPECT_EQ(denied.error().message,
            "pods is forbidden: User \"system:serviceaccount:" + ns() +
                ":nobody\" cannot list resource \"pods\" in API group \"\" in the namespace \"kube-system\"");
}

TEST_F(ApiClientTest, WatchDeliversCreateUpdateDeleteInOrder) {
  auto list = client_->ListAll(resources::kConfigMaps, ns());
  ASSERT_TRUE(list.ok());
  std::vector<std::string> seen;
  std::atomic<bool> stop{false};
  std::thread watcher([&] {
    WatchOptions o;
    o.resource_version = list->resource_version;
    o.timeout_seconds = 30;
    (void)client_->Watch(
        resources::kConfigMaps, ns(), o,
        [&](const WatchEvent& e) {
          // Only our ConfigMap: the namespace's kube-root-ca.crt may appear at any time.
          if (e.type == "BOOKMARK" || e.object["metadata"].value("name", "") != "w") return true;
          seen.push_back(e.type + " " + e.object["metadata"]["name"].get<std::string>() + " " +
                         e.object.value("data", Json::object()).value("value", ""));
          return seen.size() < 4;
        },
        &stop);
  });
  ASSERT_TRUE(client_->Create(resources::kConfigMaps, ns(), ConfigMap("w", "1")).ok());
  ASSERT_TRUE(client_->Patch(resources::kConfigMaps, ns(), "w", PatchType::kMerge, {{"data", {{"value", "2"}}}}).ok());
  ASSERT_TRUE(client_->Patch(resources::kConfigMaps, ns(), "w", PatchType::kMerge, {{"data", {{"value", "3"}}}}).ok());
  ASSERT_TRUE(client_->Delete(resources::kConfigMaps, ns(), "w").ok());
  watcher.join();
  EXPECT_EQ(seen, (std::vector<std::string>{"ADDED w 1", "MODIFIED w 2", "MODIFIED w 3", "DELETED w 3"}));
}

// A watch that reads in batches (WatchOptions::settle) waits before it reads, but loses and
// reorders nothing, and stops when told even while it waits.
TEST_F(ApiClientTest, WatchReadingInBatchesDeliversEveryEventInOrder) {
  auto list = client_->ListAll(resources::kConfigMaps, ns());
  ASSERT_TRUE(list.ok());
  constexpr int kObjects = 40;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> seen;
  std::atomic<bool> stop{false};
  std::thread watcher([&] {
    WatchOptions o;
    o.resource_version = list->resource_version;
    o.timeout_seconds = 60;
    o.settle = std::chrono::milliseconds(200);
    (void)client_->Watch(
        resources::kConfigMaps, ns(), o,
        [&](const WatchEvent& e) {
          const std::string name = e.type == "BOOKMARK" ? "" : e.object["metadata"].value("name", "");
          if (name.rfind("b-", 0) != 0) return true;
          std::lock_guard<std::mutex> l(mu);
          seen.push_back(e.type + " " + name);
          cv.notify_all();
          return true;
        },
        &stop);
  });
  std::vector<std::string> want;
  for (int i = 0; i < kObjects; ++i) {
    const std::string name = "b-" + std::to_string(i);
    ASSERT_TRUE(client_->Create(resources::kConfigMaps, ns(), ConfigMap(name, "1")).ok());
    want.push_back("ADDED " + name);
    if (i % 10 == 9) std::this_thread::sleep_for(std::chrono::milliseconds(300));  // a few bursts
  }
  ASSERT_TRUE(client_->Delete(resources::kConfigMaps, ns(), "b-0").ok());
  want.push_back("DELETED b-0");
  {
    std::unique_lock<std::mutex> l(mu);
    cv.wait_for(l, std::chrono::seconds(30), [&] { return seen.size() >= want.size(); });
  }
  stop = true;  // heard within a second, even while the watch waits to read
  watcher.join();
  std::lock_guard<std::mutex> l(mu);
  EXPECT_EQ(seen, want);
}

// A compact informer type: what a controller keeps of a ConfigMap.
struct CompactConfigMap {
  std::string name;
  std::string value;
  static Result<CompactConfigMap> Decode(const Json& j) {
    if (!j.contains("metadata")) return InvalidArgument("no metadata");
    CompactConfigMap c{j["metadata"].value("name", ""), ""};
    if (j.contains("data") && j["data"].is_object()) c.value = j["data"].value("value", "");
    return c;
  }
};

TEST_F(ApiClientTest, InformerConvergesAndCallsHandlersInOrder) {
  ASSERT_TRUE(client_->Create(resources::kConfigMaps, ns(), ConfigMap("before", "0")).ok());
  std::mutex mu;
  std::vector<std::string> events;
  Informer<CompactConfigMap>::Handlers h;
  h.on_add = [&](const CompactConfigMap& c) {
    std::lock_guard l(mu);
    events.push_back("add " + c.name + "=" + c.value);
  };
  h.on_update = [&](const CompactConfigMap& o, const CompactConfigMap& n) {
    std::lock_guard l(mu);
    events.push_back("update " + n.name + " " + o.value + "->" + n.value);
  };
  h.on_delete = [&](const CompactConfigMap& c) {
    std::lock_guard l(mu);
    events.push_back("delete " + c.name);
  };
  Informer<CompactConfigMap> informer(*client_, resources::kConfigMaps, ns(), CompactConfigMap::Decode, h);
  informer.Start();
  ASSERT_TRUE(Eventually([&] { return informer.HasSynced(); }, 30s));
  ASSERT_TRUE(client_->Create(resources::kConfigMaps, ns(), ConfigMap("after", "1")).ok());
  ASSERT_TRUE(
      client_->Patch(resources::kConfigMaps, ns(), "after", PatchType::kMerge, {{"data", {{"value", "2"}}}}).ok());
  ASSERT_TRUE(client_->Delete(resources::kConfigMaps, ns(), "before").ok());
  // kube-root-ca.crt is created in every namespace; leave it out.
  auto mine = [&] {
    std::lock_guard l(mu);
    std::vector<std::string> out;
    for (const auto& e : events)
      if (e.find("kube-root-ca") == std::string::npos) out.push_back(e);
    return out;
  };
  ASSERT_TRUE(Eventually([&] { return mine().size() >= 4; }, 30s));
  EXPECT_EQ(mine(), (std::vector<std::string>{"add before=0", "add after=1", "update after 1->2", "delete before"}));
  ASSERT_NE(informer.Get(ns() + "/after"), nullptr);
  EXPECT_EQ(informer.Get(ns() + "/after")->value, "2");
  EXPECT_EQ(informer.Get(ns() + "/before"), nullptr);
  informer.Stop();
}

TEST_F(ApiClientTest, InformerWithASharedDecoderKeepsOneObjectForEqualOnes) {
  // ConfigMaps with value "done" are all kept as one shared object (as rota keeps finished
  // Workloads without an owner); the others each as their own. Keys, versions and handlers work
  // as for owned objects: an update from "done" back to something else is seen.
  const auto done = std::make_shared<const CompactConfigMap>(CompactConfigMap{"", "done"});
  Informer<CompactConfigMap>::SharedDecoder decode = [&](Json& j) -> Result<std::shared_ptr<const CompactConfigMap>> {
    auto c = CompactConfigMap::Decode(j);
    if (!c.ok()) return c.status();
    if (c->value == "done") return done;
    return std::make_shared<const CompactConfigMap>(std::move(c).value());
  };
  std::atomic<int> updates{0};
  Informer<CompactConfigMap>::Handlers h;
  h.on_update = [&](const CompactConfigMap&, const CompactConfigMap&) { ++updates; };
  for (const char* name : {"a", "b", "c"})
    ASSERT_TRUE(
        client_->Create(resources::kConfigMaps, ns(), ConfigMap(name, name == std::string("c") ? "running" : "done"))
            .ok());
  Informer<CompactConfigMap> informer(*client_, resources::kConfigMaps, ns(), decode, h);
  informer.Start();
  ASSERT_TRUE(Eventually([&] { return informer.HasSynced(); }, 30s));
  ASSERT_NE(informer.Get(ns() + "/a"), nullptr);
  EXPECT_EQ(informer.Get(ns() + "/a").get(), done.get());
  EXPECT_EQ(informer.Get(ns() + "/b").get(), done.get());
  ASSERT_NE(informer.Get(ns() + "/c"), nullptr);
  EXPECT_EQ(informer.Get(ns() + "/c")->name, "c");
  ASSERT_TRUE(
      client_->Patch(resources::kConfigMaps, ns(), "c", PatchType::kMerge, {{"data", {{"value", "done"}}}}).ok());
  ASSERT_TRUE(
      client_->Patch(resources::kConfigMaps, ns(), "a", PatchType::kMerge, {{"data", {{"value", "again"}}}}).ok());
  ASSERT_TRUE(Eventually(
      [&] {
        auto a = informer.Get(ns() + "/a");
        return a && a->value == "again" && informer.Get(ns() + "/c").get() == done.get();
      },
      30s));
  EXPECT_EQ(informer.Get(ns() + "/a")->name, "a");
  EXPECT_EQ(updates.load(), 2);
  informer.Stop();
}

TEST_F(ApiClientTest, InformerViewHoldsWhatItsFilterKeepsAsObjectsChange) {
  // The view keeps the ConfigMaps whose value is not "done" (as rota's keeps the unfinished
  // Workloads): objects enter and leave it as they change, are added and are deleted, and each
  // entry carries its own key and that key's hash. Eight objects and several removals from the
  // middle exercise the last entry filling a gap.
  for (int i = 0; i < 8; ++i)
    ASSERT_TRUE(
        client_->Create(resources::kConfigMaps, ns(), ConfigMap("cm" + std::to_string(i), i < 2 ? "done" : "running"))
            .ok());
  Informer<CompactConfigMap> informer(*client_, resources::kConfigMaps, ns(), CompactConfigMap::Decode);
  informer.SetView([](const CompactConfigMap& c) { return c.value != "done" && c.name.rfind("cm", 0) == 0; });
  // The view's names; an entry whose key or hash is not its object's fails the test.
  auto view = [&] {
    std::set<std::string> names;
    informer.ForEachInView([&](const Informer<CompactConfigMap>::ViewEntry& e) {
      EXPECT_EQ(*e.key, ns() + "/" + e.object->name);
      EXPECT_EQ(e.key_hash, std::hash<std::string>{}(*e.key));
      names.insert(e.object->name);
    });
    EXPECT_EQ(names.size(), informer.ViewSize());
    return names;
  };
  informer.Start();
  ASSERT_TRUE(Eventually([&] { return informer.HasSynced(); }, 30s));
  EXPECT_EQ(view(), (std::set<std::string>{"cm2", "cm3", "cm4", "cm5", "cm6", "cm7"}));
  for (const char* name : {"cm3", "cm5", "cm2"})
    ASSERT_TRUE(
        client_->Patch(resources::kConfigMaps, ns(), name, PatchType::kMerge, {{"data", {{"value", "done"}}}}).ok());
  ASSERT_TRUE(
      client_->Patch(resources::kConfigMaps, ns(), "cm0", PatchType::kMerge, {{"data", {{"value", "again"}}}}).ok());
  ASSERT_TRUE(
      client_->Patch(resources::kConfigMaps, ns(), "cm4", PatchType::kMerge, {{"data", {{"value", "still running"}}}})
          .ok());
  ASSERT_TRUE(client_->Delete(resources::kConfigMaps, ns(), "cm6").ok());
  ASSERT_TRUE(client_->Delete(resources::kConfigMaps, ns(), "cm1").ok());  // in the store, not in the view
  ASSERT_TRUE(client_->Create(resources::kConfigMaps, ns(), ConfigMap("cm8", "running")).ok());
  const std::set<std::string> want = {"cm0", "cm4", "cm7", "cm8"};
  ASSERT_TRUE(Eventually([&] { return view() == want; }, 30s)) << "view has " << view().size() << " entries";
  // An entry's object is the store's latest (compared outside the view's read lock).
  std::vector<std::pair<std::string, const CompactConfigMap*>> entries;
  informer.ForEachInView(
      [&](const Informer<CompactConfigMap>::ViewEntry& e) { entries.emplace_back(*e.key, e.object.get()); });
  for (const auto& [key, object] : entries) EXPECT_EQ(object, informer.Get(key).get()) << key;
  informer.Stop();
}

TEST_F(ApiClientTest, PipelineSendsManyPatchesAtOnceOverOneConnection) {
  // Twenty patches started before any is polled, and one of an object that does not exist: each
  // result comes back under its own id, the objects change, and (over HTTP/2) all of them went
  // as streams of a single new connection.
  constexpr int kObjects = 20;
  for (int i = 0; i < kObjects; ++i)
    ASSERT_TRUE(client_->Create(resources::kConfigMaps, ns(), ConfigMap("p" + std::to_string(i), "0")).ok());
  const int64_t connections_before = client_->connections_opened();
  auto pipeline = client_->NewPipeline();
  PatchOptions keep_metadata;
  keep_metadata.keep = Keep::kMetadata;
  for (int i = 0; i < kObjects; ++i) {
    pipeline->Patch(static_cast<uint64_t>(100 + i), resources::kConfigMaps, ns(), "p" + std::to_string(i),
                    PatchType::kMerge, {{"data", {{"value", std::to_string(i)}}}}, keep_metadata);
  }
  pipeline->Patch(7, resources::kConfigMaps, ns(), "missing", PatchType::kMerge, {{"data", {{"value", "x"}}}});
  EXPECT_EQ(pipeline->in_flight(), static_cast<size_t>(kObjects + 1));
  std::map<uint64_t, ApiResult<Json>> results;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (pipeline->in_flight() > 0 && std::chrono::steady_clock::now() < deadline) {
    for (auto& [id, r] : pipeline->Poll(1000ms))
      EXPECT_TRUE(results.emplace(id, std::move(r)).second) << "id " << id << " twice";
  }
  ASSERT_EQ(results.size(), static_cast<size_t>(kObjects + 1));
  for (int i = 0; i < kObjects; ++i) {
    const auto& r = results.at(static_cast<uint64_t>(100 + i));
    ASSERT_TRUE(r.ok()) << r.error().ToString();
    EXPECT_EQ((*r)["metadata"].value("name", ""), "p" + std::to_string(i));
    EXPECT_FALSE((*r)["metadata"].value("resourceVersion", "").empty());
    EXPECT_FALSE(r->contains("data"));  // kept: metadata only
    auto got = client_->Get(resources::kConfigMaps, ns(), "p" + std::to_string(i));
    ASSERT_TRUE(got.ok());
    EXPECT_EQ((*got)["data"].value("value", ""), std::to_string(i));
  }
  ASSERT_FALSE(results.at(7).ok());
  EXPECT_TRUE(results.at(7).error().IsNotFound()) << results.at(7).error().ToString();
  if (config_.http2) {
    EXPECT_EQ(client_->connections_opened() - connections_before, 1);
  }
  // A Poll with nothing in flight returns when woken, long before its timeout.
  const auto start = std::chrono::steady_clock::now();
  std::thread waker([&] {
    std::this_thread::sleep_for(100ms);
    pipeline->Wake();
  });
  EXPECT_TRUE(pipeline->Poll(10s).empty());
  waker.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST_F(ApiClientTest, EventsAreDeduplicated) {
  EventRecorder recorder(*client_, "rota-test");
  ObjectReference ref{"kueue.x-k8s.io/v1beta2", "Workload", ns(), "train", "uid-123"};
  for (int i = 0; i < 3; ++i)
    EXPECT_TRUE(recorder.Record(ref, "Normal", "QuotaReserved", "Quota reserved in ClusterQueue team-a"));
  EXPECT_TRUE(recorder.Record(ref, "Normal", "Admitted", "Admitted by ClusterQueue team-a"));
  auto list = client_->ListAll(resources::kEvents, ns());
  ASSERT_TRUE(list.ok());
  std::map<std::string, int> counts;
  for (const auto& e : list->items)
    if (e["involvedObject"].value("name", "") == "train") counts[e.value("reason", "")] = e.value("count", 0);
  EXPECT_EQ(counts, (std::map<std::string, int>{{"Admitted", 1}, {"QuotaReserved", 3}}));
}

TEST_F(ApiClientTest, PostedEventsAreWrittenTogetherAndARepeatCountsOnTheEventBeingCreated) {
  EventRecorder recorder(*client_, "rota-test");
  auto ref = [&](const std::string& name) {
    return ObjectReference{"kueue.x-k8s.io/v1beta2", "Workload", ns(), name, "uid-" + name};
  };
  // One round: ten new Events, and two repeats of the first, which reach the sender while its
  // Event is still being created.
  for (int i = 0; i < 10; ++i)
    EXPECT_TRUE(recorder.Post(ref("w" + std::to_string(i)), "Normal", "Admitted", "Admitted by ClusterQueue team-a"));
  for (int i = 0; i < 2; ++i)
    EXPECT_TRUE(recorder.Post(ref("w0"), "Normal", "Admitted", "Admitted by ClusterQueue team-a"));
  std::map<std::string, int> counts;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < deadline) {
    auto list = client_->ListAll(resources::kEvents, ns());
    ASSERT_TRUE(list.ok());
    counts.clear();
    for (const auto& e : list->items) counts[e["involvedObject"].value("name", "")] += e.value("count", 0);
    if (counts.size() == 10 && counts["w0"] == 3) break;
    std::this_thread::sleep_for(100ms);
  }
  std::map<std::string, int> want;
  for (int i = 0; i < 10; ++i) want["w" + std::to_string(i)] = 1;
  want["w0"] = 3;  // one Event, counted up
  EXPECT_EQ(counts, want);
  EXPECT_EQ(recorder.dropped(), 0u);
}

TEST_F(ApiClientTest, ARecorderBeingDestroyedDoesNotWaitForItsRateLimit) {
  // One Event a second at most, on a clock that never moves by itself: the second Event's token
  // is never due, so the sender waits for it until the recorder goes.
  FakeClock clock;
  auto client = Client::Create(config_, clock);
  ASSERT_TRUE(client.ok()) << client.status().message();
  EventLimits limits;
  limits.qps = 1;
  limits.burst = 1;
  auto recorder = std::make_unique<EventRecorder>(**client, "rota-test", limits);
  for (const char* name : {"first", "second"}) {
    ASSERT_TRUE(recorder->Post({"kueue.x-k8s.io/v1beta2", "Workload", ns(), name, std::string("uid-") + name}, "Normal",
                               "Admitted", "Admitted by ClusterQueue team-a"));
  }
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (clock.Waiters() == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
  ASSERT_GE(clock.Waiters(), 1) << "the sender never waited for the second Event's token";
  auto destroyed = std::async(std::launch::async, [&] { recorder.reset(); });
  const bool returned = destroyed.wait_for(20s) == std::future_status::ready;
  EXPECT_TRUE(returned) << "the destructor waited for a token the clock never gives";
  if (!returned) clock.Advance(std::chrono::hours(1));  // (lets it finish, so that the test can end)
}

TEST_F(ApiClientTest, EventsOfManyObjectsAreRememberedOnlyUpToTheLimit) {
  EventLimits limits;
  limits.max_remembered = 2;
  EventRecorder recorder(*client_, "rota-test", limits);
  auto ref = [&](const std::string& name) {
    return ObjectReference{"kueue.x-k8s.io/v1beta2", "Workload", ns(), name, "uid-" + name};
  };
  EXPECT_TRUE(recorder.Record(ref("a"), "Normal", "Admitted", "Admitted by ClusterQueue team-a"));
  EXPECT_TRUE(recorder.Record(ref("a"), "Normal", "Admitted", "Admitted by ClusterQueue team-a"));  // aggregated
  EXPECT_TRUE(recorder.Record(ref("b"), "Normal", "Admitted", "Admitted by ClusterQueue team-a"));
  EXPECT_TRUE(recorder.Record(ref("c"), "Normal", "Admitted", "Admitted by ClusterQueue team-a"));
  // "a" was forgotten to remember "b" and "c": its next event is a new Event, not a count of 3.
  EXPECT_TRUE(recorder.Record(ref("a"), "Normal", "Admitted", "Admitted by ClusterQueue team-a"));
  auto list = client_->ListAll(resources::kEvents, ns());
  ASSERT_TRUE(list.ok());
  std::multiset<int> counts_of_a;
  for (const auto& e : list->items)
    if (e["involvedObject"].value("name", "") == "a") counts_of_a.insert(e.value("count", 0));
  EXPECT_EQ(counts_of_a, (std::multiset<int>{1, 2}));
}

}  // namespace
}  // namespace rota::testing
