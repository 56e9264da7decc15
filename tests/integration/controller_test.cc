// `rota run` on the real control plane: Workloads admitted by their ClusterQueue's quota, Kueue's
// conditions and queue status written back, quota released when a Workload finishes,
// preemption by priority, no status churn for workloads that stay pending, a clean stop.
// Runs serially: a running controller acts on the whole cluster.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "integration/controller_fixture.h"
#include "rota/apiclient/client.h"
#include "rota/apiclient/config.h"
#include "support/kube.h"

namespace rota::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// The passes rota has made, from its metrics (one admission attempt is observed per pass).
int64_t PassesMade(const std::string& metrics) {
  int64_t passes = 0;
  std::istringstream in(metrics);
  for (std::string l; std::getline(in, l);) {
    if (l.rfind("kueue_admission_attempt_duration_seconds_count{", 0) == 0)
      passes += std::stoll(l.substr(l.rfind(' ') + 1));
  }
  return passes;
}

TEST_F(ControllerTest, AdmitsByQuotaWritesStatusReleasesAndPreempts) {
  const std::string flavor = "a100-" + ns(), cq = "cq-" + ns();
  MakeGpuQueue(flavor, cq, 4, "{withinClusterQueue: LowerPriority}");
  if (HasFatalFailure()) return;
  for (const char* w : {"w1", "w2", "w3"}) {
    ASSERT_TRUE(kubectl().Apply(Workload(w, 2), ns()).ok());
    std::this_thread::sleep_for(1100ms);  // distinct creation times: w1 is the oldest
  }
  StartRota();

  // Two fit the 4 GPUs; the third waits and says why.
  ASSERT_TRUE(
      Eventually([&] { return Condition("w1", "Admitted") == "True" && Condition("w2", "Admitted") == "True"; }, 60s))
      << Log();
  EXPECT_EQ(Status("w1", "{.status.admission.clusterQueue}"), cq);
  EXPECT_EQ(Status("w1", "{.status.admission.podSetAssignments[0].flavors.nvidia\\.com/gpu}"), flavor);
  EXPECT_EQ(Status("w1", "{.status.admission.podSetAssignments[0].resourceUsage.nvidia\\.com/gpu}"), "2");
  EXPECT_EQ(Condition("w1", "QuotaReserved", "reason"), "QuotaReserved");
  ASSERT_TRUE(Eventually([&] { return Condition("w3", "QuotaReserved") == "False"; }, 30s));
  EXPECT_EQ(Condition("w3", "QuotaReserved", "reason"), "WaitingForQuota");
  EXPECT_EQ(Condition("w3", "QuotaReserved", "message"),
            "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor " +
                flavor + ", 2 more needed; no workload can be preempted to make room");
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"clusterqueue", cq},
                                  "{.status.admittedWorkloads}/{.status.pendingWorkloads}/"
                                  "{.status.flavorsUsage[0].resources[0].total}") == "2/1/4";
      },
      30s))
      << kubectl().JsonPath({"clusterqueue", cq}, "{.status}");
  EXPECT_EQ(kubectl().JsonPath({"clusterqueue", cq}, "{.status.conditions[?(@.type==\"Active\")].reason}"), "Ready");
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"localqueue", "gpu"}, "{.status.admittedWorkloads}/{.status.pendingWorkloads}",
                                  ns()) == "2/1";
      },
      30s));

  // Events a person reads with `kubectl describe workload`.
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl()
                   .JsonPath({"events", "--field-selector", "involvedObject.name=w1"},
                             "{range .items[*]}{.reason} {end}", ns())
                   .find("Admitted") != std::string::npos;
      },
      30s));
  EXPECT_NE(kubectl()
                .JsonPath({"events", "--field-selector", "involvedObject.name=w1"},
                          "{range .items[*]}{.reason}={.message};{end}", ns())
                .find("QuotaReserved=Quota reserved in ClusterQueue " + cq),
            std::string::npos);
  // Events of one pass are recorded concurrently: w3's may come after w1's.
  EXPECT_TRUE(Eventually(
      [&] {
        return kubectl()
                   .JsonPath({"events", "--field-selector", "involvedObject.name=w3"},
                             "{range .items[*]}{.type}/{.reason};{end}", ns())
                   .find("Warning/Pending") != std::string::npos;
      },
      30s));

  // Health, readiness and Kueue's metrics.
  EXPECT_EQ(Http(health_port_, "/healthz"), "ok\n\n200");  // body, then the status code
  EXPECT_EQ(Http(health_port_, "/readyz"), "ok\n\n200");
  const std::string metrics = Http(metrics_port_, "/metrics");
  for (const std::string& line : {
           "kueue_admitted_workloads_total{cluster_queue=\"" + cq + "\"} 2",
           "kueue_pending_workloads{cluster_queue=\"" + cq + "\",status=\"active\"} 1",
           "kueue_cluster_queue_resource_usage{cluster_queue=\"" + cq + "\",flavor=\"" + flavor +
               "\",resource=\"nvidia.com/gpu\"} 4",
           "kueue_cluster_queue_nominal_quota{cluster_queue=\"" + cq + "\",flavor=\"" + flavor +
               "\",resource=\"nvidia.com/gpu\"} 4",
           "kueue_cluster_queue_status{cluster_queue=\"" + cq + "\",status=\"active\"} 1",
           std::string("# TYPE kueue_admission_wait_time_seconds histogram"),
           // A few workloads are written at once: the apiserver is not behind on admissions.
           std::string("\nrota_apiserver_behind 0\n"),  // (the sample, not its HELP line)
       }) {
    std::string related;  // the lines of the same metric, to show what was there instead
    std::istringstream in(metrics);
    for (std::string l; std::getline(in, l);)
      if (l.rfind(line.substr(0, line.find('{')), 0) == 0) related += l + "\n";
    EXPECT_NE(metrics.find(line), std::string::npos) << line << "\nnot in:\n" << related;
  }

  // A pending workload's status is not rewritten while nothing changes.
  const std::string rv = Status("w3", "{.metadata.resourceVersion}");
  const int64_t passes = PassesMade(Http(metrics_port_, "/metrics"));
  ASSERT_TRUE(Eventually([&] { return PassesMade(Http(metrics_port_, "/metrics")) >= passes + 2; }, 30s)) << Log();
  EXPECT_EQ(Status("w3", "{.metadata.resourceVersion}"), rv) << "status churn on a pending workload";

  // w1 finishes (someone else marks it, as a job controller would): its quota goes to w3.
  CommandResult finished = kubectl()(
      {"patch", "workload", "w1", "-n", ns(), "--subresource=status", "--type=merge", "-p",
       R"({"status":{"conditions":[)" +
           std::string(
               R"({"type":"QuotaReserved","status":"True","reason":"QuotaReserved","message":"kept","lastTransitionTime":"2026-11-22T00:00:00Z"},)") +
           R"({"type":"Finished","status":"True","reason":"Succeeded","message":"done","lastTransitionTime":"2026-11-22T00:00:00Z"}]}})"});
  ASSERT_TRUE(finished.ok()) << finished.err;
  ASSERT_TRUE(Eventually([&] { return Condition("w3", "Admitted") == "True"; }, 60s)) << Log();
  // The queue's gauges follow its counts (its spec unchanged): nothing waits, two are admitted.
  for (const std::string& line : {"kueue_pending_workloads{cluster_queue=\"" + cq + "\",status=\"active\"} 0",
                                  "kueue_admitted_active_workloads{cluster_queue=\"" + cq + "\"} 2"}) {
    EXPECT_TRUE(Eventually([&] { return Http(metrics_port_, "/metrics").find(line) != std::string::npos; }, 30s))
        << line;
  }

  // A higher-priority workload needing all 4 GPUs preempts the two running ones.
  ASSERT_TRUE(kubectl().Apply(Workload("urgent", 4, 100), ns()).ok());
  ASSERT_TRUE(Eventually([&] { return Condition("urgent", "Admitted") == "True"; }, 60s)) << Log();
  for (const char* victim : {"w2", "w3"}) {
    EXPECT_EQ(Condition(victim, "Evicted"), "True") << victim;
    EXPECT_EQ(Condition(victim, "Evicted", "reason"), "Preempted") << victim;
    EXPECT_EQ(Condition(victim, "Preempted", "reason"), "InClusterQueue") << victim;
    EXPECT_EQ(Condition(victim, "QuotaReserved"), "False") << victim;
    EXPECT_EQ(Status(victim, "{.status.admission}"), "") << victim;
  }
  EXPECT_NE(Condition("w2", "Preempted", "message").find("Preempted to accommodate workload " + ns() + "/urgent"),
            std::string::npos);

  // stopPolicy Hold keeps running work; HoldAndDrain evicts it.
  ASSERT_TRUE(kubectl()({"patch", "clusterqueue", cq, "--type=merge", "-p", R"({"spec":{"stopPolicy":"Hold"}})"}).ok());
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"clusterqueue", cq}, "{.status.conditions[?(@.type==\"Active\")].reason}") ==
               "Stopped";
      },
      30s));
  EXPECT_EQ(Condition("urgent", "Admitted"), "True");
  ASSERT_TRUE(
      kubectl()({"patch", "clusterqueue", cq, "--type=merge", "-p", R"({"spec":{"stopPolicy":"HoldAndDrain"}})"}).ok());
  ASSERT_TRUE(Eventually([&] { return Condition("urgent", "Evicted", "reason") == "ClusterQueueStopped"; }, 30s))
      << Log();
  EXPECT_EQ(Status("urgent", "{.status.admission}"), "");
  EXPECT_EQ(Condition("w2", "QuotaReserved", "reason"), "Stopped");

  EXPECT_EQ(StopRota(), 0) << Log();
  EXPECT_NE(Log().find("stopped after"), std::string::npos) << Log();
  // Where its CPU went, by thread: the status writers and the Workload watch among them (the
  // watch threads have ended by then and are still counted).
  const std::string log = Log();
  const size_t cpu = log.find("CPU by thread: ");
  ASSERT_NE(cpu, std::string::npos) << log;
  const std::string by_thread = log.substr(cpu, log.find('\n', cpu) - cpu);
  EXPECT_NE(by_thread.find("status-writer "), std::string::npos) << by_thread;
  EXPECT_NE(by_thread.find("watch/workloads "), std::string::npos) << by_thread;
  EXPECT_NE(by_thread.find(" s"), std::string::npos) << by_thread;
  DeleteAll({"clusterqueue/" + cq, "resourceflavor/" + flavor});
}

