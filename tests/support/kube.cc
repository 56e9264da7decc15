#include "support/kube.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <thread>

namespace rota::testing {

CommandResult Run(const std::vector<std::string>& argv, const std::string& input) {
  CommandResult result;
  int in[2], out[2], err[2];
  if (pipe(in) != 0 || pipe(out) != 0 || pipe(err) != 0) {
    result.err = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) close(fd);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    std::fprintf(stderr, "exec %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  // Feed stdin and drain both outputs together so that neither pipe can fill up and block.
  signal(SIGPIPE, SIG_IGN);
  size_t written = 0;
  if (input.empty()) close(in[1]);
  bool in_open = !input.empty(), out_open = true, err_open = true;
  char buf[65536];
  while (out_open || err_open || in_open) {
    std::vector<pollfd> fds;
    if (in_open) fds.push_back({in[1], POLLOUT, 0});
    if (out_open) fds.push_back({out[0], POLLIN, 0});
    if (err_open) fds.push_back({err[0], POLLIN, 0});
    if (poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) break;
    for (const pollfd& p : fds) {
      if (p.revents == 0) continue;
      if (p.fd == in[1]) {
        ssize_t n = write(in[1], input.data() + written, input.size() - written);
        if (n > 0) written += static_cast<size_t>(n);
        if (n < 0 || written == input.size()) {
          close(in[1]);
          in_open = false;
        }
        continue;
      }
      ssize_t n = read(p.fd, buf, sizeof buf);
      if (n <= 0) {
        close(p.fd);
        (p.fd == out[0] ? out_open : err_open) = false;
      } else {
        (p.fd == out[0] ? result.out : result.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::string KubeconfigFromEnv() {
  const char* v = std::getenv("KUBECONFIG");
  return v ? v : "";
}

CommandResult Kubectl::operator()(std::vector<std::string> args, const std::string& input) const {
  args.insert(args.begin(), {"kubectl", "--kubeconfig", kubeconfig_});
  return Run(args, input);
}

CommandResult Kubectl::Apply(const std::string& manifest, const std::string& ns) const {
  std::vector<std::string> args{"apply", "-f", "-"};
  if (!ns.empty()) args.insert(args.end(), {"-n", ns});
  return (*this)(args, manifest);
}

std::string Kubectl::JsonPath(const std::vector<std::string>& what, const std::string& expr,
                              const std::string& ns) const {
  std::vector<std::string> args{"get"};
  args.insert(args.end(), what.begin(), what.end());
  if (!ns.empty()) args.insert(args.end(), {"-n", ns});
  args.push_back("-o");
  args.push_back("jsonpath=" + expr);
  CommandResult r = (*this)(args);
  if (!r.ok()) {
    ADD_FAILURE() << "kubectl get failed: " << r.err;
    return "";
  }
  return r.out;
}

bool Eventually(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

void ClusterTest::SetUp() {
  std::string kubeconfig = KubeconfigFromEnv();
  ASSERT_FALSE(kubeconfig.empty())
      << "KUBECONFIG is not set: integration tests need the local control plane; run them with "
         "`make test`, or `eval \"$(make -s cluster-up | tail -n 1)\"` first";
  kubectl_ = std::make_unique<Kubectl>(kubeconfig);
  CommandResult ready = (*kubectl_)({"get", "--raw", "/readyz"});
  ASSERT_TRUE(ready.ok()) << "the cluster in " << kubeconfig << " is not ready: " << ready.err;
  // These tests install CRDs cluster-wide and register webhooks that fail closed: only the
  // throwaway control plane of hack/cluster.sh, which marks itself so, may get them.
  CommandResult marked = (*kubectl_)({"get", "configmap", "rota-local-control-plane", "-n", "kube-system"});
  ASSERT_TRUE(marked.ok()) << "refusing to run against the cluster in " << kubeconfig
                           << ": it is not rota's local control plane (no ConfigMap "
                              "kube-system/rota-local-control-plane); run the integration tests with `make test`";

  // A namespace named after the test, with a random tail so reruns never collide.
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string base = std::string(info->test_suite_name()) + "-" + info->name();
  std::string name;
  for (char c : base) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      name.push_back(static_cast<char>(std::tolower(c)));
    else if (!name.empty() && name.back() != '-')
      name.push_back('-');
  }
  name = name.substr(0, 50);
  while (!name.empty() && name.back() == '-') name.pop_back();
  std::random_device rd;
  ns_ = "t-" + name + "-" + std::to_string(rd() % 100000);
  CommandResult created = (*kubectl_)({"create", "namespace", ns_});
  ASSERT_TRUE(created.ok()) << created.err;
}

void ClusterTest::WaitForEarlierTestNamespacesGone(std::chrono::milliseconds timeout) {
  std::string left;
  const bool gone = Eventually(
      [&] {
        CommandResult r = (*kubectl_)({"get", "namespaces", "-o", "name"});
        if (!r.ok()) return false;
        left.clear();
        std::istringstream lines(r.out);
        for (std::string line; std::getline(lines, line);) {
          if (line.rfind("namespace/t-", 0) == 0 && line != "namespace/" + ns_) left += line + " ";
        }
        return left.empty();
      },
      timeout);
  EXPECT_TRUE(gone) << "earlier tests' namespaces are still there: " << left;
}

void ClusterTest::TearDown() {
  if (kubectl_ && !ns_.empty()) {
    (*kubectl_)({"delete", "namespace", ns_, "--wait=false", "--ignore-not-found"});
  }
}

}  // namespace rota::testing
