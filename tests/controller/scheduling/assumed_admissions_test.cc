#include "scheduling/assumed_admissions.h"

#include <gtest/gtest.h>

#include "small_cluster.h"

namespace rota::controller {
namespace {

using testing::GpuWorkload;

// The cached Workload ml/NAME at resourceVersion `rv`, admitted to `cq` when it is not empty.
std::shared_ptr<const api::Workload> Cached(const std::string& rv, const std::string& cq = "") {
  auto w = std::make_shared<api::Workload>(*GpuWorkload("a", "2026-11-01T09:00:00Z"));
  w->metadata.resource_version = rv;
  if (!cq.empty()) w->status.emplace().admission.emplace().cluster_queue = cq;
  return w;
}

api::Admission AdmittedTo(const std::string& cq) {
  api::Admission a;
  a.cluster_queue = cq;
  return a;
}

bool AdmittedIn(const std::shared_ptr<const api::Workload>& w) { return w->status && w->status->admission; }

TEST(SeenVersionTest, TheCacheHasOurWriteOnceAtOrPastItsVersion) {
  EXPECT_TRUE(SeenVersion("100", "100"));
  EXPECT_TRUE(SeenVersion("101", "100"));
  EXPECT_FALSE(SeenVersion("99", "100"));
  EXPECT_FALSE(SeenVersion("100", ""));   // the write has not returned yet
  EXPECT_FALSE(SeenVersion("x2", "x1"));  // not numbers: equality alone tells
  EXPECT_TRUE(SeenVersion("x1", "x1"));
}

// Our admission is overlaid on the cached Workload until the cache shows it.
TEST(AssumedAdmissionsTest, AnAdmissionIsAssumedUntilTheCacheShowsIt) {
  AssumedAdmissions assumed;
  assumed.Assume("ml/a", AdmittedTo("team"), 7);
  assumed.BeginPass(1);
  auto seen = assumed.Overlay("ml/a", Cached("10"));
  EXPECT_TRUE(AdmittedIn(seen));
  EXPECT_EQ(seen->status->admission->cluster_queue, "team");
  assumed.EndPass();
  EXPECT_TRUE(assumed.Contains("ml/a"));
  assumed.BeginPass(2);
  auto shown = Cached("11", "team");
  EXPECT_EQ(assumed.Overlay("ml/a", shown), shown);  // the cache's own object, unchanged
  assumed.EndPass();
  EXPECT_FALSE(assumed.Contains("ml/a"));
}

// Once the cache reaches the version our write returned, the cache is the truth again, even if
// someone changed the Workload after us.
TEST(AssumedAdmissionsTest, TheCacheAtTheWrittenVersionIsTheTruth) {
  AssumedAdmissions assumed;
  assumed.Assume("ml/a", AdmittedTo("team"), 7);
  assumed.WriteSucceeded("ml/a", 7, "12");
  assumed.BeginPass(1);
  EXPECT_TRUE(AdmittedIn(assumed.Overlay("ml/a", Cached("11"))));  // not there yet
  auto after = Cached("13");                                       // our write, then someone cleared the admission
  EXPECT_EQ(assumed.Overlay("ml/a", after), after);
  EXPECT_FALSE(assumed.Contains("ml/a"));
}

// A failed write drops the assumption; the outcome of a write superseded by a later one does not.
TEST(AssumedAdmissionsTest, OnlyTheLatestWritesFailureDropsTheAssumption) {
  AssumedAdmissions assumed;
  assumed.Assume("ml/a", AdmittedTo("team"), 7);
  assumed.Assume("ml/a", std::nullopt, 8);  // then evicted
  assumed.WriteFailed("ml/a", 7);
  EXPECT_TRUE(assumed.Contains("ml/a"));
  assumed.WriteFailed("ml/a", 8);
  EXPECT_FALSE(assumed.Contains("ml/a"));
}

// An assumption whose Workload a pass no longer finds (deleted) is forgotten.
TEST(AssumedAdmissionsTest, AnAssumptionNotFoundByAPassIsForgotten) {
  AssumedAdmissions assumed;
  assumed.Assume("ml/a", AdmittedTo("team"), 7);
  assumed.BeginPass(1);
  EXPECT_TRUE(assumed.MayHold(std::hash<std::string>{}("ml/a")));
  assumed.EndPass();
  EXPECT_EQ(assumed.size(), 0u);
}

// A workload we evicted waits for quota until the cache shows the eviction.
TEST(AssumedAdmissionsTest, AnEvictedWorkloadIsNotAdmittedAgainBeforeTheCacheShowsIt) {
  api::ClusterState state = testing::SmallCluster();
  state.workloads = {GpuWorkload("a", "2026-11-01T09:00:00Z")};
  api::SnapshotBuilder builder;
  ASSERT_TRUE(builder.Build(state).ok());
  AssumedAdmissions assumed;
  assumed.Assume("ml/a", std::nullopt, 3);
  assumed.HoldEvicted(builder);
  admission::Workspace ws;
  admission::Decisions d = admission::Schedule(builder.snapshot(), ws);
  EXPECT_TRUE(d.admitted.empty());
  ASSERT_EQ(d.pending.size(), 1u);
  EXPECT_EQ(d.pending[0].reason, "WaitingForQuota");
  EXPECT_EQ(d.pending[0].message, "its eviction is being written");
}

}  // namespace
}  // namespace rota::controller