// A cluster where no workload waits for quota, whose running workloads finish one after another
// (the end of a busy day, or of Kueue's benchmark), has nothing for the scheduler to decide:
// their passes come at most about once a second instead of one per finish, and the queue still
// shows the drained state. A workload that can never fit (more GPUs than the queue has) does not
// wait for quota. Work that arrives meanwhile is admitted as ever.
TEST_F(ControllerTest, WhileNothingWaitsFinishingWorkloadsDoNotMakeAPassEach) {
  const std::string flavor = "a100-" + ns(), cq = "cq-" + ns();
  // Passes are counted cluster-wide: the cascade of an earlier test's namespace deletion would
  // count as well.
  WaitForEarlierTestNamespacesGone(120s);
  MakeGpuQueue(flavor, cq, 10);
  if (HasFatalFailure()) return;
  StartRota();
  constexpr int kWorkloads = 10;
  for (int i = 0; i < kWorkloads; ++i) ASSERT_TRUE(kubectl().Apply(Workload("w" + std::to_string(i), 1), ns()).ok());
  ASSERT_TRUE(kubectl().Apply(Workload("huge", 100), ns()).ok());
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"clusterqueue", cq}, "{.status.admittedWorkloads}/{.status.pendingWorkloads}") ==
               std::to_string(kWorkloads) + "/1";
      },
      60s))
      << Log();
  ASSERT_TRUE(Eventually([&] { return Condition("huge", "QuotaReserved", "reason") == "ExceedsMaxQuota"; }, 30s))
      << Status("huge", "{.status}");
  std::this_thread::sleep_for(2s);  // the admissions' own passes and echoes are over

  auto cfg = apiclient::LoadKubeconfig(KubeconfigFromEnv());
  ASSERT_TRUE(cfg.ok());
  auto client = apiclient::Client::Create(*cfg);
  ASSERT_TRUE(client.ok());
  const int64_t before = PassesMade(Http(metrics_port_, "/metrics"));
  const auto start = std::chrono::steady_clock::now();
  // One finishes every 200 ms, as a job controller would mark them.
  apiclient::PatchOptions status;
  status.subresource = "status";
  const apiclient::Json finished = apiclient::Json::parse(
      R"({"status":{"conditions":[{"type":"Finished","status":"True","reason":"Succeeded","message":"done","lastTransitionTime":"2026-11-22T00:00:00Z"}]}})");
  for (int i = 0; i < kWorkloads; ++i) {
    auto r = (*client)->Patch(apiclient::resources::kWorkloads, ns(), "w" + std::to_string(i),
                              apiclient::PatchType::kMerge, finished, status);
    ASSERT_TRUE(r.ok()) << r.error().ToString();
    std::this_thread::sleep_for(200ms);
  }
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"clusterqueue", cq}, "{.status.reservingWorkloads}/{.status.pendingWorkloads}") ==
               "0/1";
      },
      30s))
      << kubectl().JsonPath({"clusterqueue", cq}, "{.status}");
  std::this_thread::sleep_for(2s);  // and whatever passes the last status brings
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int64_t passes = PassesMade(Http(metrics_port_, "/metrics")) - before;
  // About one a second (at most one more for the drained queue's status coming back), not a
  // pass per finish and another per queue status.
  EXPECT_LE(static_cast<double>(passes), seconds + 2) << passes << " passes in " << seconds << " s\n" << Log();

  // A new workload is still admitted.
  ASSERT_TRUE(kubectl().Apply(Workload("late", 1), ns()).ok());
  ASSERT_TRUE(Eventually([&] { return Condition("late", "Admitted") == "True"; }, 30s)) << Log();
  DeleteAll({"clusterqueue/" + cq, "resourceflavor/" + flavor});
}

