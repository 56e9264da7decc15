#include "checkpoint/requests.h"

#include <gtest/gtest.h>

#include "../scheduling/small_cluster.h"
#include "rota/api/checkpoint.h"

namespace rota::controller {
namespace {

using api::Json;
using std::chrono::seconds;

// 2026-11-01T10:00:00Z and times after it.
constexpr int64_t kAdmitted = 1793527200;
std::string At(int64_t seconds_after) { return api::FormatTime(kAdmitted + seconds_after); }

// ClusterQueue "team": 2 GPUs, preempting lower priorities. ml/low (checkpointable, timeout 10m)
// holds both; ml/high (priority 10) wants one.
struct Cluster {
  api::ClusterState state = testing::SmallCluster();
  Json low;

  Cluster() {
    state.cluster_queues[0] = *api::DecodeObject<api::ClusterQueue>(Json::parse(R"({
      "metadata": {"name": "team"},
      "spec": {"namespaceSelector": {}, "preemption": {"withinClusterQueue": "LowerPriority"},
        "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"],
        "flavors": [{"name": "gpu", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 2}]}]}]}})"));
    low = Json::parse(R"({"metadata": {"name": "low", "namespace": "ml", "creationTimestamp": "2026-11-01T09:00:00Z",
        "annotations": {"rota.dev/checkpoint": "true", "rota.dev/checkpoint-timeout": "10m"}},
      "spec": {"queueName": "gpu", "priority": 0, "podSets": [{"name": "main", "count": 1, "template": {"spec":
        {"containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": 2}}}]}}}]},
      "status": {"admission": {"clusterQueue": "team", "podSetAssignments": [{"name": "main",
          "flavors": {"nvidia.com/gpu": "gpu"}, "resourceUsage": {"nvidia.com/gpu": "2"}, "count": 1}]},
        "conditions": [{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": "",
          "lastTransitionTime": "2026-11-01T10:00:00Z"}, {"type": "Admitted", "status": "True",
          "reason": "Admitted", "message": "", "lastTransitionTime": "2026-11-01T10:00:00Z"}]}})");
    Refresh(true);
  }
  // The cluster as the cache shows it, with or without the preemptor.
  void Refresh(bool with_high) {
    state.workloads = {std::make_shared<const api::Workload>(*api::DecodeObject<api::Workload>(low))};
    if (with_high) {
      Json high = Json::parse(R"({"metadata": {"name": "high", "namespace": "ml",
          "creationTimestamp": "2026-11-01T09:30:00Z"}, "spec": {"queueName": "gpu", "priority": 10,
          "podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": [{"name": "c",
          "resources": {"requests": {"nvidia.com/gpu": 1}}}]}}}]}})");
      state.workloads.push_back(std::make_shared<const api::Workload>(*api::DecodeObject<api::Workload>(high)));
    }
  }
  // Low as it is once the request written at `at` is back.
  void Asked(const std::string& message, int64_t at) {
    low["status"]["conditions"].push_back({{"type", "CheckpointRequested"},
                                           {"status", "True"},
                                           {"reason", "InClusterQueue"},
                                           {"message", message},
                                           {"lastTransitionTime", At(at)}});
  }
};

// One pass's scheduling steps up to the checkpoint decisions, as QueueController::Pass takes them.
struct Pass {
  api::SnapshotBuilder builder;
  PreemptionHold hold{seconds(10)};
  admission::Decisions d;
  HeldPreemptions held;
  CheckpointPass out;

  void Run(CheckpointRequests& requests, api::ClusterState& state, int64_t now, bool has_pods = true) {
    state.now = kAdmitted + now;
    ASSERT_TRUE(builder.Build(state).ok());
    requests.MarkOpen(builder);
    d = admission::Schedule(builder.snapshot());
    held = hold.Hold(d, builder, [](const std::string&) { return true; });
    out = requests.Decide(d, held, hold, builder, kAdmitted + now, At(now),
                          [has_pods](const std::string&) { return has_pods; });
  }
  std::string PreemptorMessage() const {
    for (const auto& p : d.pending)
      if (p.workload == "ml/high") return std::string(p.message);
    return "";
  }
};

