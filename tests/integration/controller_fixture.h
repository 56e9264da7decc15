#pragma once

// The fixture of the tests that run `rota run` on the real control plane (controller_test.cc,
// checkpoint_test.cc): the CRDs applied, rota started and stopped as a process with its own
// metrics and health ports and log, and helpers that make queues, priority classes and Jobs.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "support/kube.h"

namespace rota::testing {

class ControllerTest : public ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    if (HasFatalFailure()) return;
    const std::filesystem::path crds = std::filesystem::path(ROTA_SOURCE_DIR) / "crds";
    ASSERT_TRUE(kubectl()({"apply", "-f", crds.string()}).ok());
    ASSERT_TRUE(kubectl()({"wait", "--for=condition=Established", "--timeout=60s", "-f", crds.string()}).ok());
    log_ = std::filesystem::temp_directory_path() / ("rota-run-" + ns() + ".log");
  }
  void TearDown() override {
    StopRota();
    ClusterTest::TearDown();
  }

  // A TCP port nobody listens on now. The probe socket is close-on-exec: another thread of the
  // test may fork kubectl while it is open, and a child holding it keeps the port bound, so rota
  // could not listen on it ("Address already in use").
  static int FreePort() {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    close(fd);
    return ntohs(addr.sin_port);
  }

  void StartRota(const std::string& extra_config = "") {
    metrics_port_ = FreePort();
    health_port_ = FreePort();
    // A file per start: a process started earlier may not have read its own yet.
    config_ = std::filesystem::temp_directory_path() / ("rota-" + ns() + "-" + std::to_string(++starts_) + ".yaml");
    std::ofstream(config_) << "metrics: {bindAddress: \"127.0.0.1:" << metrics_port_ << "\"}\n"
                           << "health: {bindAddress: \"127.0.0.1:" << health_port_ << "\"}\n"
                           << extra_config;
    pid_ = fork();
    if (pid_ == 0) {
      FILE* f = freopen(log_.c_str(), "w", stderr);
      (void)f;
      execl(ROTA_BINARY, ROTA_BINARY, "run", "--kubeconfig", KubeconfigFromEnv().c_str(), "--config", config_.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  std::string Http(int port, const std::string& path) {
    CommandResult r =
        testing::Run({"curl", "-s", "-w", "\n%{http_code}", "http://127.0.0.1:" + std::to_string(port) + path});
    return r.out;
  }
  // Stops rota with SIGTERM; returns its exit status (or -1 if it had to be killed).
  int StopRota() {
    if (pid_ <= 0) return 0;
    kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 100; ++i) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = 0;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    pid_ = 0;
    return -1;
  }
  std::string Log() const {
    std::ifstream in(log_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::string Workload(const std::string& name, int gpus, int priority = 0) {
    return "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata:\n  name: " + name +
           "\nspec:\n  queueName: gpu\n  priority: " + std::to_string(priority) +
           "\n  podSets:\n  - name: main\n    count: 1\n    template:\n      spec:\n        containers:\n"
           "        - name: c\n          image: i\n          resources:\n            requests: {nvidia.com/gpu: " +
           std::to_string(gpus) + "}\n";
  }
  // A ResourceFlavor `flavor` (with `flavor_spec`, e.g. node labels), a ClusterQueue `cq` with
  // `gpus` nominal GPUs of it (and `preemption`, a YAML flow map, if any), and a LocalQueue "gpu"
  // in the test's namespace pointing at it.
  void MakeGpuQueue(const std::string& flavor, const std::string& cq, int gpus, const std::string& preemption = "",
                    const std::string& flavor_spec = "") {
    ASSERT_TRUE(kubectl()
                    .Apply("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: " + flavor +
                           (flavor_spec.empty() ? "" : "\nspec:\n  " + flavor_spec) + "\n")
                    .ok());
    ASSERT_TRUE(
        kubectl()
            .Apply("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: " + cq +
                   "\nspec:\n  namespaceSelector: {}\n" +
                   (preemption.empty() ? "" : "  preemption: " + preemption + "\n") +
                   "  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: " + flavor +
                   "\n      resources: [{name: nvidia.com/gpu, nominalQuota: " + std::to_string(gpus) + "}]\n")
            .ok());
    ASSERT_TRUE(kubectl()
                    .Apply("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: gpu\n"
                           "spec:\n  clusterQueue: " +
                               cq + "\n",
                           ns())
                    .ok());
  }
  // WorkloadPriorityClasses (name, value).
  void MakePriorityClasses(std::initializer_list<std::pair<std::string, int>> classes) {
    for (const auto& [name, value] : classes) {
      ASSERT_TRUE(kubectl()
                      .Apply("apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata:\n  name: " +
                             name + "\nvalue: " + std::to_string(value) + "\n")
                      .ok());
    }
  }
  // Deletes cluster-scoped objects ("kind/name") the test made.
  void DeleteAll(std::initializer_list<std::string> objects) {
    for (const std::string& o : objects) kubectl()({"delete", o, "--wait=false"});
  }

  std::string Status(const std::string& wl, const std::string& path) {
    return kubectl().JsonPath({"workload", wl}, path, ns());
  }
  std::string Condition(const std::string& wl, const std::string& type, const std::string& field = "status") {
    return Status(wl, "{.status.conditions[?(@.type==\"" + type + "\")]." + field + "}");
  }

  std::filesystem::path log_, config_;
  pid_t pid_ = 0;
  int metrics_port_ = 0, health_port_ = 0;
  int starts_ = 0;
};

// A Job of `pods` pods with `gpus_each` GPUs, labelled with `labels` (YAML lines); its pods
// complete after `complete_after` (kwok), or run until deleted when it is "".
inline std::string JobManifest(const std::string& name, const std::string& labels, int pods, int gpus_each,
                               const std::string& complete_after, bool suspend = true) {
  std::string annotations =
      complete_after.empty()
          ? ""
          : "      annotations:\n        pod-complete.stage.kwok.x-k8s.io/delay: \"" + complete_after + "\"\n";
  return "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: " + name + "\n  labels:\n" + labels +
         "spec:\n  suspend: " + (suspend ? "true" : "false") + "\n  parallelism: " + std::to_string(pods) +
         "\n  completions: " + std::to_string(pods) + "\n  template:\n    metadata:\n" + annotations +
         "    spec:\n      restartPolicy: Never\n      terminationGracePeriodSeconds: 5\n      containers:\n"
         "      - name: train\n        image: registry.example/train:1\n        resources:\n          limits:\n"
         "            nvidia.com/gpu: \"" +
         std::to_string(gpus_each) + "\"\n";
}

// `job` (a JobManifest) with pods that kwok keeps terminating until their annotation
// rota.test/hold-termination is removed (hack/kwok-stages.yaml): a test's stand-in for slow pods.
inline std::string HoldingTermination(std::string job) {
  job.replace(job.find("    metadata:\n"), 14,
              "    metadata:\n      annotations:\n        rota.test/hold-termination: \"true\"\n");
  return job;
}

}  // namespace rota::testing