// A preempted Job's Workload keeps its quota while its pods terminate (here held terminating by
// kwok, as a slow checkpoint would hold them); the preemptor waits and says so, and is admitted
// once the pods are gone and the victim has given the quota back.
TEST_F(ControllerTest, APreemptedJobKeepsItsQuotaUntilItsPodsAreGone) {
  const std::string flavor = "a100-" + ns(), cq = "cq-" + ns(), low = "low-" + ns(), high = "high-" + ns();
  MakeGpuQueue(flavor, cq, 4, "{withinClusterQueue: LowerPriority}");
  if (HasFatalFailure()) return;
  MakePriorityClasses({{low, 10}, {high, 100}});
  if (HasFatalFailure()) return;
  StartRota();
  const std::string train = HoldingTermination(JobManifest(
      "train", "    kueue.x-k8s.io/queue-name: gpu\n    kueue.x-k8s.io/priority-class: " + low + "\n", 2, 2, ""));
  ASSERT_TRUE(kubectl().Apply(train, ns()).ok());
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"pods", "-l", "job-name=train"}, "{range .items[*]}{.status.phase}{\" \"}{end}",
                                  ns()) == "Running Running ";
      },
      60s))
      << Log();
  const std::string train_wl = kubectl().JsonPath({"workloads"}, "{.items[0].metadata.name}", ns());
  ASSERT_TRUE(
      kubectl()
          .Apply(JobManifest("urgent",
                             "    kueue.x-k8s.io/queue-name: gpu\n    kueue.x-k8s.io/priority-class: " + high + "\n", 1,
                             4, "2s"),
                 ns())
          .ok());
  // The preemptor waits for the victim, which is evicted and suspended but still holds its quota
  // while its pods terminate.
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"workloads"}, "{.items[*].status.conditions[?(@.reason==\"Pending\")].message}",
                                  ns()) == "Pending the preemption of 1 workload(s)";
      },
      60s))
      << Log();
  EXPECT_EQ(Condition(train_wl, "Evicted"), "True");
  EXPECT_EQ(Condition(train_wl, "QuotaReserved"), "True");
  EXPECT_EQ(Status(train_wl, "{.status.admission.clusterQueue}"), cq);
  EXPECT_EQ(kubectl().JsonPath({"job", "train"}, "{.spec.suspend}", ns()), "true");
  EXPECT_EQ(kubectl().JsonPath({"job", "urgent"}, "{.spec.suspend}", ns()), "true");
  const std::string pods = kubectl().JsonPath({"pods", "-l", "job-name=train"}, "{.items[*].metadata.name}", ns());
  EXPECT_NE(kubectl().JsonPath({"pods", "-l", "job-name=train"}, "{.items[0].metadata.deletionTimestamp}", ns()), "");

  // The pods finish terminating: the quota goes back, and to the preemptor.
  std::istringstream names(pods);
  for (std::string pod; names >> pod;) kubectl()({"annotate", "pod", pod, "rota.test/hold-termination-", "-n", ns()});
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"job", "urgent"}, "{.spec.suspend}", ns()) == "false";
      },
      60s))
      << Log();
  EXPECT_EQ(Condition(train_wl, "QuotaReserved", "reason"), "Pending");
  EXPECT_EQ(Condition(train_wl, "Requeued", "reason"), "Preempted");
  EXPECT_EQ(Status(train_wl, "{.status.admission}"), "");
  DeleteAll({"clusterqueue/" + cq, "resourceflavor/" + flavor, "workloadpriorityclass/" + low,
             "workloadpriorityclass/" + high});
}

// stopPolicy HoldAndDrain stops a running Job as a preemption does: its Workload is evicted but
// keeps its quota until the Job is suspended and its pods are gone.
TEST_F(ControllerTest, ADrainedJobKeepsItsQuotaUntilItsPodsAreGone) {
  const std::string flavor = "a100-" + ns(), cq = "cq-" + ns();
  MakeGpuQueue(flavor, cq, 4);
  if (HasFatalFailure()) return;
  StartRota();
  const std::string train = HoldingTermination(JobManifest("train", "    kueue.x-k8s.io/queue-name: gpu\n", 2, 2, ""));
  ASSERT_TRUE(kubectl().Apply(train, ns()).ok());
  auto phases = [&] {
    return kubectl().JsonPath({"pods", "-l", "job-name=train"}, "{range .items[*]}{.status.phase}{\" \"}{end}", ns());
  };
  ASSERT_TRUE(Eventually([&] { return phases() == "Running Running "; }, 60s)) << Log();
  const std::string wl = kubectl().JsonPath({"workloads"}, "{.items[0].metadata.name}", ns());
  const std::string pods = kubectl().JsonPath({"pods", "-l", "job-name=train"}, "{.items[*].metadata.name}", ns());

  ASSERT_TRUE(
      kubectl()({"patch", "clusterqueue", cq, "--type=merge", "-p", R"({"spec":{"stopPolicy":"HoldAndDrain"}})"}).ok());
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"job", "train"}, "{.spec.suspend}", ns()) == "true";
      },
      60s))
      << Log();
  EXPECT_EQ(Condition(wl, "Evicted", "reason"), "ClusterQueueStopped");
  EXPECT_EQ(Condition(wl, "QuotaReserved"), "True") << "released while its pods still run";
  EXPECT_EQ(Status(wl, "{.status.admission.clusterQueue}"), cq);

  std::istringstream names(pods);
  for (std::string pod; names >> pod;) kubectl()({"annotate", "pod", pod, "rota.test/hold-termination-", "-n", ns()});
  ASSERT_TRUE(Eventually([&] { return Condition(wl, "QuotaReserved") == "False"; }, 60s)) << Log();
  EXPECT_EQ(Status(wl, "{.status.admission}"), "");
  EXPECT_EQ(phases(), "");
  DeleteAll({"clusterqueue/" + cq, "resourceflavor/" + flavor});
}

// A deep queue does not cost a status write per waiting workload: the head of the ClusterQueue
// says why it waits, the ones behind it say nothing until their turn comes.
TEST_F(ControllerTest, OnlyTheHeadOfAQueueWaitingForQuotaSaysWhy) {
  const std::string flavor = "a100-" + ns(), cq = "cq-" + ns();
  MakeGpuQueue(flavor, cq, 2);
  if (HasFatalFailure()) return;
  for (const char* w : {"w1", "w2", "w3", "w4"}) {
    ASSERT_TRUE(kubectl().Apply(Workload(w, 2), ns()).ok());
    std::this_thread::sleep_for(1100ms);  // distinct creation times: queue order w1, w2, w3, w4
  }
  StartRota();
  ASSERT_TRUE(Eventually([&] { return Condition("w1", "Admitted") == "True"; }, 60s)) << Log();
  ASSERT_TRUE(Eventually([&] { return Condition("w2", "QuotaReserved", "reason") == "WaitingForQuota"; }, 30s))
      << Log();
  std::this_thread::sleep_for(3s);  // longer than rota waits before a head's first reason
  EXPECT_EQ(Status("w3", "{.status.conditions}"), "");
  EXPECT_EQ(Status("w4", "{.status.conditions}"), "");
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"clusterqueue", cq}, "{.status.admittedWorkloads}/{.status.pendingWorkloads}") ==
               "1/3";
      },
      30s))
      << kubectl().JsonPath({"clusterqueue", cq}, "{.status}");

  // w1 finishes: w2 is admitted and w3, the new head, says why it waits.
  CommandResult finished = kubectl()(
      {"patch", "workload", "w1", "-n", ns(), "--subresource=status", "--type=merge", "-p",
       R"({"status":{"conditions":[{"type":"Finished","status":"True","reason":"Succeeded","message":"done","lastTransitionTime":"2026-11-22T00:00:00Z"}]}})"});
  ASSERT_TRUE(finished.ok()) << finished.err;
  ASSERT_TRUE(Eventually([&] { return Condition("w2", "Admitted") == "True"; }, 60s)) << Log();
  ASSERT_TRUE(Eventually([&] { return Condition("w3", "QuotaReserved", "reason") == "WaitingForQuota"; }, 30s))
      << Log();
  EXPECT_EQ(Status("w4", "{.status.conditions}"), "");
  // Stopping, rota tells how many pending reasons it queued: each head's, once.
  ASSERT_EQ(StopRota(), 0);
  EXPECT_NE(Log().find("pending reasons: 2 first, 0 new reasons, 0 new messages"), std::string::npos) << Log();
}

