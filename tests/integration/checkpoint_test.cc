// The checkpoint handshake on the real control plane (docs/checkpoint.md). The test plays the
// trainer: it reads rota.dev/checkpoint-requested-at on the pods and answers (or not) with
// rota.dev/checkpointed-at. Runs serially: a running controller acts on the whole cluster.

#include <signal.h>
#include <sys/wait.h>

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

}  // namespace
}  // namespace rota::testing
