#include "rota/kubectl/why.h"

#include <gtest/gtest.h>

#include <sstream>

#include "samples.h"

namespace rota::kubectl {
namespace {

using namespace samples;

TEST(WhyTest, ParsesItsTarget) {
  auto job = ParseTarget("job/train");
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->kind, Target::Kind::kJob);
  EXPECT_EQ(job->name, "train");
  EXPECT_EQ(ParseTarget("jobs.batch/x")->kind, Target::Kind::kJob);
  EXPECT_EQ(ParseTarget("workload/x")->kind, Target::Kind::kWorkload);
  EXPECT_EQ(ParseTarget("workloads.kueue.x-k8s.io/x")->kind, Target::Kind::kWorkload);
  EXPECT_EQ(ParseTarget("x")->kind, Target::Kind::kAny);
  EXPECT_FALSE(ParseTarget("pod/x").ok());
  EXPECT_FALSE(ParseTarget("job/").ok());
  EXPECT_FALSE(ParseTarget("job/a/b").ok());
  EXPECT_FALSE(ParseTarget("").ok());
}

TEST(WhyTest, TheStateInWords) {
  Json w = WorkloadJson("ml", "a", 1, 0);
  EXPECT_EQ(StateOf(Decode<api::Workload>(w)).first, "Pending");
  Admit(w, "team", "2026-11-01T10:00:00Z");
  EXPECT_EQ(StateOf(Decode<api::Workload>(w)),
            std::make_pair(std::string("Admitted"), std::string("admitted by ClusterQueue team")));
  SetCondition(w, "CheckpointRequested", "True", "InClusterQueue", "asked to checkpoint by T", "2026-11-01T10:05:00Z");
  EXPECT_EQ(StateOf(Decode<api::Workload>(w)).first, "WaitingForCheckpoint");
  SetCondition(w, "CheckpointRequested", "False", "Checkpointed", "done", "2026-11-01T10:06:00Z");
  SetCondition(w, "Evicted", "True", "Preempted", "Preempted to accommodate workload ml/b", "2026-11-01T10:06:00Z");
  auto [state, words] = StateOf(Decode<api::Workload>(w));
  EXPECT_EQ(state, "Evicted");
  EXPECT_NE(words.find("holds its quota until its pods are gone"), std::string::npos) << words;
  w["status"].erase("admission");
  EXPECT_NE(StateOf(Decode<api::Workload>(w)).second.find("waits to be admitted again"), std::string::npos);
  SetCondition(w, "Finished", "True", "Succeeded", "Job finished", "2026-11-01T11:00:00Z");
  EXPECT_EQ(StateOf(Decode<api::Workload>(w)).first, "Finished");
  w["spec"]["active"] = false;
  EXPECT_EQ(StateOf(Decode<api::Workload>(w)).first, "Inactive");
}

TEST(WhyTest, ReasonsInWords) {
  EXPECT_NE(ReasonInWords("ExceedsMaxQuota", "").find("more than its ClusterQueue could ever give"), std::string::npos);
  EXPECT_NE(ReasonInWords("Pending", "waiting for 1 workload(s) to checkpoint (deadline T)").find("checkpoint"),
            std::string::npos);
  EXPECT_NE(ReasonInWords("", "").find("head of each ClusterQueue's line"), std::string::npos);
  EXPECT_EQ(ReasonInWords("Unheard", ""), "reason Unheard");
}

// team-a (4 GPUs, in cohort ml) is full with a low- and a high-priority workload; team-b lends.
WhyInputs Cluster() {
  WhyInputs in;
  Json a = ClusterQueueJson("team-a", "ml", 4, {{"withinClusterQueue", "LowerPriority"}});
  SetQueueStatus(a, 4, 0, 1, 2);
  Json b = ClusterQueueJson("team-b", "ml", 4);
  SetQueueStatus(b, 2, 0, 0, 1);
  in.cluster_queues = {Decode<api::ClusterQueue>(a), Decode<api::ClusterQueue>(b)};
  in.local_queues = {Decode<api::LocalQueue>(LocalQueueJson("ml", "main", "team-a"))};
  Json low = WorkloadJson("ml", "low", 2, 10), high = WorkloadJson("ml", "high", 2, 1000);
  Json other = WorkloadJson("vision", "other", 2, 10);
  Admit(low, "team-a", "2026-11-01T09:10:00Z");
  Admit(high, "team-a", "2026-11-01T09:20:00Z");
  Admit(other, "team-b", "2026-11-01T09:30:00Z");
  in.workloads = {Decode<api::Workload>(low), Decode<api::Workload>(high), Decode<api::Workload>(other)};
  Json waiting = WorkloadJson("ml", "waiting", 2, 100, "main", "2026-11-01T09:40:00Z");
  SetCondition(waiting, "QuotaReserved", "False", "WaitingForQuota", "insufficient quota", "2026-11-01T09:40:02Z");
  in.workload = Decode<api::Workload>(waiting);
  in.job = "waiting";
  return in;
}

TEST(WhyTest, ExplainsAWaitingWorkload) {
  WhyInputs in = Cluster();
  in.visibility_error = "404 page not found";
  const Explanation e = Explain(in);
  EXPECT_EQ(e.state, "Pending");
  EXPECT_EQ(e.cluster_queue, "team-a");
  EXPECT_EQ(e.cohort, "ml");
  EXPECT_EQ(e.reason, "WaitingForQuota");
  EXPECT_EQ(e.requests.at("nvidia.com/gpu"), 2000);
  EXPECT_TRUE(e.would_borrow);  // (team-a's 4 GPUs are in use)
  EXPECT_FALSE(e.position.known);
  EXPECT_EQ(e.position.unknown_because, "the visibility API is not available: 404 page not found");
  // Its own queue's two holders, and team-b's (it would borrow), the most GPUs first.
  ASSERT_EQ(e.holders.size(), 3u);
  EXPECT_EQ(e.holders[0].usage, "nvidia.com/gpu: 2, cpu: 1");
  EXPECT_EQ(e.holders[0].admitted_at.substr(0, 10), "2026-11-01");
  ASSERT_TRUE(e.preemption);
  EXPECT_EQ(e.preemption->answer, "yes: 1 lower-priority workload in team-a could be preempted");
}

TEST(WhyTest, PositionAndForecastFromTheVisibilityApi) {
  WhyInputs in = Cluster();
  in.pending = Json::parse(R"({"items": [
      {"metadata": {"name": "someone-else", "namespace": "ml"}, "positionInClusterQueue": 0},
      {"metadata": {"name": "job-waiting-00000", "namespace": "ml"}, "priority": 100, "localQueueName": "main",
       "positionInClusterQueue": 3, "positionInLocalQueue": 1, "estimatedStartTime": "2026-11-01T12:00:00Z",
       "estimateBasis": "if the admitted workloads run to their expected ends"}]})");
  const Explanation e = Explain(in);
  ASSERT_TRUE(e.position.known);
  EXPECT_EQ(e.position.in_cluster_queue, 3);
  EXPECT_EQ(e.position.in_local_queue, 1);
  std::ostringstream out;
  RenderExplanation(e, 1793527200, out);  // 2026-11-01T10:00:00Z
  const std::string text = out.str();
  EXPECT_NE(text.find("Position:    4th (3 ahead) in ClusterQueue team-a, 2nd (1 ahead) in LocalQueue main\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Forecast:    starts around 2026-11-01T12:00:00Z (in 120m): if the admitted workloads run"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Preemption could help: yes: 1 lower-priority workload in team-a"), std::string::npos) << text;
  const Json doc = ExplanationDocument(e);
  EXPECT_EQ(doc["kind"], "WorkloadExplanation");
  EXPECT_EQ(doc["position"]["positionInClusterQueue"], 3);
  EXPECT_EQ(doc["preemption"]["candidates"], Json::array({"ml/job-low-00000"}));
}

TEST(WhyTest, APositionAtTheHeadAndNoEstimate) {
  WhyInputs in = Cluster();
  in.pending = Json::parse(R"({"items": [{"metadata": {"name": "job-waiting-00000", "namespace": "ml"},
      "positionInClusterQueue": 0, "positionInLocalQueue": 10,
      "estimateBasis": "no estimate: it starts beyond the forecast's horizon"}]})");
  std::ostringstream out;
  RenderExplanation(Explain(in), 0, out);
  EXPECT_NE(out.str().find("Position:    1st (the head) in ClusterQueue team-a, 11th (10 ahead) in LocalQueue main\n"
                           "Forecast:    no estimate: it starts beyond the forecast's horizon\n"),
            std::string::npos)
      << out.str();
}