TEST_F(ControllerTest, JobsRunWhenAdmittedAndAreSuspendedWhenPreempted) {
  const std::string flavor = "a100-" + ns(), cq = "cq-" + ns(), low = "low-" + ns(), high = "high-" + ns();
  MakeGpuQueue(flavor, cq, 4, "{withinClusterQueue: LowerPriority}",
               "nodeLabels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}");
  if (HasFatalFailure()) return;
  MakePriorityClasses({{low, 10}, {high, 100}});
  if (HasFatalFailure()) return;
  StartRota();

  // A checkpointable training Job (runs until stopped), queued as a data scientist would.
  ASSERT_TRUE(
      kubectl()
          .Apply(JobManifest("train",
                             "    kueue.x-k8s.io/queue-name: gpu\n    kueue.x-k8s.io/priority-class: " + low + "\n", 2,
                             2, ""),
                 ns())
          .ok());
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"job", "train"}, "{.spec.suspend}", ns()) == "false";
      },
      60s))
      << Log();
  EXPECT_EQ(kubectl().JsonPath({"job", "train"}, "{.spec.template.spec.nodeSelector.nvidia\\.com/gpu\\.product}", ns()),
            "NVIDIA-A100-SXM4-80GB");
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"pods", "-l", "job-name=train"}, "{range .items[*]}{.status.phase}{\" \"}{end}",
                                  ns()) == "Running Running ";
      },
      60s));
  const std::string train_wl = kubectl().JsonPath({"workloads"}, "{.items[0].metadata.name}", ns());
  EXPECT_EQ(train_wl.rfind("job-train-", 0), 0u) << train_wl;
  EXPECT_EQ(kubectl().JsonPath({"workload", train_wl}, "{.metadata.ownerReferences[0].kind}/{.spec.priority}", ns()),
            "Job/10");

  // An urgent Job needs all 4 GPUs: the training Job is suspended (its pods get their grace
  // period), its template restored, and it resumes when the urgent one has finished.
  ASSERT_TRUE(
      kubectl()
          .Apply(JobManifest("urgent",
                             "    kueue.x-k8s.io/queue-name: gpu\n    kueue.x-k8s.io/priority-class: " + high + "\n", 1,
                             4, "3s"),
                 ns())
          .ok());
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"job", "train"}, "{.spec.suspend}", ns()) == "true";
      },
      60s))
      << Log();
  EXPECT_EQ(kubectl().JsonPath({"workload", train_wl}, "{.status.conditions[?(@.type==\"Preempted\")].reason}", ns()),
            "InClusterQueue");
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"job", "train"}, "{.spec.template.spec.nodeSelector}", ns()).empty();
      },
      30s))
      << "the original template was not restored";
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"job", "urgent"}, "{.status.conditions[?(@.type==\"Complete\")].status}", ns()) ==
               "True";
      },
      90s))
      << Log();
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"job", "train"}, "{.spec.suspend}", ns()) == "false";
      },
      60s))
      << "the preempted Job was not resumed\n"
      << Log();

  EXPECT_NE(kubectl()
                .JsonPath({"events", "--field-selector", "involvedObject.name=train,involvedObject.kind=Job"},
                          "{range .items[*]}{.reason} {end}", ns())
                .find("Stopped"),
            std::string::npos);

  // A Job that names no queue is left alone: once rota has made the Workload of a queued Job
  // created after it, the unqueued one still runs and has none.
  ASSERT_TRUE(kubectl().Apply(JobManifest("unqueued", "    app: other\n", 1, 1, "", /*suspend=*/false), ns()).ok());
  ASSERT_TRUE(kubectl().Apply(JobManifest("after", "    kueue.x-k8s.io/queue-name: gpu\n", 1, 1, "1s"), ns()).ok());
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"workloads"}, "{.items[*].metadata.name}", ns()).find("job-after-") !=
               std::string::npos;
      },
      60s))
      << Log();
  EXPECT_EQ(kubectl().JsonPath({"job", "unqueued"}, "{.spec.suspend}", ns()), "false");
  EXPECT_EQ(kubectl().JsonPath({"workloads"}, "{.items[*].metadata.name}", ns()).find("job-unqueued-"),
            std::string::npos);

  // A LocalQueue named "default" takes the namespace's unlabelled Jobs.
  ASSERT_TRUE(kubectl()
                  .Apply("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: default\n"
                         "spec:\n  clusterQueue: " +
                             cq + "\n",
                         ns())
                  .ok());
  ASSERT_TRUE(kubectl().Apply(JobManifest("defaulted", "    app: other\n", 1, 1, "2s"), ns()).ok());
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"workloads"}, "{.items[*].spec.queueName}", ns()).find("default") !=
               std::string::npos;
      },
      60s))
      << Log();

  // Deleting a Job deletes its Workload (owner reference; the garbage collector).
  ASSERT_TRUE(kubectl()({"delete", "job", "train", "-n", ns(), "--cascade=background"}).ok());
  EXPECT_TRUE(Eventually([&] { return !kubectl()({"get", "workload", train_wl, "-n", ns()}).ok(); }, 60s));
  EXPECT_EQ(StopRota(), 0) << Log();
  DeleteAll({"clusterqueue/" + cq, "resourceflavor/" + flavor, "workloadpriorityclass/" + low,
             "workloadpriorityclass/" + high});
}

