#include "soak/replicas.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "support/kube.h"

namespace rota::soak {

Replicas::Replicas(std::string binary, std::string kubeconfig, std::string config, std::filesystem::path out_dir,
                   int count)
    : binary_(std::move(binary)),
      kubeconfig_(std::move(kubeconfig)),
      config_(std::move(config)),
      out_dir_(std::move(out_dir)),
      pids_(count, 0) {
  std::lock_guard l(mu_);
  for (size_t i = 0; i < pids_.size(); ++i) Start(i);
}

Replicas::~Replicas() {
  std::lock_guard l(mu_);
  for (pid_t p : pids_)
    if (p > 0) {
      kill(p, SIGCONT);  // a stopped one must run to see SIGTERM
      kill(p, SIGTERM);
    }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (pid_t& p : pids_) {
    while (p > 0 && waitpid(p, nullptr, WNOHANG) == 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (p > 0 && kill(p, 0) == 0) {
      kill(p, SIGKILL);
      waitpid(p, nullptr, 0);
    }
    p = 0;
  }
}

void Replicas::Start(size_t slot) {
  const std::string log = (out_dir_ / ("replica-" + std::to_string(slot) + "-" + std::to_string(++starts_) + ".log"));
  const pid_t pid = fork();
  if (pid == 0) {
    if (!std::freopen(log.c_str(), "w", stderr)) _exit(126);
    execl(binary_.c_str(), binary_.c_str(), "run", "--kubeconfig", kubeconfig_.c_str(), "--config", config_.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  pids_[slot] = pid;
}

int Replicas::Supervise() {
  std::lock_guard l(mu_);
  int started = 0;
  for (size_t i = 0; i < pids_.size(); ++i) {
    if (pids_[i] > 0 && waitpid(pids_[i], nullptr, WNOHANG) == 0) continue;
    Start(i);
    ++started;
  }
  return started;
}

pid_t Replicas::PidOf(const std::string& holder) const {
  const size_t underscore = holder.rfind('_');
  if (underscore == std::string::npos) return 0;
  const pid_t pid = static_cast<pid_t>(std::atoi(holder.c_str() + underscore + 1));
  std::lock_guard l(mu_);
  for (pid_t p : pids_)
    if (p == pid) return pid;
  return 0;
}

void Replicas::DumpStacks(const std::filesystem::path& file) const {
  std::vector<pid_t> live;
  {
    std::lock_guard l(mu_);
    for (pid_t p : pids_)
      if (p > 0) live.push_back(p);
  }
  std::ofstream out(file, std::ios::app);
  for (pid_t p : live) {
    out << "=== replica pid " << p << "\n" << std::flush;
    testing::CommandResult r =
        testing::Run({"gdb", "-p", std::to_string(p), "-batch", "-ex", "thread apply all bt", "-ex", "detach"});
    out << (r.ok() ? r.out : "gdb failed: " + r.err) << "\n";
  }
}

int Replicas::starts() const {
  std::lock_guard l(mu_);
  return starts_;
}

}  // namespace rota::soak
