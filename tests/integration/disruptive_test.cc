// Tests that disturb the shared control plane (restarting the apiserver, compacting etcd) or
// take seconds of wall time; ctest runs them alone (RUN_SERIAL).

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "rota/apiclient/client.h"
#include "rota/apiclient/informer.h"
#include "support/kube.h"
#include "support/tcp_proxy.h"

namespace rota::testing {
namespace {

using namespace std::chrono_literals;
using namespace rota::apiclient;
namespace fs = std::filesystem;

struct Name {
  std::string name, value, rv;
  static Result<Name> Decode(const Json& j) {
    Name n{j["metadata"].value("name", ""), "", j["metadata"].value("resourceVersion", "")};
    if (j.contains("data") && j["data"].is_object()) n.value = j["data"].value("value", "");
    return n;
  }
};

Json ConfigMap(const std::string& name, const std::string& value) {
  return {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", name}}}, {"data", {{"value", value}}}};
}

class DisruptiveTest : public ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    if (HasFatalFailure()) return;
    cluster_dir_ = fs::path(KubeconfigFromEnv()).parent_path();
    auto cfg = LoadKubeconfig(KubeconfigFromEnv());
    ASSERT_TRUE(cfg.ok());
    client_ = std::move(Client::Create(*cfg).value());
  }

  void RestartApiserver() {
    CommandResult r =
        testing::Run({"env", "ROTA_CLUSTER_DIR=" + cluster_dir_.string(),
                      (fs::path(ROTA_SOURCE_DIR) / "hack" / "cluster.sh").string(), "restart", "kube-apiserver"});
    ASSERT_TRUE(r.ok()) << r.err;
  }

  // Compacts etcd's history up to its current revision: every older resourceVersion is gone.
  void CompactEtcd() {
    std::ifstream in(cluster_dir_ / "endpoints");
    std::string line, etcd;
    while (std::getline(in, line))
      if (line.rfind("etcd=", 0) == 0) etcd = line.substr(5);
    ASSERT_FALSE(etcd.empty());
    CommandResult range = testing::Run({"curl", "-sf", "-X", "POST", etcd + "/v3/kv/range", "-d", R"({"key":"AA=="})"});
    ASSERT_TRUE(range.ok()) << range.err;
    const std::string revision = Json::parse(range.out)["header"]["revision"];
    CommandResult compact = testing::Run({"curl", "-sf", "-X", "POST", etcd + "/v3/kv/compaction", "-d",
                                          R"({"revision":")" + revision + R"(","physical":true})"});
    ASSERT_TRUE(compact.ok()) << compact.err;
  }

  // Runs an informer over this test's ConfigMaps and records handler calls.
  struct Recording {
    std::mutex mu;
    std::vector<std::string> events;
    std::vector<std::string> Snapshot() {
      std::lock_guard l(mu);
      std::vector<std::string> out;
      for (const auto& e : events)
        if (e.find("kube-root-ca") == std::string::npos) out.push_back(e);
      return out;
    }
  };
  std::unique_ptr<Informer<Name>> Watch(Recording& rec) { return Watch(rec, *client_); }
  std::unique_ptr<Informer<Name>> Watch(Recording& rec, Client& client) {
    Informer<Name>::Handlers h;
    h.on_add = [&](const Name& n) {
      std::lock_guard l(rec.mu);
      rec.events.push_back("add " + n.name + "=" + n.value);
    };
    h.on_update = [&](const Name& o, const Name& n) {
      std::lock_guard l(rec.mu);
      rec.events.push_back("update " + n.name + " " + o.value + "->" + n.value);
    };
    h.on_delete = [&](const Name& n) {
      std::lock_guard l(rec.mu);
      rec.events.push_back("delete " + n.name);
    };
    InformerOptions o;
    o.backoff_base = 200ms;  // reconnect quickly in the test
    auto inf = std::make_unique<Informer<Name>>(client, resources::kConfigMaps, ns(), Name::Decode, h, o);
    inf->Start();
    return inf;
  }

  // A proxy in front of the test's apiserver, and a client that reaches it through the proxy.
  std::unique_ptr<TcpProxy> StartProxy() {
    const std::string server = LoadKubeconfig(KubeconfigFromEnv()).value().server;
    return TcpProxy::Start("127.0.0.1", static_cast<uint16_t>(std::stoi(server.substr(server.rfind(':') + 1))));
  }
  std::unique_ptr<Client> ProxiedClient(const TcpProxy& proxy, std::chrono::milliseconds watch_idle_timeout) {
    RestConfig cfg = LoadKubeconfig(KubeconfigFromEnv()).value();
    cfg.server = "https://127.0.0.1:" + std::to_string(proxy.port());
    cfg.watch_idle_timeout = watch_idle_timeout;
    return std::move(Client::Create(cfg).value());
  }

