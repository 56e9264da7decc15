// The checkpoint handshake on the real control plane (docs/checkpoint.md). The test plays the
// trainer: it reads rota.dev/checkpoint-requested-at on the pods and answers (or not) with
// rota.dev/checkpointed-at. Runs serially: a running controller acts on the whole cluster.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "integration/controller_fixture.h"
#include "support/kube.h"

namespace rota::testing {
namespace {

using namespace std::chrono_literals;

class CheckpointTest : public ControllerTest {
 protected:
  // A 4-GPU queue preempting lower priorities, classes low (10) and high (100), rota running, and
  // Job "train" (low, 2 pods of 2 GPUs, checkpointable within `timeout`) running.
  void StartTraining(const std::string& timeout) {
    flavor_ = "a100-" + ns();
    cq_ = "cq-" + ns();
    low_ = "low-" + ns();
    high_ = "high-" + ns();
    MakeGpuQueue(flavor_, cq_, 4, "{withinClusterQueue: LowerPriority}");
    if (HasFatalFailure()) return;
    MakePriorityClasses({{low_, 10}, {high_, 100}});
    if (HasFatalFailure()) return;
    StartRota();
    std::string train = JobManifest("train", Labels(low_), 2, 2, "");
    train.replace(train.find("metadata:\n"), 10,
                  "metadata:\n  annotations:\n    rota.dev/checkpoint: \"true\"\n    rota.dev/checkpoint-timeout: " +
                      timeout + "\n");
    ASSERT_TRUE(kubectl().Apply(train, ns()).ok());
    ASSERT_TRUE(Eventually([&] { return TrainPods("{.status.phase}") == "Running Running "; }, 60s)) << Log();
    train_wl_ = kubectl().JsonPath({"workloads"}, "{.items[0].metadata.name}", ns());
  }
  void TearDown() override {
    ControllerTest::TearDown();
    if (!cq_.empty()) {
      DeleteAll({"clusterqueue/" + cq_, "resourceflavor/" + flavor_, "workloadpriorityclass/" + low_,
                 "workloadpriorityclass/" + high_});
    }
  }
  static std::string Labels(const std::string& cls) {
    return "    kueue.x-k8s.io/queue-name: gpu\n    kueue.x-k8s.io/priority-class: " + cls + "\n";
  }
  // Job "urgent" (high, one pod of 4 GPUs) preempts train; returns once train is asked.
  void SubmitUrgent() {
    ASSERT_TRUE(kubectl().Apply(JobManifest("urgent", Labels(high_), 1, 4, ""), ns()).ok());
    ASSERT_TRUE(Eventually([&] { return Condition(train_wl_, "CheckpointRequested") == "True"; }, 60s)) << Log();
    requested_at_ = Condition(train_wl_, "CheckpointRequested", "lastTransitionTime");
  }
  std::string TrainPods(const std::string& field) {
    return kubectl().JsonPath({"pods", "-l", "job-name=train"}, "{range .items[*]}" + field + "{\" \"}{end}", ns());
  }
  std::string UrgentWorkload() {
    return kubectl().JsonPath({"workloads", "-l", "kueue.x-k8s.io/job-uid=" + Uid("urgent")},
                              "{.items[0].metadata.name}", ns());
  }
  std::string Uid(const std::string& job) { return kubectl().JsonPath({"job", job}, "{.metadata.uid}", ns()); }
  std::string Suspended(const std::string& job) { return kubectl().JsonPath({"job", job}, "{.spec.suspend}", ns()); }
  void Answer(const std::string& at) {
    const std::string pod = kubectl().JsonPath({"pods", "-l", "job-name=train"}, "{.items[0].metadata.name}", ns());
    ASSERT_TRUE(kubectl()({"annotate", "pod", pod, "rota.dev/checkpointed-at=" + at, "--overwrite", "-n", ns()}).ok());
  }
  // Kills rota at once (no clean stop) and starts it again.
  void KillAndRestartRota() {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = 0;
    StartRota();
  }