TEST_F(ControllerTest, TeamsBorrowIdleGpusAndTakeThemBackAndMigJobsLandOnMigNodes) {
  const std::string a100 = "a100-" + ns(), mig = "mig-" + ns(), cohort = "co-" + ns();
  const std::string team_a = "a-" + ns(), team_b = "b-" + ns(), nb = "nb-" + ns();
  ASSERT_TRUE(kubectl()
                  .Apply("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: " + a100 +
                         "\nspec:\n  nodeLabels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB, "
                         "nvidia.com/mig.config: all-disabled}\n")
                  .ok());
  ASSERT_TRUE(kubectl()
                  .Apply("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: " + mig +
                         "\nspec:\n  nodeLabels: {nvidia.com/mig.strategy: mixed}\n")
                  .ok());
  auto queue = [&](const std::string& name, const std::string& extra, const std::string& quota) {
    return "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: " + name +
           "\nspec:\n  cohortName: " + cohort + "\n  namespaceSelector: {}\n" + extra +
           "  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n"
           "    flavors:\n    - name: " +
           a100 + "\n      resources: [{name: nvidia.com/gpu, " + quota + "}]\n";
  };
  ASSERT_TRUE(kubectl().Apply(queue(team_a, "  preemption: {reclaimWithinCohort: Any}\n", "nominalQuota: 4")).ok());
  ASSERT_TRUE(kubectl().Apply(queue(team_b, "", "nominalQuota: 4, borrowingLimit: 4")).ok());
  ASSERT_TRUE(
      kubectl()
          .Apply("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: " + nb +
                 "\nspec:\n  namespaceSelector: {}\n"
                 "  resourceGroups:\n  - coveredResources: [nvidia.com/mig-1g.10gb]\n    flavors:\n    - name: " +
                 mig + "\n      resources: [{name: nvidia.com/mig-1g.10gb, nominalQuota: 8}]\n")
          .ok());
  for (auto [lq, cq] : {std::pair{"a", team_a}, std::pair{"b", team_b}, std::pair{"notebooks", nb}}) {
    ASSERT_TRUE(kubectl()
                    .Apply(std::string("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: ") +
                               lq + "\nspec:\n  clusterQueue: " + cq + "\n",
                           ns())
                    .ok());
  }
  StartRota();

  // Team A is idle: team B runs two 4-GPU sweeps, the second on A's GPUs.
  ASSERT_TRUE(kubectl().Apply(JobManifest("sweep-1", "    kueue.x-k8s.io/queue-name: b\n", 1, 4, ""), ns()).ok());
  std::this_thread::sleep_for(1100ms);
  ASSERT_TRUE(kubectl().Apply(JobManifest("sweep-2", "    kueue.x-k8s.io/queue-name: b\n", 1, 4, ""), ns()).ok());
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"jobs", "sweep-1", "sweep-2"}, "{range .items[*]}{.spec.suspend} {end}", ns()) ==
               "false false ";
      },
      60s))
      << Log();
  // Queue status follows within seconds (it is written at most every few seconds while busy).
  EXPECT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"clusterqueue", team_b}, "{.status.flavorsUsage[0].resources[0].borrowed}") == "4";
      },
      15s))
      << kubectl().JsonPath({"clusterqueue", team_b}, "{.status.flavorsUsage}");

  // Team A submits: its guarantee comes back; the borrowing sweep is suspended, A's Job runs.
  ASSERT_TRUE(kubectl().Apply(JobManifest("train-a", "    kueue.x-k8s.io/queue-name: a\n", 1, 4, ""), ns()).ok());
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"job", "train-a"}, "{.spec.suspend}", ns()) == "false";
      },
      60s))
      << Log();
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"jobs", "sweep-1", "sweep-2"}, "{range .items[*]}{.spec.suspend} {end}", ns()) ==
               "false true ";
      },
      60s))
      << Log();

  // A notebook asking for a MIG slice runs on a MIG node, through the flavor's node labels.
  std::string notebook = JobManifest("notebook", "    kueue.x-k8s.io/queue-name: notebooks\n", 1, 1, "");
  notebook.replace(notebook.find("nvidia.com/gpu:"), std::string("nvidia.com/gpu:").size(), "nvidia.com/mig-1g.10gb:");
  ASSERT_TRUE(kubectl().Apply(notebook, ns()).ok());
  ASSERT_TRUE(Eventually(
      [&] {
        CommandResult r = kubectl()(
            {"get", "pods", "-n", ns(), "-l", "job-name=notebook", "-o", "jsonpath={.items[*].spec.nodeName}"});
        return r.ok() && !r.out.empty();
      },
      60s))
      << Log();
  const std::string node = kubectl().JsonPath({"pods", "-l", "job-name=notebook"}, "{.items[0].spec.nodeName}", ns());
  EXPECT_TRUE(node == "gpu-mig-1g-1" || node == "gpu-mig-mixed-1") << node;
  EXPECT_EQ(
      kubectl().JsonPath({"job", "notebook"}, "{.spec.template.spec.nodeSelector.nvidia\\.com/mig\\.strategy}", ns()),
      "mixed");
  EXPECT_EQ(StopRota(), 0);
  DeleteAll({"clusterqueue/" + team_a, "clusterqueue/" + team_b, "clusterqueue/" + nb, "resourceflavor/" + a100,
             "resourceflavor/" + mig});
}

TEST_F(ControllerTest, Kill9DuringAStreamOf200JobsNeverOverCommitsAndAdmitsEachOnce) {
  const std::string flavor = "a100-" + ns(), cq = "cq-" + ns();
  MakeGpuQueue(flavor, cq, 8);
  if (HasFatalFailure()) return;
  std::string stream;
  for (int i = 0; i < 200; ++i)
    stream += "---\n" + JobManifest("job-" + std::to_string(i), "    kueue.x-k8s.io/queue-name: gpu\n", 1, 1, "");
  ASSERT_TRUE(kubectl().Apply(stream, ns()).ok());

  // Watch the apiserver the whole time: the GPUs held by admitted Workloads never exceed 8.
  std::atomic<bool> watching{true};
  std::atomic<int> worst{0};
  std::thread checker([&] {
    while (watching) {
      std::string usage = kubectl().JsonPath(
          {"workloads"},
          "{range .items[*]}{.status.admission.podSetAssignments[0].resourceUsage.nvidia\\.com/gpu} {end}", ns());
      std::istringstream in(usage);
      int total = 0, v;
      while (in >> v) total += v;
      worst = std::max(worst.load(), total);
      std::this_thread::sleep_for(100ms);
    }
  });
  // Joined on every way out, so a failed ASSERT reports the failure instead of aborting the binary.
  struct Joiner {
    std::atomic<bool>& watching;
    std::thread& t;
    ~Joiner() {
      watching = false;
      if (t.joinable()) t.join();
    }
  } joiner{watching, checker};
  StartRota();
  ASSERT_TRUE(Eventually([&] { return Log().find("admitted") != std::string::npos; }, 60s)) << Log();
  kill(pid_, SIGKILL);  // in the middle of it
  waitpid(pid_, nullptr, 0);
  pid_ = 0;
  StartRota();
  auto admitted_count = [&] {
    std::string s = kubectl().JsonPath(
        {"workloads"}, "{range .items[*]}{.status.conditions[?(@.type==\"Admitted\")].status} {end}", ns());
    int n = 0;
    for (size_t p = 0; (p = s.find("True", p)) != std::string::npos; ++p) ++n;
    return n;
  };
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"clusterqueue", cq}, "{.status.admittedWorkloads}/{.status.pendingWorkloads}") ==
               "8/192";
      },
      120s))
      << kubectl().JsonPath({"clusterqueue", cq}, "{.status}");
  watching = false;
  checker.join();
  EXPECT_LE(worst.load(), 8) << "a queue exceeded its quota";
  EXPECT_EQ(admitted_count(), 8);
  // One Workload per Job, and exactly the admitted Jobs run.
  EXPECT_EQ(kubectl().JsonPath({"workloads"}, "{.items[*].metadata.name}", ns()).size() > 0, true);
  std::string names =
      kubectl().JsonPath({"workloads"}, "{range .items[*]}{.metadata.ownerReferences[0].name}{\"\\n\"}{end}", ns());
  std::set<std::string> owners;
  int workloads = 0;
  std::istringstream in(names);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    ++workloads;
    owners.insert(line);
  }
  EXPECT_EQ(workloads, 200);
  EXPECT_EQ(owners.size(), 200u);
  ASSERT_TRUE(Eventually(
      [&] {
        std::string s = kubectl().JsonPath({"jobs"}, "{range .items[*]}{.spec.suspend} {end}", ns());
        int running = 0;
        for (size_t p = 0; (p = s.find("false", p)) != std::string::npos; ++p) ++running;
        return running == 8;
      },
      60s));
  EXPECT_EQ(StopRota(), 0);
  DeleteAll({"clusterqueue/" + cq, "resourceflavor/" + flavor});
}

