#pragma once

// Support for integration tests that drive the real local control plane (hack/cluster.sh) with
// kubectl. Every test gets a fresh namespace; nothing here fakes the apiserver.

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace rota::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
  bool ok() const { return exit_code == 0; }
};

// Runs argv[0] (looked up on PATH) with `input` on its standard input; captures both outputs.
CommandResult Run(const std::vector<std::string>& argv, const std::string& input = "");

// The KUBECONFIG the test run was given, or "" when there is none.
std::string KubeconfigFromEnv();

// kubectl against the test cluster.
class Kubectl {
 public:
  explicit Kubectl(std::string kubeconfig) : kubeconfig_(std::move(kubeconfig)) {}
  CommandResult operator()(std::vector<std::string> args, const std::string& input = "") const;
  // Applies a manifest from a string.
  CommandResult Apply(const std::string& manifest, const std::string& ns = "") const;
  // kubectl get with -o jsonpath=EXPR; returns stdout, or "" (and records a failure) on error.
  std::string JsonPath(const std::vector<std::string>& what, const std::string& expr, const std::string& ns = "") const;

 private:
  std::string kubeconfig_;
};

// Polls `done` every 250 ms until it returns true or `timeout` passes; returns whether it did.
bool Eventually(const std::function<bool()>& done, std::chrono::milliseconds timeout);

// A test fixture with a fresh namespace on the real cluster, deleted afterwards. Fails (never
// skips) when no cluster is reachable.
class ClusterTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  const Kubectl& kubectl() const { return *kubectl_; }
  const std::string& ns() const { return ns_; }
  // Waits until the namespaces of earlier tests (deleted without waiting) are gone, so that their
  // deletion does not reach a controller this test measures. Fails the test after `timeout`.
  void WaitForEarlierTestNamespacesGone(std::chrono::milliseconds timeout);

 private:
  std::unique_ptr<Kubectl> kubectl_;
  std::string ns_;
};

}  // namespace rota::testing