// The pass at `now` that asks ml/low to checkpoint; then the cluster as the cache shows it once
// the request is written.
void AskAt(Cluster& c, CheckpointRequests& requests, int64_t now) {
  Pass first;
  first.Run(requests, c.state, now);
  ASSERT_FALSE(first.out.writes.empty());
  c.Asked(first.out.writes[0].body["status"]["conditions"].back()["message"], now);
  c.Refresh(true);
}

const Json* Condition(const WorkloadWrite& w, const std::string& type) {
  for (const Json& c : w.body["status"]["conditions"])
    if (c["type"] == type) return &c;
  return nullptr;
}

CheckpointTimeouts Timeouts() { return {seconds(300), seconds(1800)}; }

TEST(CheckpointRequestsTest, ACheckpointableVictimIsAskedAndKeepsItsQuotaWhileItsPreemptorWaits) {
  Cluster c;
  CheckpointRequests requests(Timeouts());
  Pass pass;
  pass.Run(requests, c.state, 60);
  EXPECT_TRUE(pass.d.preempted.empty()) << "asked, not evicted";
  EXPECT_TRUE(pass.held.victims.empty());
  EXPECT_TRUE(pass.d.admitted.empty());
  ASSERT_EQ(pass.out.writes.size(), 1u);
  const WorkloadWrite& w = pass.out.writes[0];
  EXPECT_EQ(w.key(), "ml/low");
  const Json* cond = Condition(w, "CheckpointRequested");
  ASSERT_NE(cond, nullptr);
  EXPECT_EQ((*cond)["status"], "True");
  EXPECT_EQ((*cond)["reason"], "InClusterQueue");
  EXPECT_EQ((*cond)["message"],
            "Preempted to accommodate workload ml/high due to prioritization in the "
            "ClusterQueue; asked to checkpoint by " +
                At(660));
  EXPECT_EQ((*cond)["lastTransitionTime"], At(60));
  EXPECT_TRUE(w.body["status"].contains("admission")) << "the apply keeps the admission";
  EXPECT_EQ(Condition(w, "Evicted"), nullptr);
  EXPECT_EQ(pass.PreemptorMessage(), "waiting for 1 workload(s) to checkpoint (deadline " + At(660) + ")");
  EXPECT_EQ(pass.out.next_deadline, kAdmitted + 660);
  EXPECT_EQ(requests.open(), 1u);
}

TEST(CheckpointRequestsTest, LaterPassesWaitThenEvictOnTheAnswer) {
  Cluster c;
  CheckpointRequests requests(Timeouts());
  AskAt(c, requests, 60);

  Pass waiting;
  waiting.Run(requests, c.state, 120);
  EXPECT_TRUE(waiting.d.preempted.empty());
  EXPECT_TRUE(waiting.out.writes.empty()) << "nothing is asked twice";
  EXPECT_TRUE(waiting.d.admitted.empty()) << "no one takes the GPUs low still holds";
  EXPECT_EQ(waiting.PreemptorMessage(), "waiting for 1 workload(s) to checkpoint (deadline " + At(660) + ")");

  c.low["metadata"]["annotations"][std::string(api::kCheckpointedAtAnnotation)] = At(150);
  c.Refresh(true);
  Pass answered;
  answered.Run(requests, c.state, 155);
  ASSERT_EQ(answered.d.preempted.size(), 1u);
  EXPECT_EQ(answered.d.preempted[0].workload, "ml/low");
  EXPECT_EQ(answered.d.preempted[0].preemptor, "ml/high");
  EXPECT_EQ(answered.held.victims.count("ml/low"), 1u) << "its pods stop before its quota goes";
  ASSERT_EQ(answered.out.closing.count("ml/low"), 1u);
  EXPECT_EQ(answered.out.closing["ml/low"].reason, "Checkpointed");
  ASSERT_EQ(answered.out.outcomes.size(), 1u);
  EXPECT_EQ(answered.out.outcomes[0].result, "acknowledged");
  EXPECT_EQ(answered.out.outcomes[0].wait_seconds, 95);
  EXPECT_EQ(requests.open(), 0u);
}