TEST_F(ControllerTest, CriticalJobsPreemptBestEffortAndAreNeverPreempted) {
  const std::string flavor = "a100-" + ns(), cq = "cq-" + ns();
  const std::string best = "be-" + ns(), critical = "crit-" + ns(), urgent = "urg-" + ns();
  MakeGpuQueue(flavor, cq, 4, "{withinClusterQueue: LowerPriority}");
  if (HasFatalFailure()) return;
  ASSERT_TRUE(kubectl()
                  .Apply("apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata:\n  name: " + best +
                         "\nvalue: 100\n")
                  .ok());
  ASSERT_TRUE(kubectl()
                  .Apply("apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata:\n  name: " +
                         critical + "\n  annotations: {rota.dev/preemptible: \"false\"}\nvalue: 1000\n")
                  .ok());
  ASSERT_TRUE(kubectl()
                  .Apply("apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata:\n  name: " +
                         urgent + "\nvalue: 5000\n")
                  .ok());
  StartRota();
  auto queued = [](const std::string& cls) {
    return "    kueue.x-k8s.io/queue-name: gpu\n    kueue.x-k8s.io/priority-class: " + cls + "\n";
  };
  ASSERT_TRUE(kubectl().Apply(JobManifest("experiment", queued(best), 1, 4, ""), ns()).ok());
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"job", "experiment"}, "{.spec.suspend}", ns()) == "false";
      },
      60s))
      << Log();
  // Critical inference preempts the best-effort experiment...
  ASSERT_TRUE(kubectl().Apply(JobManifest("serve", queued(critical), 1, 4, ""), ns()).ok());
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"job", "serve"}, "{.spec.suspend}", ns()) == "false";
      },
      60s))
      << Log();
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"job", "experiment"}, "{.spec.suspend}", ns()) == "true";
      },
      60s));
  // ...and nothing preempts it, not even a higher priority.
  // (Its pending reason shows the pass that chose not to preempt.)
  ASSERT_TRUE(kubectl().Apply(JobManifest("rush", queued(urgent), 1, 4, ""), ns()).ok());
  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"workloads"},
                                  "{.items[?(@.metadata.ownerReferences[0].name==\"rush\")].status.conditions[?(@."
                                  "type==\"QuotaReserved\")].reason}",
                                  ns()) != "";
      },
      60s))
      << Log();
  EXPECT_EQ(kubectl().JsonPath({"job", "serve"}, "{.spec.suspend}", ns()), "false");
  EXPECT_EQ(kubectl().JsonPath({"job", "rush"}, "{.spec.suspend}", ns()), "true");
  EXPECT_EQ(StopRota(), 0);
  DeleteAll({"clusterqueue/" + cq, "resourceflavor/" + flavor, "workloadpriorityclass/" + best,
             "workloadpriorityclass/" + critical, "workloadpriorityclass/" + urgent});
}

TEST_F(ControllerTest, TwoReplicasOneLeadsTheOtherTakesOverWhenItDies) {
  const std::string extra =
      "leaderElection: {enabled: true, leaseName: rota-" + ns() + ", leaseNamespace: " + ns() + "}\n";
  StartRota(extra);
  const pid_t first = pid_;
  const fs::path first_log = log_;
  const int first_health = health_port_;
  log_ = fs::temp_directory_path() / ("rota-run-2-" + ns() + ".log");
  StartRota(extra);
  const pid_t second = pid_;
  auto leads = [](const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str().find("became the leader") != std::string::npos;
  };
  ASSERT_TRUE(Eventually([&] { return leads(first_log) || leads(log_); }, 30s));
  std::this_thread::sleep_for(3s);
  const bool first_leads = leads(first_log);
  EXPECT_NE(first_leads, leads(log_)) << "exactly one replica must lead";
  // The standby is ready (standing by), and says so on /readyz.
  EXPECT_EQ(Http(first_leads ? health_port_ : first_health, "/readyz"), "ok\n\n200");

  // kill -9 the leader: the standby takes over once the lease (15 s) has run out.
  const pid_t leader = first_leads ? first : second;
  kill(leader, SIGKILL);
  waitpid(leader, nullptr, 0);
  const fs::path standby_log = first_leads ? log_ : first_log;
  EXPECT_TRUE(Eventually([&] { return leads(standby_log); }, 40s)) << "the standby never took over";
  pid_ = first_leads ? second : first;
  EXPECT_EQ(StopRota(), 0);  // releases the lease and exits 0
  EXPECT_EQ(kubectl().JsonPath({"lease", "rota-" + ns()}, "{.spec.holderIdentity}", ns()), "");
}

TEST_F(ControllerTest, AGangThatCannotStartIsEvictedRequeuedWithBackoffThenDeactivated) {
  const std::string flavor = "a100-" + ns(), cq = "cq-" + ns();
  MakeGpuQueue(flavor, cq, 16);
  if (HasFatalFailure()) return;
  StartRota(
      "waitForPodsReady: {enable: true, timeout: 4s, backoffBaseSeconds: 1, backoffMaxSeconds: 10, backoffLimitCount: "
      "1}\n");

  // A gang that fits: PodsReady once both pods run.
  ASSERT_TRUE(kubectl().Apply(JobManifest("fits", "    kueue.x-k8s.io/queue-name: gpu\n", 2, 1, ""), ns()).ok());
  // A gang that quota admits but no node can hold (5 GPUs per pod; nodes have 4): never ready.
  ASSERT_TRUE(kubectl().Apply(JobManifest("stuck", "    kueue.x-k8s.io/queue-name: gpu\n", 2, 5, ""), ns()).ok());
  auto workload_of = [&](const std::string& job) {
    CommandResult r = kubectl()({"get", "workloads", "-n", ns(), "-l",
                                 "kueue.x-k8s.io/job-uid=" + kubectl().JsonPath({"job", job}, "{.metadata.uid}", ns()),
                                 "-o", "jsonpath={.items[*].metadata.name}"});
    return r.ok() ? r.out : "";
  };
  ASSERT_TRUE(Eventually([&] { return !workload_of("fits").empty() && !workload_of("stuck").empty(); }, 30s));
  const std::string fits = workload_of("fits"), stuck = workload_of("stuck");
  ASSERT_TRUE(Eventually([&] { return Condition(fits, "PodsReady") == "True"; }, 60s)) << Log();

  // The stuck gang is evicted after the timeout, its Job suspended, and it is requeued with backoff.
  ASSERT_TRUE(Eventually([&] { return Status(stuck, "{.status.requeueState.count}") == "1"; }, 60s)) << Log();
  // Read after the fact: it may be admitted again already (1 s later), which keeps the cause as
  // "Previously: ...", until the next timeout (4 s later) replaces it.
  EXPECT_NE(Condition(stuck, "Evicted", "message").find("Exceeded the PodsReady timeout"), std::string::npos)
      << Condition(stuck, "Evicted", "reason");
  // Requeued after 1 s, admitted again, times out again: over the limit of 1, it is deactivated.
  ASSERT_TRUE(Eventually([&] { return Status(stuck, "{.spec.active}") == "false"; }, 60s)) << Log();
  EXPECT_EQ(Condition(stuck, "Evicted", "reason"), "DeactivatedDueToRequeuingLimitExceeded");
  ASSERT_TRUE(Eventually([&] { return kubectl().JsonPath({"job", "stuck"}, "{.spec.suspend}", ns()) == "true"; }, 30s));
  ASSERT_TRUE(Eventually([&] { return Condition(stuck, "QuotaReserved", "reason") == "Inactive"; }, 30s));
  EXPECT_EQ(Condition(fits, "PodsReady"), "True");
  EXPECT_EQ(StopRota(), 0) << Log();
  DeleteAll({"clusterqueue/" + cq, "resourceflavor/" + flavor});
}

