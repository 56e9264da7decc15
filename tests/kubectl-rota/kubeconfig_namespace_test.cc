#include "rota/kubectl/kubeconfig_namespace.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace rota::kubectl {
namespace {

class KubeconfigNamespaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("kubectl-rota-test-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(KubeconfigNamespaceTest, TheContextsNamespaceElseDefault) {
  const std::string file = Write("config", R"(
current-context: dev
contexts:
- name: dev
  context: {cluster: c, user: u, namespace: ml}
- name: prod
  context: {cluster: c, user: u}
)");
  EXPECT_EQ(ContextNamespace(file, ""), "ml");
  EXPECT_EQ(ContextNamespace(file, "dev"), "ml");
  EXPECT_EQ(ContextNamespace(file, "prod"), "default");
  EXPECT_EQ(ContextNamespace(file, "unknown"), "default");
  EXPECT_EQ(ContextNamespace((dir_ / "missing").string(), ""), "default");
  EXPECT_EQ(ContextNamespace(Write("broken", "contexts: [:"), ""), "default");
}

TEST_F(KubeconfigNamespaceTest, FilesMergeAsKubectlMergesThem) {
  const std::string first = Write("a", "current-context: x\ncontexts: [{name: x, context: {namespace: from-a}}]\n");
  const std::string second =
      Write("b",
            "current-context: y\n"
            "contexts: [{name: x, context: {namespace: from-b}}, {name: y, context: {namespace: y}}]\n");
  EXPECT_EQ(ContextNamespace(first + ":" + second, ""), "from-a");  // the first file's current-context and entry
  EXPECT_EQ(ContextNamespace(first + ":" + second, "y"), "y");
  EXPECT_EQ(ContextNamespace(second + ":" + first, ""), "y");
}

}  // namespace
}  // namespace rota::kubectl