  // The informer's store equals the apiserver's list.
  bool Converged(const Informer<Name>& inf) {
    auto list = client_->ListAll(resources::kConfigMaps, ns());
    if (!list.ok() || list->items.size() != inf.Size()) return false;
    for (const auto& item : list->items) {
      auto mine = inf.Get(ObjectKey(item));
      if (!mine || mine->rv != item["metadata"].value("resourceVersion", "")) return false;
    }
    return true;
  }

  fs::path cluster_dir_;
  std::unique_ptr<Client> client_;
};

TEST_F(DisruptiveTest, InformerSurvivesAnApiserverRestartWithoutLosingOrRepeating) {
  ASSERT_TRUE(client_->Create(resources::kConfigMaps, ns(), ConfigMap("a", "1")).ok());
  ASSERT_TRUE(client_->Create(resources::kConfigMaps, ns(), ConfigMap("b", "1")).ok());
  Recording rec;
  auto inf = Watch(rec);
  ASSERT_TRUE(Eventually([&] { return inf->HasSynced() && rec.Snapshot().size() == 2; }, 30s));

  RestartApiserver();
  ASSERT_TRUE(client_->Patch(resources::kConfigMaps, ns(), "a", PatchType::kMerge, {{"data", {{"value", "2"}}}}).ok());
  ASSERT_TRUE(client_->Create(resources::kConfigMaps, ns(), ConfigMap("c", "1")).ok());
  ASSERT_TRUE(client_->Delete(resources::kConfigMaps, ns(), "b").ok());

  EXPECT_TRUE(Eventually([&] { return Converged(*inf) && rec.Snapshot().size() == 5; }, 60s))
      << "store has " << inf->Size() << " objects";
  std::vector<std::string> events = rec.Snapshot();
  // A list (the first, or a re-list) reports its diff in no particular order.
  std::sort(events.begin(), events.begin() + 2);
  std::sort(events.begin() + 2, events.end());
  EXPECT_EQ(events, (std::vector<std::string>{"add a=1", "add b=1", "add c=1", "delete b", "update a 1->2"}));
  inf->Stop();
}

// A watch whose connection is cut mid-stream resumes from the last event it applied: the
// apiserver does not send again what the store has, so no object goes back to an older version.
TEST_F(DisruptiveTest, AWatchCutMidStreamResumesFromItsLastEvent) {
  auto proxy = StartProxy();
  auto proxied = ProxiedClient(*proxy, RestConfig{}.watch_idle_timeout);
  Recording rec;
  auto inf = Watch(rec, *proxied);
  ASSERT_TRUE(Eventually([&] { return inf->HasSynced(); }, 30s));
  auto set_all = [&](const std::string& value) {
    for (int i = 0; i < 5; ++i) {
      const std::string name = "cm-" + std::to_string(i);
      Json cm = ConfigMap(name, value);
      auto r = value == "v1" ? client_->Create(resources::kConfigMaps, ns(), cm)
                             : client_->Patch(resources::kConfigMaps, ns(), name, PatchType::kMerge, cm);
      ASSERT_TRUE(r.ok()) << r.error().ToString();
    }
  };
  set_all("v1");
  set_all("v2");
  ASSERT_TRUE(Eventually([&] { return Converged(*inf); }, 30s));
  proxy->CutAll();
  set_all("v3");
  ASSERT_TRUE(Eventually([&] { return Converged(*inf); }, 30s));
  std::vector<std::string> expected;
  for (const char* step : {"add cm-%d=v1", "update cm-%d v1->v2", "update cm-%d v2->v3"})
    for (int i = 0; i < 5; ++i) {
      char e[64];
      std::snprintf(e, sizeof e, step, i);
      expected.push_back(e);
    }
  std::vector<std::string> got = rec.Snapshot();
  std::sort(got.begin(), got.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(got, expected);
}

// A connection that stays open but carries nothing more (a middlebox that lost its state, a frozen
// peer) gives no error and answers TCP keepalive: only the watch's idle timeout notices it. The
// informer then reopens its watch from the last event and sees what changed meanwhile.
TEST_F(DisruptiveTest, AWatchThatFallsSilentIsReopenedFromItsLastEvent) {
  auto proxy = StartProxy();
  auto proxied = ProxiedClient(*proxy, 3s);
  Recording rec;
  auto inf = Watch(rec, *proxied);
  ASSERT_TRUE(client_->Create(resources::kConfigMaps, ns(), ConfigMap("before", "1")).ok());
  ASSERT_TRUE(Eventually([&] { return inf->HasSynced() && Converged(*inf); }, 30s));
  proxy->FreezeAll();
  ASSERT_TRUE(client_->Create(resources::kConfigMaps, ns(), ConfigMap("during", "1")).ok());
  ASSERT_TRUE(
      client_->Patch(resources::kConfigMaps, ns(), "before", PatchType::kMerge, {{"data", {{"value", "2"}}}}).ok());
  EXPECT_TRUE(Eventually([&] { return Converged(*inf); }, 30s)) << "the silent watch was not reopened";
  std::vector<std::string> got = rec.Snapshot();
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"add before=1", "add during=1", "update before 1->2"}));
  inf->Stop();
}

