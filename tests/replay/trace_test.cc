#include "rota/replay/trace.h"

#include <gtest/gtest.h>

#include <sstream>

namespace rota::replay {
namespace {

const char* kPhilly =
    "timestamp,duration,num_gpus,gpu_time,cluster\n"
    "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n"
    "2017-10-09 06:13:03,2951.5,16,47224.0,6214e9\n"
    "2017-10-09 08:00:00,10,3,30,6214e9\n"
    "2017-10-09 09:00:00,10,0,0,6214e9\n"
    "\n";

int64_t Count(const TraceJob& j) { return j.workload->spec.pod_sets.at(0).count; }

TEST(PhillyTrace, JobsAreSortedBySubmissionFromTheFirstAndGpusBecomePods) {
  std::istringstream in(kPhilly);
  Result<Trace> t = ReadPhilly(in, "philly.csv", {});
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->jobs.size(), 3u);
  EXPECT_EQ(t->epoch, "2017-10-09T06:13:03Z");
  EXPECT_EQ(t->jobs[0].submit, 0);
  EXPECT_EQ(t->jobs[0].runtime, 2952);  // rounded up to a whole second
  EXPECT_EQ(t->jobs[0].workload->metadata.namespace_, "6214e9");
  EXPECT_EQ(t->jobs[0].workload->spec.queue_name, "gpu");
  EXPECT_EQ(Count(t->jobs[0]), 2);  // 16 GPUs: two pods of 8
  EXPECT_EQ(t->jobs[1].submit, 48 * 60 + 52);
  EXPECT_EQ(t->jobs[2].submit, 3600 + 46 * 60 + 57);
  EXPECT_EQ(Count(t->jobs[2]), 1);  // 3 GPUs: one pod, as they fit a node
  EXPECT_EQ(t->skipped, 1u);        // no GPU
  EXPECT_TRUE(t->problems.empty());
}

TEST(PhillyTrace, ABadRowIsReportedWithItsLineAndStrictStopsThere) {
  const std::string text =
      "timestamp,duration,num_gpus,gpu_time,cluster\n"
      "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n"
      "2017-10-09 07:01:55,soon,1,66.0,11cb48\n"
      "yesterday,66.0,1,66.0,11cb48\n";
  std::istringstream in(text);
  Result<Trace> t = ReadPhilly(in, "p.csv", {});
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->problems.size(), 2u);
  EXPECT_EQ(t->problems[0], "p.csv: line 3: duration: \"soon\" is not a number of seconds");
  EXPECT_NE(t->problems[1].find("line 4: timestamp"), std::string::npos) << t->problems[1];
  EXPECT_EQ(t->jobs.size(), 1u);

  std::istringstream again(text);
  ReadOptions strict;
  strict.strict = true;
  Result<Trace> stopped = ReadPhilly(again, "p.csv", strict);
  ASSERT_FALSE(stopped.ok());
  EXPECT_EQ(stopped.status().message(), "p.csv: line 3: duration: \"soon\" is not a number of seconds");
}

TEST(PhillyTrace, AWrongHeaderIsAnError) {
  std::istringstream in("name,cpu_milli\n");
  Result<Trace> t = ReadPhilly(in, "p.csv", {});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("p.csv: line 1: the header is not"), std::string::npos);
}

TEST(PhillyTrace, ASliceKeepsTheJobsOfItsSpanFromItsStart) {
  std::istringstream in(kPhilly);
  ReadOptions slice;
  slice.from = 60 * 60;
  slice.span = 60 * 60;
  Result<Trace> t = ReadPhilly(in, "philly.csv", slice);
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->jobs.size(), 1u);  // only the one submitted 1 h 47 min in
  EXPECT_EQ(t->jobs[0].submit, 46 * 60 + 57);
  EXPECT_EQ(t->epoch, "2017-10-09T07:13:03Z");
}

TEST(PaiTrace, FractionsOfAGpuBecomeMigSlicesOrTimeSlices) {
  EXPECT_EQ(PaiResources(8, 1000).resource, "nvidia.com/gpu");
  EXPECT_EQ(PaiResources(8, 1000).count, 8);
  EXPECT_EQ(PaiResources(1, 140).resource, "nvidia.com/mig-1g.10gb");
  EXPECT_EQ(PaiResources(1, 460).resource, "nvidia.com/gpu.shared");
  EXPECT_EQ(PaiResources(1, 460).count, 2);
  EXPECT_EQ(PaiResources(1, 810).count, 4);
}

TEST(PaiTrace, PodsThatNeverRanOrHaveNoGpuAreLeftOut) {
  std::istringstream in(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
      "openb-pod-0000,12000,16384,1,1000,,LS,Running,100,1100,200\n"
      "openb-pod-0001,6000,12288,1,460,,BE,Running,50,950,60\n"
      "openb-pod-0002,6000,12288,0,0,,BE,Running,50,950,60\n"
      "openb-pod-0003,6000,12288,1,460,,BE,Pending,70,950,\n"
      "openb-pod-0004,6000,12288,1,460,,BE,Running,70,50,60\n");
  Result<Trace> t = ReadPai(in, "pods.csv", {});
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->jobs.size(), 2u);
  EXPECT_EQ(t->skipped, 2u);
  ASSERT_EQ(t->problems.size(), 1u);
  EXPECT_NE(t->problems[0].find("pods.csv: line 6: "), std::string::npos) << t->problems[0];
  EXPECT_EQ(t->jobs[0].workload->metadata.name, "openb-pod-0001");
  EXPECT_EQ(t->jobs[0].workload->metadata.namespace_, "be");
  EXPECT_EQ(t->jobs[0].runtime, 890);  // from scheduled to deleted
  EXPECT_EQ(t->jobs[1].submit, 50);
  EXPECT_TRUE(t->epoch.empty());
}

TEST(WorkloadsTrace, SubmitAndRuntimeComeFromAnnotations) {
  const std::string yaml = R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: late
  namespace: team-a
  annotations: {rota.dev/submit-at: "120", rota.dev/runtime: "1h30m"}
spec:
  queueName: gpu
  podSets: [{name: main, count: 2, template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: 1}}}]}}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: early
  namespace: team-a
  annotations: {rota.dev/submit-at: "20", rota.dev/runtime: "10s"}
spec:
  podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c}]}}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: untimed}
spec:
  podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c}]}}}]
)";
  Result<Trace> t = ReadWorkloads(yaml, "w.yaml", {});
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->jobs.size(), 2u);
  EXPECT_EQ(t->jobs[0].workload->metadata.name, "early");
  EXPECT_EQ(t->jobs[1].submit, 100);
  EXPECT_EQ(t->jobs[1].runtime, 5400);
  ASSERT_EQ(t->problems.size(), 1u);
  EXPECT_EQ(t->problems[0], "w.yaml: document 3: needs the annotations rota.dev/submit-at and rota.dev/runtime");
}

}  // namespace
}  // namespace rota::replay