TEST(CheckpointRequestsTest, AnOldCheckpointIsNoAnswer) {
  Cluster c;
  c.low["metadata"]["annotations"][std::string(api::kCheckpointedAtAnnotation)] = At(30);
  c.Refresh(true);
  CheckpointRequests requests(Timeouts());
  Pass first;
  first.Run(requests, c.state, 60);
  Pass later;
  later.Run(requests, c.state, 90);
  EXPECT_TRUE(later.d.preempted.empty()) << "a checkpoint saved before the request does not answer it";
}

TEST(CheckpointRequestsTest, TheDeadlineEvicts) {
  Cluster c;
  CheckpointRequests requests(Timeouts());
  Pass first;
  first.Run(requests, c.state, 60);
  Pass before;
  before.Run(requests, c.state, 659);
  EXPECT_TRUE(before.d.preempted.empty());
  Pass after;
  after.Run(requests, c.state, 660);
  ASSERT_EQ(after.d.preempted.size(), 1u);
  EXPECT_EQ(after.out.closing["ml/low"].reason, "CheckpointTimeout");
  EXPECT_EQ(after.out.outcomes[0].result, "timed_out");
  EXPECT_EQ(after.out.outcomes[0].wait_seconds, 600);
}

// A close whose write fails (a leader's write fenced while its lease is in doubt) is decided
// again by the next pass, and evicts again, but its outcome is told (logged, counted) once.
TEST(CheckpointRequestsTest, AClosingWrittenAgainIsToldOnce) {
  Cluster c;
  CheckpointRequests requests(Timeouts());
  AskAt(c, requests, 60);
  for (const auto& w : c.state.workloads) requests.Observe(*w);  // the cache shows the request
  Pass after;
  after.Run(requests, c.state, 660);
  ASSERT_EQ(after.out.outcomes.size(), 1u);
  requests.WriteFailed("ml/low");
  Pass again;
  again.Run(requests, c.state, 661);
  ASSERT_EQ(again.d.preempted.size(), 1u) << "the eviction is made again";
  EXPECT_TRUE(again.out.outcomes.empty()) << "but not told again";
}

TEST(CheckpointRequestsTest, ARequestIsWithdrawnWhenThePreemptorGoesAway) {
  Cluster c;
  CheckpointRequests requests(Timeouts());
  Pass first;
  first.Run(requests, c.state, 60);
  c.Refresh(false);
  Pass gone;
  gone.Run(requests, c.state, 90);
  EXPECT_TRUE(gone.d.preempted.empty()) << "nothing is evicted";
  ASSERT_EQ(gone.out.writes.size(), 1u);
  const Json* cond = Condition(gone.out.writes[0], "CheckpointRequested");
  ASSERT_NE(cond, nullptr);
  EXPECT_EQ((*cond)["status"], "False");
  EXPECT_EQ((*cond)["reason"], "Cancelled");
  EXPECT_EQ(gone.out.outcomes[0].result, "cancelled");
  EXPECT_EQ(requests.open(), 0u);
}

TEST(CheckpointRequestsTest, AVictimThatGoesAwayEndsItsRequestQuietly) {
  Cluster c;
  CheckpointRequests requests(Timeouts());
  AskAt(c, requests, 60);
  for (const auto& w : c.state.workloads) requests.Observe(*w);  // (its last state, request open)
  c.state.workloads.erase(c.state.workloads.begin());            // deleted
  Pass gone;
  gone.Run(requests, c.state, 90);
  EXPECT_TRUE(gone.out.writes.empty());
  EXPECT_TRUE(gone.d.preempted.empty());
  EXPECT_EQ(requests.open(), 0u);
  Pass later;
  later.Run(requests, c.state, 120);
  EXPECT_TRUE(later.out.writes.empty());
  EXPECT_EQ(requests.open(), 0u);
}