TEST_F(DisruptiveTest, WatchFromACompactedVersionAsksForARelist) {
  auto list = client_->ListAll(resources::kConfigMaps, ns());
  ASSERT_TRUE(list.ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(client_->Create(resources::kConfigMaps, ns(), ConfigMap("x" + std::to_string(i), "v")).ok());
  }
  CompactEtcd();
  WatchOptions o;
  o.resource_version = "1";
  o.timeout_seconds = 10;
  auto watched = client_->Watch(resources::kConfigMaps, ns(), o, [](const WatchEvent&) { return true; });
  ASSERT_FALSE(watched.ok());
  EXPECT_EQ(watched.error().code, 410) << watched.error().ToString();
  EXPECT_EQ(watched.error().retry, Retry::kRelist);
}

TEST_F(DisruptiveTest, InformerRelistsAfter410AndConvergesExactly) {
  ASSERT_TRUE(client_->Create(resources::kConfigMaps, ns(), ConfigMap("keep", "1")).ok());
  ASSERT_TRUE(client_->Create(resources::kConfigMaps, ns(), ConfigMap("drop", "1")).ok());
  Recording rec;
  auto inf = Watch(rec);
  ASSERT_TRUE(Eventually([&] { return inf->HasSynced() && rec.Snapshot().size() == 2; }, 30s));
  const int64_t lists_before = inf->lists();

  // Changes, then every old resourceVersion compacted away and the watch cache dropped: the
  // informer's resume point no longer exists anywhere.
  ASSERT_TRUE(client_->Delete(resources::kConfigMaps, ns(), "drop").ok());
  ASSERT_TRUE(client_->Create(resources::kConfigMaps, ns(), ConfigMap("new", "1")).ok());
  CompactEtcd();
  RestartApiserver();
  ASSERT_TRUE(
      client_->Patch(resources::kConfigMaps, ns(), "keep", PatchType::kMerge, {{"data", {{"value", "2"}}}}).ok());

  EXPECT_TRUE(Eventually([&] { return Converged(*inf); }, 60s));
  EXPECT_GT(inf->lists(), lists_before) << "the informer never re-listed";
  EXPECT_EQ(inf->Get(ns() + "/keep")->value, "2");
  EXPECT_EQ(inf->Get(ns() + "/drop"), nullptr);
  EXPECT_NE(inf->Get(ns() + "/new"), nullptr);
  inf->Stop();
}

// Starts the lease-holder helper; its output goes to `out`.
pid_t StartHolder(const std::string& lease, const std::string& identity, const std::string& ns, const fs::path& out) {
  pid_t pid = fork();
  if (pid == 0) {
    FILE* f = freopen(out.c_str(), "w", stdout);
    (void)f;
    execl(ROTA_LEASE_HOLDER, ROTA_LEASE_HOLDER, KubeconfigFromEnv().c_str(), ns.c_str(), lease.c_str(),
          identity.c_str(), "4", "3", "1", static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST_F(DisruptiveTest, ExactlyOneOfTwoProcessesLeadsAndTheOtherTakesOverWhenItDies) {
  const fs::path dir = fs::temp_directory_path() / ("rota-lease-" + ns());
  fs::create_directories(dir);
  pid_t a = StartHolder("rota-leader", "a", ns(), dir / "a");
  pid_t b = StartHolder("rota-leader", "b", ns(), dir / "b");
  ASSERT_TRUE(Eventually(
      [&] {
        return Slurp(dir / "a").find("leading") != std::string::npos ||
               Slurp(dir / "b").find("leading") != std::string::npos;
      },
      30s));
  std::this_thread::sleep_for(3s);  // several renew periods: the other must still be waiting
  const bool a_leads = Slurp(dir / "a").find("leading") != std::string::npos;
  const bool b_leads = Slurp(dir / "b").find("leading") != std::string::npos;
  EXPECT_NE(a_leads, b_leads) << "exactly one process must lead";
  const pid_t leader = a_leads ? a : b, follower = a_leads ? b : a;
  const fs::path follower_out = dir / (a_leads ? "b" : "a");
  EXPECT_EQ(kubectl().JsonPath({"lease", "rota-leader"}, "{.spec.holderIdentity}", ns()), a_leads ? "a" : "b");

  // Kill the leader without letting it release: the follower takes over once the lease (4 s)
  // runs out, give or take a retry period.
  const auto killed_at = std::chrono::steady_clock::now();
  kill(leader, SIGKILL);
  waitpid(leader, nullptr, 0);
  ASSERT_TRUE(Eventually([&] { return Slurp(follower_out).find("leading") != std::string::npos; }, 15s));
  const auto took = std::chrono::steady_clock::now() - killed_at;
  EXPECT_LT(took, 7s) << "took over after " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                      << " ms";

  // A clean stop releases the lease.
  kill(follower, SIGTERM);
  waitpid(follower, nullptr, 0);
  EXPECT_EQ(kubectl().JsonPath({"lease", "rota-leader"}, "{.spec.holderIdentity}", ns()), "");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rota::testing
