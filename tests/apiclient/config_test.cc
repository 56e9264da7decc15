#include "rota/apiclient/config.h"

#include "rota/apiclient/client.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace rota::apiclient {
namespace {

namespace fs = std::filesystem;

class KubeconfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("rota-kubeconfig-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "ca.crt") << "not checked here";
    std::ofstream(dir_ / "admin.crt") << "";
    std::ofstream(dir_ / "admin.key") << "";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  // A kubeconfig `name` whose current context uses cluster "c" with `cluster` (a flow map's fields).
  std::string OneCluster(const std::string& name, const std::string& cluster) {
    return Write(name, "clusters:\n- name: c\n  cluster: {" + cluster +
                           "}\ncontexts:\n- name: x\n  context: {cluster: c}\ncurrent-context: x\n");
  }
  fs::path dir_;
};

TEST_F(KubeconfigTest, ReadsTheCurrentContextWithRelativePaths) {
  std::string f = Write("config", R"(
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: ca.crt}
users:
- name: admin
  user: {client-certificate: admin.crt, client-key: admin.key}
contexts:
- name: local
  context: {cluster: local, user: admin}
current-context: local
)");
  Result<RestConfig> c = LoadKubeconfig(f);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->server, "https://127.0.0.1:6443");
  EXPECT_EQ(c->ca_file, (dir_ / "ca.crt").string());
  EXPECT_EQ(c->client_cert_file, (dir_ / "admin.crt").string());
  EXPECT_FALSE(c->insecure);
}

TEST_F(KubeconfigTest, DropsTheTrailingSlashOfTheServerAsClientGoDoes) {
  // envtest (and so Kueue's benchmark runner) writes "server: https://127.0.0.1:PORT/".
  std::string f = Write("config", R"(
clusters:
- name: env
  cluster: {server: "https://127.0.0.1:42151/", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: t}
contexts:
- name: env
  context: {cluster: env, user: u}
current-context: env
)");
  Result<RestConfig> c = LoadKubeconfig(f);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->server, "https://127.0.0.1:42151");
}

TEST_F(KubeconfigTest, DisableHttp2InTheEnvironmentKeepsTheClientOnHttp11AsClientGo) {
  std::string f = Write("config", R"(
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
)");
  ::unsetenv("DISABLE_HTTP2");
  EXPECT_TRUE(LoadKubeconfig(f).value().http2);
  ::setenv("DISABLE_HTTP2", "true", 1);
  EXPECT_FALSE(LoadKubeconfig(f).value().http2);
  ::unsetenv("DISABLE_HTTP2");
}

TEST_F(KubeconfigTest, MergesFilesFirstOneWinsAndDecodesData) {
  std::string a = Write("a", R"(
clusters:
- name: prod
  cluster: {server: "https://prod:6443", certificate-authority-data: aGVsbG8=}
contexts:
- name: prod
  context: {cluster: prod, user: robot}
current-context: prod
)");
  std::string b = Write("b", R"(
clusters:
- name: prod
  cluster: {server: "https://ignored:6443"}
users:
- name: robot
  user: {token: s3cret}
current-context: other
)");
  Result<RestConfig> c = LoadKubeconfig(a + ":" + b);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->server, "https://prod:6443");
  EXPECT_EQ(c->ca_data, "hello");
  EXPECT_EQ(c->token, "s3cret");
}

TEST_F(KubeconfigTest, ErrorsNameTheFileAndField) {
  std::string f = OneCluster("bad", R"(certificate-authority-data: "!!notbase64")");
  Result<RestConfig> c = LoadKubeconfig(f);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), f + ": clusters[c].server: is required");

  Result<RestConfig> missing = LoadKubeconfig(f, "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), f + ": context \"nope\" is not defined");

  Result<RestConfig> none = LoadKubeconfig((dir_ / "absent").string());
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no kubeconfig found"), std::string::npos);

  // With a server, the bad base64 itself is what is reported.
  std::string b64 = OneCluster("b64", R"(server: "https://127.0.0.1:6443", certificate-authority-data: "!!notbase64")");
  Result<RestConfig> bad_data = LoadKubeconfig(b64);
  ASSERT_FALSE(bad_data.ok());
  EXPECT_NE(bad_data.status().message().find(b64 + ": clusters[c].certificate-authority-data"), std::string::npos)
      << bad_data.status().message();
}

// A bearer token is not sent in clear text across the network; a local proxy is another matter.
TEST(ClientConfigTest, ATokenOverPlainHttpOnlyToThisMachine) {
  RestConfig remote;
  remote.server = "http://10.0.0.1:8080";
  remote.token = "secret";
  auto refused = Client::Create(remote);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "server \"http://10.0.0.1:8080\" is plain http://: the bearer token would cross the network in clear "
            "text; use https://");
  for (const char* local : {"http://127.0.0.1:8001", "http://localhost:8001", "http://[::1]:8001"}) {
    RestConfig c = remote;
    c.server = local;
    EXPECT_TRUE(Client::Create(c).ok()) << local;
  }
  RestConfig no_token;
  no_token.server = "http://10.0.0.1:8080";
  EXPECT_TRUE(Client::Create(no_token).ok());
}

// kubectl refuses a cluster that both names a CA and skips verification; so does rota.
TEST_F(KubeconfigTest, ACaWithInsecureSkipTlsVerifyIsAnError) {
  std::string f = OneCluster(
      "both", R"(server: "https://127.0.0.1:6443", certificate-authority: ca.crt, insecure-skip-tls-verify: true)");
  Result<RestConfig> c = LoadKubeconfig(f);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            f + ": clusters[c]: certificate-authority and insecure-skip-tls-verify are both set; use one");
}

}  // namespace
}  // namespace rota::apiclient

namespace rota::apiclient {
namespace {

TEST(InClusterConfigTest, UsesTheServiceAccountAndTheServiceEnvironment) {
  const fs::path root = fs::temp_directory_path() / ("rota-sa-" + std::to_string(::getpid()));
  fs::create_directories(root);
  std::ofstream(root / "token") << "sa-token\n";
  std::ofstream(root / "ca.crt") << "pem";
  unsetenv("KUBERNETES_SERVICE_HOST");
  Result<RestConfig> outside = InClusterConfig(root.string());
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.status().message().find("not running in a pod"), std::string::npos);

  setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  Result<RestConfig> inside = InClusterConfig(root.string());
  ASSERT_TRUE(inside.ok()) << inside.status().message();
  EXPECT_EQ(inside->server, "https://10.0.0.1:443");
  EXPECT_EQ(inside->token_file, (root / "token").string());
  EXPECT_EQ(inside->ca_file, (root / "ca.crt").string());
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
  fs::remove_all(root);
}

}  // namespace
}  // namespace rota::apiclient