// A gang evicted for the PodsReady timeout keeps its quota while a pod of it still runs: the
// release waits until its pods are gone, and the backoff then holds it back.
TEST_F(ControllerTest, AGangEvictedForPodsReadyKeepsItsQuotaUntilItsPodsAreGone) {
  const std::string flavor = "a100-" + ns(), cq = "cq-" + ns();
  MakeGpuQueue(flavor, cq, 16);
  if (HasFatalFailure()) return;
  StartRota("waitForPodsReady: {enable: true, timeout: 4s, backoffBaseSeconds: 600}\n");
  // Two pods of 3 GPUs on one 4-GPU node: one runs (and is held terminating), one never can.
  std::string half = HoldingTermination(JobManifest("half", "    kueue.x-k8s.io/queue-name: gpu\n", 2, 3, ""));
  half.replace(half.find("    spec:\n"), 10, "    spec:\n      nodeSelector: {kubernetes.io/hostname: gpu-a100-8}\n");
  ASSERT_TRUE(kubectl().Apply(half, ns()).ok());
  auto running = [&] {
    return kubectl().JsonPath({"pods", "-l", "job-name=half", "--field-selector=status.phase=Running"},
                              "{.items[*].metadata.name}", ns());
  };
  ASSERT_TRUE(Eventually([&] { return !running().empty(); }, 60s)) << Log();
  const std::string pod = running();
  const std::string wl = kubectl().JsonPath({"workloads"}, "{.items[0].metadata.name}", ns());

  ASSERT_TRUE(Eventually(
      [&] {
        return kubectl().JsonPath({"job", "half"}, "{.spec.suspend}", ns()) == "true";
      },
      60s))
      << Log();
  EXPECT_EQ(Condition(wl, "Evicted", "reason"), "PodsReadyTimeout");
  EXPECT_EQ(Condition(wl, "QuotaReserved"), "True") << "released while a pod still runs";
  EXPECT_EQ(Status(wl, "{.status.requeueState.count}"), "1");

  kubectl()({"annotate", "pod", pod, "rota.test/hold-termination-", "-n", ns()});
  ASSERT_TRUE(Eventually([&] { return Condition(wl, "QuotaReserved") == "False"; }, 60s)) << Log();
  EXPECT_EQ(Status(wl, "{.status.admission}"), "");
  EXPECT_EQ(Condition(wl, "Requeued"), "False");
  EXPECT_TRUE(Eventually([&] { return Condition(wl, "QuotaReserved", "reason") == "Backoff"; }, 30s))
      << "waits out the backoff: " << Condition(wl, "QuotaReserved", "reason");
  DeleteAll({"clusterqueue/" + cq, "resourceflavor/" + flavor});
}

// Admission webhooks through the real apiserver: rota serves them over HTTPS on 127.0.0.1 with a
// certificate from the local CA, registered by hack/webhooks.sh (config/local).
class WebhookTest : public ControllerTest {
 protected:
  void SetUp() override {
    ControllerTest::SetUp();
    if (HasFatalFailure()) return;
    // A copy of the local control plane's webhook certificate, so a test may rotate it.
    certs_ = fs::temp_directory_path() / ("rota-webhook-certs-" + ns());
    fs::create_directories(certs_);
    const fs::path pki = fs::path(ClusterDir()) / "pki";
    fs::copy_file(pki / "webhook" / "tls.crt", certs_ / "tls.crt", fs::copy_options::overwrite_existing);
    fs::copy_file(pki / "webhook" / "tls.key", certs_ / "tls.key", fs::copy_options::overwrite_existing);
    webhook_port_ = FreePort();
    StartRota("webhook: {bindAddress: \"127.0.0.1:" + std::to_string(webhook_port_) +
              "\", certFile: " + (certs_ / "tls.crt").string() + ", keyFile: " + (certs_ / "tls.key").string() + "}\n");
    ASSERT_TRUE(Eventually([&] { return Https("/healthz").find("200") != std::string::npos; }, 30s)) << Log();
    CommandResult reg = testing::Run(
        {(fs::path(ROTA_SOURCE_DIR) / "hack" / "webhooks.sh").string(), "register", std::to_string(webhook_port_)});
    ASSERT_TRUE(reg.ok()) << reg.err;
    registered_ = true;
  }
  void TearDown() override {
    if (registered_) testing::Run({(fs::path(ROTA_SOURCE_DIR) / "hack" / "webhooks.sh").string(), "unregister"});
    ControllerTest::TearDown();
    fs::remove_all(certs_);
  }
  static std::string ClusterDir() {
    const char* d = std::getenv("ROTA_CLUSTER_DIR");
    return d ? d : (fs::path(ROTA_SOURCE_DIR) / ".cluster").string();
  }
  // curl to the webhook port, trusting the local CA; the body, then the HTTP status on the last line.
  std::string Https(const std::string& path, const std::string& post_file = "") {
    std::vector<std::string> argv = {
        "curl", "-s", "--cacert", (fs::path(ClusterDir()) / "pki" / "ca.crt").string(), "-w", "\n%{http_code}"};
    if (!post_file.empty()) {
      argv.insert(argv.end(), {"-H", "Content-Type: application/json", "--data-binary", "@" + post_file});
    }
    argv.push_back("https://127.0.0.1:" + std::to_string(webhook_port_) + path);
    return testing::Run(argv).out;
  }
  std::string JobSuspend(const std::string& job) { return kubectl().JsonPath({"job", job}, "{.spec.suspend}", ns()); }

  fs::path certs_;
  int webhook_port_ = 0;
  bool registered_ = false;
};

TEST_F(WebhookTest, AJobWithAQueueComesBackSuspendedAndOneWithoutIsUntouched) {
  CommandResult queued =
      kubectl()({"create", "-n", ns(), "-f", "-"},
                JobManifest("queued", "    kueue.x-k8s.io/queue-name: nowhere\n", 1, 1, "", /*suspend=*/false));
  ASSERT_TRUE(queued.ok()) << queued.err << Log();
  EXPECT_EQ(JobSuspend("queued"), "true");
  CommandResult plain =
      kubectl()({"create", "-n", ns(), "-f", "-"}, JobManifest("plain", "    team: ml\n", 1, 0, "", false));
  ASSERT_TRUE(plain.ok()) << plain.err;
  EXPECT_EQ(JobSuspend("plain"), "false");
  // A LocalQueue named "default" queues the namespace's unlabelled Jobs.
  ASSERT_TRUE(kubectl()
                  .Apply("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: default\nspec:\n  "
                         "clusterQueue: none\n",
                         ns())
                  .ok());
  ASSERT_TRUE(Eventually(
      [&] {
        kubectl()({"delete", "job", "probe", "-n", ns(), "--ignore-not-found", "--wait=true"});
        return kubectl()({"create", "-n", ns(), "-f", "-"}, JobManifest("probe", "    team: ml\n", 1, 0, "", false))
                   .ok() &&
               JobSuspend("probe") == "true";
      },
      20s))
      << "the webhook did not see the default LocalQueue";
}