TEST(CheckpointRequestsTest, ARestartedControllerCarriesOnWithTheSameDeadline) {
  Cluster c;
  {
    CheckpointRequests before_restart(Timeouts());
    AskAt(c, before_restart, 60);
  }
  // A new controller with other timeouts: the request's deadline is the one written.
  CheckpointRequests requests({seconds(30), seconds(60)});
  for (const auto& w : c.state.workloads) requests.Observe(*w);
  Pass resumed;
  resumed.Run(requests, c.state, 120);
  EXPECT_TRUE(resumed.out.writes.empty()) << "not asked again";
  EXPECT_TRUE(resumed.d.preempted.empty()) << "not evicted before its deadline";
  EXPECT_EQ(resumed.out.next_deadline, kAdmitted + 660);
  Pass due;
  due.Run(requests, c.state, 660);
  ASSERT_EQ(due.d.preempted.size(), 1u);
  EXPECT_EQ(due.out.closing["ml/low"].reason, "CheckpointTimeout");
}

TEST(CheckpointRequestsTest, AVictimThatDoesNotTakePartIsEvictedAtOnce) {
  Cluster c;
  c.low["metadata"].erase("annotations");
  c.Refresh(true);
  CheckpointRequests requests(Timeouts());
  Pass pass;
  pass.Run(requests, c.state, 60);
  ASSERT_EQ(pass.d.preempted.size(), 1u);
  EXPECT_TRUE(pass.out.writes.empty());
}

TEST(CheckpointRequestsTest, TheRequestIsReadBackFromItsCondition) {
  Cluster c;
  admission::PreemptDecision p{"ml/low", "ml/high", "team", admission::PreemptionReason::kInCohortReclamation};
  c.low["status"]["conditions"].push_back({{"type", "CheckpointRequested"},
                                           {"status", "True"},
                                           {"reason", "InCohortReclamation"},
                                           {"message", CheckpointRequestMessage(p, kAdmitted + 900)},
                                           {"lastTransitionTime", At(300)}});
  const auto r = OpenCheckpointRequest(*api::DecodeObject<api::Workload>(c.low));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->preemptor, "ml/high");
  EXPECT_EQ(r->reason, admission::PreemptionReason::kInCohortReclamation);
  EXPECT_EQ(r->requested_at, kAdmitted + 300);
  EXPECT_EQ(r->deadline, kAdmitted + 900);
}

TEST(CheckpointRequestsTest, TheTimeoutComesFromTheAnnotationWithinTheMaximum) {
  api::Workload w;
  EXPECT_EQ(CheckpointTimeout(w, Timeouts()), seconds(300));
  w.metadata.annotations[std::string(api::kCheckpointTimeoutAnnotation)] = "10m";
  EXPECT_EQ(CheckpointTimeout(w, Timeouts()), seconds(600));
  w.metadata.annotations[std::string(api::kCheckpointTimeoutAnnotation)] = "2h";
  EXPECT_EQ(CheckpointTimeout(w, Timeouts()), seconds(1800));
  w.metadata.annotations[std::string(api::kCheckpointTimeoutAnnotation)] = "soon";
  EXPECT_EQ(CheckpointTimeout(w, Timeouts()), seconds(300));
}

TEST(GoDurationTest, ReadsGoDurationsAndNamesWhatIsWrong) {
  EXPECT_EQ(*api::ParseGoDuration("90s"), 90000);
  EXPECT_EQ(*api::ParseGoDuration("1h30m"), 5400000);
  EXPECT_EQ(*api::ParseGoDuration("1.5h"), 5400000);
  EXPECT_EQ(*api::ParseGoDuration("250ms"), 250);
  EXPECT_EQ(*api::ParseGoDuration("0"), 0);
  for (const char* bad : {"", "10", "-5m", "5 m", "5d", "m", "1..5s", "999999999h"}) {
    auto r = api::ParseGoDuration(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("is not a duration such as 90s, 10m or 1h30m"), std::string::npos);
  }
}

}  // namespace
}  // namespace rota::controller