  std::string flavor_, cq_, low_, high_, train_wl_, requested_at_;
};

TEST_F(CheckpointTest, AVictimRunsUntilItAnswersThenItsQuotaGoesToThePreemptor) {
  StartTraining("10m");
  if (HasFatalFailure()) return;
  SubmitUrgent();
  if (HasFatalFailure()) return;
  EXPECT_EQ(Condition(train_wl_, "CheckpointRequested", "reason"), "InClusterQueue");
  const std::string message = Condition(train_wl_, "CheckpointRequested", "message");
  EXPECT_NE(message.find("Preempted to accommodate workload " + ns() + "/" + UrgentWorkload()), std::string::npos)
      << message;
  EXPECT_NE(message.find("; asked to checkpoint by "), std::string::npos) << message;
  // The pods are asked; the Job keeps running and its Workload its quota; urgent waits and says so.
  ASSERT_TRUE(Eventually(
      [&] {
        return TrainPods("{.metadata.annotations.rota\\.dev/checkpoint-requested-at}") ==
               requested_at_ + " " + requested_at_ + " ";
      },
      30s))
      << TrainPods("{.metadata.annotations}") << Log();
  ASSERT_TRUE(Eventually(
      [&] {
        return Condition(UrgentWorkload(), "QuotaReserved", "message")
                   .rfind(
                       "waiting for 1 workload(s) to "
                       "checkpoint (deadline ",
                       0) == 0;
      },
      30s))
      << Condition(UrgentWorkload(), "QuotaReserved", "message") << Log();
  EXPECT_EQ(Suspended("train"), "false");
  EXPECT_EQ(TrainPods("{.status.phase}"), "Running Running ");
  EXPECT_EQ(Condition(train_wl_, "Evicted"), "");
  EXPECT_EQ(Suspended("urgent"), "true");

  // The trainer saves a checkpoint: train is evicted and suspended, and urgent starts.
  Answer(requested_at_);
  if (HasFatalFailure()) return;
  ASSERT_TRUE(Eventually([&] { return Suspended("urgent") == "false"; }, 60s)) << Log();
  EXPECT_EQ(Condition(train_wl_, "CheckpointRequested"), "False");
  EXPECT_EQ(Condition(train_wl_, "CheckpointRequested", "reason"), "Checkpointed");
  EXPECT_EQ(Condition(train_wl_, "Evicted", "reason"), "Preempted");
  EXPECT_EQ(Condition(train_wl_, "Preempted", "reason"), "InClusterQueue");
  EXPECT_EQ(Suspended("train"), "true");
  EXPECT_EQ(Condition(train_wl_, "QuotaReserved", "reason"), "Pending") << "waits behind urgent, not re-admitted";
  const std::string metrics = Http(metrics_port_, "/metrics");
  EXPECT_NE(metrics.find("rota_checkpoint_requests_total{cluster_queue=\"" + cq_ + "\",result=\"acknowledged\"} 1"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("rota_preemption_lost_resource_seconds_total{cluster_queue=\"" + cq_ + "\""),
            std::string::npos);
}

TEST_F(CheckpointTest, WithoutAnAnswerTheDeadlineEvicts) {
  StartTraining("5s");
  if (HasFatalFailure()) return;
  SubmitUrgent();
  if (HasFatalFailure()) return;
  ASSERT_TRUE(Eventually([&] { return Condition(train_wl_, "Evicted") == "True"; }, 60s)) << Log();
  EXPECT_EQ(Condition(train_wl_, "CheckpointRequested", "reason"), "CheckpointTimeout");
  // Not before the deadline: five seconds after the request (times in whole seconds).
  auto seconds_of = [](const std::string& t) {
    return std::stoi(t.substr(11, 2)) * 3600 + std::stoi(t.substr(14, 2)) * 60 + std::stoi(t.substr(17, 2));
  };
  const std::string evicted_at = Condition(train_wl_, "Evicted", "lastTransitionTime");
  EXPECT_GE((seconds_of(evicted_at) - seconds_of(requested_at_) + 86400) % 86400, 5)
      << requested_at_ << " " << evicted_at;
  ASSERT_TRUE(Eventually([&] { return Suspended("urgent") == "false"; }, 60s)) << Log();
}

TEST_F(CheckpointTest, ARequestIsWithdrawnWhenThePreemptorGoesAway) {
  StartTraining("10m");
  if (HasFatalFailure()) return;
  SubmitUrgent();
  if (HasFatalFailure()) return;
  ASSERT_TRUE(
      Eventually([&] { return TrainPods("{.metadata.annotations.rota\\.dev/checkpoint-requested-at}") != "  "; }, 30s));
  ASSERT_TRUE(kubectl()({"delete", "job", "urgent", "-n", ns(), "--cascade=foreground", "--wait=true"}).ok());
  ASSERT_TRUE(Eventually([&] { return Condition(train_wl_, "CheckpointRequested", "reason") == "Cancelled"; }, 60s))
      << Log();
  EXPECT_EQ(Condition(train_wl_, "CheckpointRequested"), "False");
  ASSERT_TRUE(
      Eventually([&] { return TrainPods("{.metadata.annotations.rota\\.dev/checkpoint-requested-at}") == "  "; }, 30s))
      << "the request is taken off the pods: " << TrainPods("{.metadata.annotations}");
  EXPECT_EQ(Condition(train_wl_, "Evicted"), "");
  EXPECT_EQ(Suspended("train"), "false");
  EXPECT_EQ(TrainPods("{.status.phase}"), "Running Running ");
}

TEST_F(CheckpointTest, AKillOfRotaNeitherLosesNorRepeatsAnOpenRequest) {
  StartTraining("10m");
  if (HasFatalFailure()) return;
  SubmitUrgent();
  if (HasFatalFailure()) return;
  const std::string message = Condition(train_wl_, "CheckpointRequested", "message");
  KillAndRestartRota();
  // The new process finds the request: urgent still waits for it (same deadline), nothing is
  // asked again, and the answer evicts.
  ASSERT_TRUE(Eventually([&] { return Log().find("caches synced") != std::string::npos; }, 60s)) << Log();
  ASSERT_TRUE(Eventually(
      [&] {
        return Condition(UrgentWorkload(), "QuotaReserved", "message").rfind("waiting for 1 workload(s)", 0) == 0;
      },
      30s));
  EXPECT_EQ(Condition(train_wl_, "CheckpointRequested", "lastTransitionTime"), requested_at_);
  EXPECT_EQ(Condition(train_wl_, "CheckpointRequested", "message"), message);
  EXPECT_EQ(Suspended("train"), "false");
  Answer(requested_at_);
  if (HasFatalFailure()) return;
  ASSERT_TRUE(Eventually([&] { return Suspended("urgent") == "false"; }, 60s)) << Log();
  EXPECT_EQ(Condition(train_wl_, "CheckpointRequested", "reason"), "Checkpointed");
  const std::string asked = kubectl().JsonPath(
      {"events", "--field-selector", "involvedObject.name=" + train_wl_ + ",reason=CheckpointRequested"},
      "{range .items[*]}{.count}{\" \"}{end}", ns());
  EXPECT_EQ(asked, "1 ") << "asked once, by the first process";
}

// The annotations of a pod as the kubelet lays out a downward API volume: the file in a
// timestamped directory, reached through the "..data" symlink, replaced by swapping the link.
void WriteDownwardApiAnnotations(const std::filesystem::path& volume, const std::string& lines) {
  namespace fs = std::filesystem;
  static int version = 0;
  const std::string dir = "..2026_11_26_" + std::to_string(++version);
  fs::create_directories(volume / dir);
  std::ofstream(volume / dir / "annotations") << lines;
  fs::create_symlink(dir, volume / "..data_tmp");
  fs::rename(volume / "..data_tmp", volume / "..data");
  if (!fs::exists(fs::symlink_status(volume / "annotations")))
    fs::create_symlink("..data/annotations", volume / "annotations");
}

// A trainer that only writes checkpoint files and watches a request file: rota checkpoint-agent,
// reading a kubelet-style annotations file, passes the request on and reports the checkpoint on
// the pod through the apiserver, and rota evicts the victim.
TEST_F(CheckpointTest, TheAgentAnswersForATrainerThatOnlyWritesFiles) {
  namespace fs = std::filesystem;
  StartTraining("10m");
  if (HasFatalFailure()) return;
  const fs::path root = fs::temp_directory_path() / ("rota-agent-" + ns());
  const fs::path volume = root / "podinfo", checkpoints = root / "ckpt", request = root / "REQUEST";
  fs::create_directories(volume);
  fs::create_directories(checkpoints);
  WriteDownwardApiAnnotations(volume, "kubernetes.io/config.source=\"api\"\n");
  const std::string pod = kubectl().JsonPath({"pods", "-l", "job-name=train"}, "{.items[0].metadata.name}", ns());
  const fs::path agent_log = root / "agent.log";
  const pid_t agent = fork();
  if (agent == 0) {
    FILE* f = freopen(agent_log.c_str(), "w", stderr);
    (void)f;
    execl(ROTA_BINARY, ROTA_BINARY, "checkpoint-agent", "--annotations", (volume / "annotations").c_str(),
          "--checkpoint-dir", checkpoints.c_str(), "--request-file", request.c_str(), "--poll", "200ms", "--pod",
          pod.c_str(), "--namespace", ns().c_str(), "--kubeconfig", KubeconfigFromEnv().c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  auto agent_output = [&] {
    std::ifstream in(agent_log);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  SubmitUrgent();
  if (HasFatalFailure()) return;
  // The kubelet brings the pod's new annotation into the volume.
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"pod", pod}, "{.metadata.annotations.rota\\.dev/checkpoint-requested-at}", ns()) ==
               requested_at_;
      },
      30s));
  WriteDownwardApiAnnotations(
      volume, "kubernetes.io/config.source=\"api\"\nrota.dev/checkpoint-requested-at=\"" + requested_at_ + "\"\n");
  ASSERT_TRUE(Eventually([&] { return fs::exists(request); }, 30s)) << agent_output();
  EXPECT_EQ(Suspended("train"), "false") << "asked, not stopped";
  std::ofstream(checkpoints / "step-1200.pt") << "weights";
  ASSERT_TRUE(Eventually([&] { return Suspended("urgent") == "false"; }, 60s)) << agent_output() << Log();
  EXPECT_EQ(Condition(train_wl_, "CheckpointRequested", "reason"), "Checkpointed");
  // (The pod is gone with the suspension; rota copied the agent's report to the Workload.)
  EXPECT_NE(Status(train_wl_, "{.metadata.annotations.rota\\.dev/checkpointed-at}"), "");
  kill(agent, SIGTERM);
  int status = 0;
  waitpid(agent, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << agent_output();
  fs::remove_all(root);
}

}  // namespace
}  // namespace rota::testing
