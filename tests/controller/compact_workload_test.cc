#include <gtest/gtest.h>

#include "cache/compact_workload.h"

namespace rota::controller {
namespace {

using api::Json;

// A Workload as a sweep's Job makes it: labels, an image, env and probes nothing schedules by.
Json SweepWorkload(const std::string& name, const std::string& image) {
  return Json::parse(R"({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
    "metadata": {"name": ")" +
                     name + R"(", "namespace": "team-a", "uid": "u-)" + name + R"(",
      "resourceVersion": "42", "generation": 1, "creationTimestamp": "2026-11-24T10:00:00Z",
      "labels": {"sweep": "lr"}, "annotations": {"note": "x", "rota.dev/checkpoint": "true",
        "rota.dev/checkpointed-at": "2026-11-24T11:00:00Z"},
      "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": ")" +
                     name + R"(", "uid": "j-1", "controller": true}]},
    "spec": {"queueName": "gpu", "priority": 10, "podSets": [{"name": "main", "count": 2, "template": {
      "metadata": {"labels": {"app": "train"}},
      "spec": {"nodeSelector": {"gpu": "a100"},
               "containers": [{"name": "trainer", "image": ")" +
                     image + R"(", "env": [{"name": "LR", "value": "0.1"}],
                               "resources": {"requests": {"nvidia.com/gpu": "4", "cpu": "8"}}}],
               "restartPolicy": "Never"}}}]},
    "status": {"conditions": [{"type": "QuotaReserved", "status": "False", "reason": "Pending",
                               "message": "waiting", "lastTransitionTime": "2026-11-24T10:00:01Z"}]}})");
}

// What the cache keeps of a Workload: identity, owners, checkpoint annotations, what scheduling
// reads of its pod templates (shared between look-alikes), its status; not labels, other
// annotations, images or env.
TEST(CompactWorkloadTest, KeepsWhatSchedulingReadsAndSharesEqualTemplates) {
  api::JsonInterner templates;
  Json a = SweepWorkload("lr-1", "registry.example/train:1");
  Json b = SweepWorkload("lr-2", "registry.example/train:2");
  auto wa = DecodeCompactWorkload(a, templates);
  auto wb = DecodeCompactWorkload(b, templates);
  ASSERT_TRUE(wa.ok()) << wa.status().message();
  ASSERT_TRUE(wb.ok()) << wb.status().message();

  EXPECT_EQ(wa->metadata.name, "lr-1");
  EXPECT_EQ(wa->metadata.uid, "u-lr-1");
  EXPECT_EQ(wa->metadata.resource_version, "42");
  // (Owner references, which the Job integration follows, are kept untyped.)
  EXPECT_EQ(wa->metadata.extra["ownerReferences"][0]["name"], "lr-1");
  EXPECT_TRUE(wa->metadata.labels.empty());
  EXPECT_EQ(wa->metadata.annotations,
            (std::map<std::string, std::string>{{"rota.dev/checkpoint", "true"},
                                                {"rota.dev/checkpointed-at", "2026-11-24T11:00:00Z"}}));
  EXPECT_EQ(wa->spec.queue_name, "gpu");
  ASSERT_EQ(wa->spec.pod_sets.size(), 1u);
  EXPECT_EQ(wa->spec.pod_sets[0].count, 2);
  ASSERT_TRUE(wa->status.has_value());
  ASSERT_EQ(wa->status->conditions.size(), 1u);
  EXPECT_EQ(wa->status->conditions[0].reason, "Pending");

  const Json& tpl = wa->spec.pod_sets[0].template_.get();
  EXPECT_EQ(tpl, Json::parse(R"({"spec": {"nodeSelector": {"gpu": "a100"}, "containers": [{"name": "trainer",
    "resources": {"requests": {"nvidia.com/gpu": "4", "cpu": "8"}}}]}})"));
  // Only the image told the two templates apart: the cache holds one copy.
  EXPECT_EQ(wa->spec.pod_sets[0].template_.shared(), wb->spec.pod_sets[0].template_.shared());
  EXPECT_EQ(templates.size(), 1u);
}

// A finished Workload is kept for its name, owner and Finished condition only.
TEST(CompactWorkloadTest, AFinishedWorkloadKeepsNoTemplateNorAdmission) {
  api::JsonInterner templates;
  Json done = SweepWorkload("lr-3", "registry.example/train:1");
  done["status"] = Json::parse(R"({"admission": {"clusterQueue": "team-a", "podSetAssignments": [{"name": "main",
      "count": 2, "flavors": {"nvidia.com/gpu": "a100"}, "resourceUsage": {"nvidia.com/gpu": "8"}}]},
    "conditions": [{"type": "Admitted", "status": "True", "reason": "Admitted", "message": "m", "lastTransitionTime": "2026-11-24T10:00:02Z"},
                   {"type": "Finished", "status": "True", "reason": "Succeeded", "message": "m", "lastTransitionTime": "2026-11-24T10:05:00Z"}]})");
  auto w = DecodeCompactWorkload(done, templates);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->spec.pod_sets[0].template_.get(), Json::object());
  ASSERT_TRUE(w->status.has_value());
  EXPECT_FALSE(w->status->admission.has_value());
  ASSERT_EQ(w->status->conditions.size(), 1u);
  EXPECT_EQ(w->status->conditions[0].type, "Finished");
  EXPECT_EQ(w->metadata.extra["ownerReferences"][0]["kind"], "Job");
}

// Bad input still gets the decoder's error, naming the field.
TEST(CompactWorkloadTest, ABadFieldIsNamed) {
  api::JsonInterner templates;
  Json bad = SweepWorkload("lr-4", "registry.example/train:1");
  bad["spec"]["podSets"][0]["count"] = "two";
  auto w = DecodeCompactWorkload(bad, templates);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("spec.podSets[0].count"), std::string::npos) << w.status().message();
}

}  // namespace
}  // namespace rota::controller
