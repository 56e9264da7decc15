// What parsing costs a controller per object it reads from the apiserver, keeping all of it or
// leaving parts out (apiclient::Keep): a Workload as Kueue's benchmark runner creates it, admitted
// by rota and then marked Finished by the runner, with the three managedFields entries those
// writes leave. Figures are printed, never asserted.

#include <benchmark/benchmark.h>

#include <string>

#include "cache/compact_workload.h"
#include "rota/api/codec.h"
#include "rota/api/kueue.h"
#include "rota/apiclient/client.h"

namespace {

using rota::apiclient::Keep;
using rota::apiclient::ParseKeeping;

std::string Condition(const std::string& type, const std::string& reason, const std::string& message) {
  return R"({"type":")" + type +
         R"(","status":"True","lastTransitionTime":"2026-11-23T10:40:12Z","observedGeneration":1,"reason":")" + reason +
         R"(","message":")" + message + R"("})";
}

std::string ManagedCondition(const std::string& type) {
  return R"("k:{\"type\":\")" + type +
         R"(\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:observedGeneration":{},"f:reason":{},"f:status":{},"f:type":{}})";
}

// A Workload of Kueue's baseline scenario as the apiserver sends it.
std::string Workload() {
  const std::string managed =
      R"([{"manager":"runner","operation":"Update","apiVersion":"kueue.x-k8s.io/v1beta2","time":"2026-11-23T10:40:11Z","fieldsType":"FieldsV1",)"
      R"("fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:kueue.x-k8s.io/job-uid":{},"f:kueue.x-k8s.io/running-time":{}}},)"
      R"("f:spec":{".":{},"f:active":{},"f:podSets":{},"f:priority":{},"f:priorityClassSource":{},"f:queueName":{}}}},)"
      R"({"manager":"kueue-admission","operation":"Apply","apiVersion":"kueue.x-k8s.io/v1beta2","time":"2026-11-23T10:40:12Z","fieldsType":"FieldsV1",)"
      R"("fieldsV1":{"f:status":{"f:admission":{"f:clusterQueue":{},"f:podSetAssignments":{}},"f:conditions":{)" +
      ManagedCondition("Admitted") + "," + ManagedCondition("QuotaReserved") +
      R"(}}},"subresource":"status"},)"
      R"({"manager":"runner","operation":"Update","apiVersion":"kueue.x-k8s.io/v1beta2","time":"2026-11-23T10:41:12Z","fieldsType":"FieldsV1",)"
      R"("fieldsV1":{"f:status":{"f:conditions":{)" +
      ManagedCondition("Finished") + R"(}}},"subresource":"status"}])";
  return R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload","metadata":{"name":"small-2-1734",)"
         R"("namespace":"cohort-2-cq-3","uid":"5f0b1e52-8c3d-4d6e-9f71-2a4b6c8d0e13","resourceVersion":"184467",)"
         R"("generation":1,"creationTimestamp":"2026-11-23T10:40:11Z",)"
         R"("labels":{"kueue.x-k8s.io/job-uid":"small-2-1734","kueue.x-k8s.io/running-time":"200ms"},"managedFields":)" +
         managed +
         R"(},"spec":{"active":true,"podSets":[{"name":"main","count":1,"template":{"spec":{"containers":[{"name":"c",)"
         R"("image":"registry.k8s.io/pause:3.10","resources":{"requests":{"cpu":"1"}}}],"restartPolicy":"Never"}}}],)"
         R"("priority":50,"priorityClassSource":"kueue.x-k8s.io/workloadpriorityclass","queueName":"lq"},)"
         R"("status":{"admission":{"clusterQueue":"cohort-2-cq-3","podSetAssignments":[{"name":"main","count":1,)"
         R"("flavors":{"cpu":"default"},"resourceUsage":{"cpu":"1"}}]},"conditions":[)" +
         Condition("QuotaReserved", "QuotaReserved", "Quota reserved in ClusterQueue cohort-2-cq-3") + "," +
         Condition("Admitted", "Admitted", "The workload is admitted") + "," +
         Condition("Finished", "Finished", "Finished by the runner") + "]}}";
}

void Parse(benchmark::State& state, const std::string& text, int depth, Keep keep) {
  for (auto _ : state) {
    rota::apiclient::Json j = ParseKeeping(text, depth, keep);
    benchmark::DoNotOptimize(j);
  }
  const size_t kept = ParseKeeping(text, depth, keep).dump().size();
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["bytes_in"] = static_cast<double>(text.size());
  state.counters["bytes_kept"] = static_cast<double>(kept);
}

// A watch event, as an informer reads it.
void BM_ParseWatchEvent_All(benchmark::State& s) {
  Parse(s, R"({"type":"MODIFIED","object":)" + Workload() + "}", 2, Keep::kAll);
}
void BM_ParseWatchEvent_AllButManagedFields(benchmark::State& s) {
  Parse(s, R"({"type":"MODIFIED","object":)" + Workload() + "}", 2, Keep::kAllButManagedFields);
}
// The reply to a status write, of which rota reads only the new resourceVersion.
void BM_ParseWriteReply_All(benchmark::State& s) { Parse(s, Workload(), 1, Keep::kAll); }
void BM_ParseWriteReply_Metadata(benchmark::State& s) { Parse(s, Workload(), 1, Keep::kMetadata); }

// After parsing, the informer's decoding of the object into the typed Workload it caches (the
// controller first trims it: see DecodeCompactWorkload), from a parsed copy.
void BM_DecodeWorkload(benchmark::State& s) {
  const rota::apiclient::Json parsed = ParseKeeping(Workload(), 1, Keep::kAllButManagedFields);
  for (auto _ : s) {
    rota::apiclient::Json j = parsed;
    auto w = rota::api::DecodeObject<rota::api::Workload>(j);
    benchmark::DoNotOptimize(w);
  }
}
// What that copy costs alone.
void BM_CopyParsedWorkload(benchmark::State& s) {
  const rota::apiclient::Json parsed = ParseKeeping(Workload(), 1, Keep::kAllButManagedFields);
  for (auto _ : s) {
    rota::apiclient::Json j = parsed;
    benchmark::DoNotOptimize(j);
  }
}

// The queue controller's decoding of a watched Workload into what its cache keeps (trimmed, the
// pod template interned), from a parsed copy, as its informer does for every event.
void BM_DecodeCompactWorkload(benchmark::State& s) {
  const rota::apiclient::Json parsed = ParseKeeping(Workload(), 1, Keep::kAllButManagedFields);
  rota::api::JsonInterner templates;
  for (auto _ : s) {
    rota::apiclient::Json j = parsed;
    auto w = rota::controller::DecodeCompactWorkload(j, templates);
    benchmark::DoNotOptimize(w);
  }
}

BENCHMARK(BM_DecodeWorkload);
BENCHMARK(BM_DecodeCompactWorkload);
BENCHMARK(BM_CopyParsedWorkload);
BENCHMARK(BM_ParseWatchEvent_All);
BENCHMARK(BM_ParseWatchEvent_AllButManagedFields);
BENCHMARK(BM_ParseWriteReply_All);
BENCHMARK(BM_ParseWriteReply_Metadata);

}  // namespace