TEST_F(WebhookTest, EveryRuleRefusesTheBadObjectWithRotasMessage) {
  struct Case {
    std::string what;
    std::vector<std::string> argv;
    std::string input;
    std::string message;  // part of what kubectl prints
  };
  const std::string n = ns();
  ASSERT_TRUE(
      kubectl().Apply("apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata:\n  name: " + n + "-root\n").ok());
  ASSERT_TRUE(kubectl()
                  .Apply("apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata:\n  name: " + n +
                         "-leaf\nspec:\n  parentName: " + n + "-root\n")
                  .ok());
  // A Job rota admits (and so unsuspends): its queue label is then frozen.
  const std::string flavor = n + "-f", cq = n + "-cq";
  MakeGpuQueue(flavor, cq, 4);
  ASSERT_TRUE(kubectl()({"create", "-n", n, "-f", "-"},
                        JobManifest("running", "    kueue.x-k8s.io/queue-name: gpu\n", 1, 1, "", true))
                  .ok());
  ASSERT_TRUE(Eventually([&] { return JobSuspend("running") == "false"; }, 60s)) << Log();
  const std::vector<Case> cases = {
      {"Cohort cycle",
       {"patch", "cohort", n + "-root", "--type=merge", "-p", "{\"spec\":{\"parentName\":\"" + n + "-leaf\"}}"},
       "",
       "spec.parentName: \"" + n + "-leaf\" would make a cycle of cohorts (" + n + "-root -> " + n + "-leaf -> " + n +
           "-root)"},
      {"Job queue label while running",
       {"label", "job", "running", "-n", n, "--overwrite", "kueue.x-k8s.io/queue-name=b"},
       "",
       "metadata.labels[kueue.x-k8s.io/queue-name]: cannot change from \"gpu\" to \"b\" while the Job is admitted"},
      {"Job priority class",
       {"create", "-n", n, "-f", "-"},
       JobManifest("urgent", "    kueue.x-k8s.io/queue-name: a\n    kueue.x-k8s.io/priority-class: no-such-class\n", 1,
                   0, "", true),
       "WorkloadPriorityClass \"no-such-class\" does not exist"},
      {"Workload requests over limits",
       {"create", "-n", n, "-f", "-"},
       "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata:\n  name: greedy\nspec:\n  queueName: a\n  "
       "podSets:\n"
       "  - name: main\n    count: 1\n    template:\n      spec:\n        containers:\n        - name: c\n          "
       "image: i\n"
       "          resources: {requests: {cpu: \"4\"}, limits: {cpu: \"2\"}}\n",
       "requests[cpu]: 4 must be less than or equal to the limit 2"},
      {"ResourceFlavor label value",
       {"create", "-f", "-"},
       "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: " + n +
           "-bad\nspec:\n  nodeLabels: {zone: \"us east\"}\n",
       "spec.nodeLabels[zone]: \"us east\" is not a valid label value"},
  };
  for (const Case& c : cases) {
    CommandResult r = kubectl()(c.argv, c.input);
    EXPECT_FALSE(r.ok()) << c.what << " was accepted";
    EXPECT_NE(r.err.find("denied the request"), std::string::npos) << c.what << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.what << ": " << r.err;
  }
  // LocalQueue.spec.clusterQueue: the CRD's CEL rule answers before the webhook; either way refused.
  ASSERT_TRUE(
      kubectl()
          .Apply(
              "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: lq\nspec:\n  clusterQueue: a\n",
              n)
          .ok());
  CommandResult moved =
      kubectl()({"patch", "localqueue", "lq", "-n", n, "--type=merge", "-p", R"({"spec":{"clusterQueue":"b"}})"});
  EXPECT_FALSE(moved.ok());
  EXPECT_NE(moved.err.find("clusterQueue"), std::string::npos) << moved.err;
  EXPECT_NE(Log().find("denied"), std::string::npos) << "rota logs its denials";
  kubectl()({"delete", "jobs", "--all", "-n", n, "--wait=true"});
  DeleteAll({"cohort/" + n + "-leaf", "cohort/" + n + "-root", "clusterqueue/" + cq, "resourceflavor/" + flavor});
}

TEST_F(WebhookTest, ABadReviewIsA400AndANewCertificateIsServedAfterRotation) {
  const fs::path bad = certs_ / "bad.json";
  std::ofstream(bad) << "{\"apiVersion\": \"admission.k8s.io/v1\", \"kind\": \"AdmissionReview\", \"request\": 7}";
  std::string out = Https("/mutate-batch-v1-job", bad.string());
  EXPECT_NE(out.find("AdmissionReview.request: missing or not an object"), std::string::npos) << out;
  EXPECT_EQ(out.substr(out.rfind('\n') + 1), "400");
  const fs::path big = certs_ / "big.json";
  std::ofstream(big) << std::string(5 << 20, ' ');
  out = Https("/validate-batch-v1-job", big.string());
  EXPECT_EQ(out.substr(out.rfind('\n') + 1), "400") << out;
  EXPECT_NE(Log().find("bad AdmissionReview"), std::string::npos) << Log();
  EXPECT_EQ(Https("/healthz").substr(0, 2), "ok") << "still serving";

  // cert-manager style rotation: new files in place; new connections get the new certificate.
  auto serial = [&] {
    return testing::Run({"sh", "-c",
                         "openssl s_client -connect 127.0.0.1:" + std::to_string(webhook_port_) +
                             " </dev/null 2>/dev/null | openssl x509 -noout -serial"})
        .out;
  };
  const std::string before = serial();
  ASSERT_NE(before.find("serial="), std::string::npos) << before;
  const fs::path pki = fs::path(ClusterDir()) / "pki";
  CommandResult made = testing::Run(
      {"sh", "-c",
       "cd " + certs_.string() +
           " && openssl req -newkey rsa:2048 -nodes -subj /CN=rota-webhook -keyout new.key -out new.csr 2>/dev/null && "
           "printf 'subjectAltName=IP:127.0.0.1\\n' > new.ext && openssl x509 -req -in new.csr -CA " +
           (pki / "ca.crt").string() + " -CAkey " + (pki / "ca.key").string() +
           " -CAcreateserial -CAserial new.srl -days 1 -extfile new.ext -out new.crt 2>/dev/null && "
           "mv new.key tls.key && mv new.crt tls.crt"});
  ASSERT_TRUE(made.ok()) << made.err;
  ASSERT_TRUE(Eventually([&] { return serial() != before; }, 20s)) << Log();
  EXPECT_NE(Log().find("webhook certificate reloaded"), std::string::npos);
  // And the apiserver still reaches it (the new certificate is signed by the same CA).
  ASSERT_TRUE(kubectl()({"create", "-n", ns(), "-f", "-"},
                        JobManifest("after", "    kueue.x-k8s.io/queue-name: a\n", 1, 0, "", false))
                  .ok());
  EXPECT_EQ(JobSuspend("after"), "true");
}

TEST_F(WebhookTest, ABurstOf500JobsIsAllSuspendedAndNoneFails) {
  auto cfg = apiclient::LoadKubeconfig(KubeconfigFromEnv());
  ASSERT_TRUE(cfg.ok());
  cfg->qps = 1000;
  cfg->burst = 1000;
  auto client = apiclient::Client::Create(*cfg);
  ASSERT_TRUE(client.ok());
  const apiclient::Json job = apiclient::Json::parse(
      R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"labels":{"kueue.x-k8s.io/queue-name":"burst"}},
    "spec":{"suspend":false,"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"i"}]}}}})");
  std::atomic<int> next{0}, failed{0};
  std::vector<std::thread> threads;
  std::mutex mu;
  std::string first_error;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&] {
      for (int i; (i = next++) < 500;) {
        apiclient::Json j = job;
        j["metadata"]["name"] = "burst-" + std::to_string(i);
        auto r = (*client)->Create(apiclient::resources::kJobs, ns(), j);
        if (!r.ok()) {
          ++failed;
          std::lock_guard<std::mutex> l(mu);
          if (first_error.empty()) first_error = r.error().ToString();
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failed, 0) << first_error;
  auto jobs = (*client)->ListAll(apiclient::resources::kJobs, ns());
  ASSERT_TRUE(jobs.ok());
  int suspended = 0;
  for (const apiclient::Json& j : jobs->items) suspended += j["spec"].value("suspend", false) ? 1 : 0;
  EXPECT_EQ(jobs->items.size(), 500u);
  EXPECT_EQ(suspended, 500);
}

}  // namespace
}  // namespace rota::testing