TEST(WhyTest, AnAdmittedWorkloadNeedsNoMore) {
  WhyInputs in = Cluster();
  in.workload = in.workloads[1];
  const Explanation e = Explain(in);
  EXPECT_EQ(e.state, "Admitted");
  EXPECT_FALSE(e.waiting);
  EXPECT_FALSE(e.preemption);
  std::ostringstream out;
  RenderExplanation(e, 0, out);
  EXPECT_EQ(out.str().find("Preemption"), std::string::npos);
  EXPECT_FALSE(ExplanationDocument(e).contains("pending"));
}

TEST(WhyTest, ResolvesAJobToItsWorkloadAndSaysWhatIsNotFound) {
  FakeCluster cluster;
  cluster.workloads = {WorkloadJson("ml", "train", 1, 0)};
  cluster.job_uids = {{"ml/train", "uid-train"}, {"ml/orphan", "uid-orphan"}};
  auto r = ResolveTarget(cluster, "ml", {Target::Kind::kJob, "train"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->workload.metadata.name, "job-train-00000");
  EXPECT_EQ(r->job, "train");
  auto bare = ResolveTarget(cluster, "ml", {Target::Kind::kAny, "job-train-00000"});
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->job, "train");  // (its owner)
  auto missing = ResolveTarget(cluster, "ml", {Target::Kind::kJob, "nope"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "Error from server (NotFound): jobs.batch \"nope\" not found");
  auto neither = ResolveTarget(cluster, "ml", {Target::Kind::kAny, "nope"});
  ASSERT_FALSE(neither.ok());
  EXPECT_NE(neither.error().message.find("and no workloads.kueue.x-k8s.io \"nope\" in namespace \"ml\""),
            std::string::npos);
  auto orphan = ResolveTarget(cluster, "ml", {Target::Kind::kJob, "orphan"});
  ASSERT_FALSE(orphan.ok());
  EXPECT_NE(orphan.error().message.find("Job ml/orphan has no Workload"), std::string::npos);
}

}  // namespace
}  // namespace rota::kubectl
