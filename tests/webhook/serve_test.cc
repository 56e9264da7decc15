#include "serve.h"

#include "cluster_view.h"

#include <gtest/gtest.h>

#include <string>

namespace rota::webhook {
namespace {

class NoObjects : public ClusterView {
 public:
  bool LocalQueueExists(const std::string&, const std::string&) const override { return false; }
  bool PriorityClassExists(const std::string&) const override { return false; }
  std::optional<std::string> CohortParent(const std::string&) const override { return std::nullopt; }
};

const controller::Logger kQuiet = [](const std::string&, const std::string&) {};

// Requests to paths that are not webhooks get a 404 and leave /metrics as it was: a client cannot
// grow it by making up paths.
TEST(ServeWebhookTest, UnknownPathsAre404AndNotCounted) {
  controller::Metrics metrics;
  NoObjects view;
  const std::string before = metrics.Render();
  for (int i = 0; i < 100; ++i) {
    const controller::HttpReply r = ServeWebhook("/made-up-" + std::to_string(i), "{}", view, metrics, kQuiet);
    EXPECT_EQ(r.status, 404);
  }
  const std::string after = metrics.Render();
  EXPECT_EQ(after.find("made-up"), std::string::npos);
  EXPECT_EQ(after, before);
}

// A request to a webhook is counted by its path and code, even when it cannot be read.
TEST(ServeWebhookTest, AWebhookRequestIsCountedByPathAndCode) {
  controller::Metrics metrics;
  NoObjects view;
  ASSERT_FALSE(Routes().empty());
  const std::string path = Routes().front().path;
  EXPECT_EQ(ServeWebhook(path, "not json", view, metrics, kQuiet).status, 400);
  const std::string text = metrics.Render();
  const std::string line = "controller_runtime_webhook_requests_total{webhook=\"" + path + "\",code=\"400\"} 1";
  EXPECT_NE(text.find(line), std::string::npos) << text;
}

// A view whose lookups the apiserver did not answer.
class Unanswered : public NoObjects {
 public:
  bool LocalQueueExists(const std::string& ns, const std::string& name) const override {
    throw LookupFailed("cannot tell whether LocalQueue " + ns + "/" + name + " exists: connection refused");
  }
};

// A Job in a namespace that may or may not have a default LocalQueue is neither let through
// unsuspended nor suspended on a guess: the request fails with the reason (503).
TEST(ServeWebhookTest, ALookupTheApiserverDidNotAnswerIsA503WithTheReason) {
  controller::Metrics metrics;
  Unanswered view;
  const std::string review = R"({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
      "uid": "u", "kind": {"group": "batch", "version": "v1", "kind": "Job"},
      "resource": {"group": "batch", "version": "v1", "resource": "jobs"}, "namespace": "ml", "operation": "CREATE",
      "userInfo": {"username": "alice"}, "object": {"apiVersion": "batch/v1", "kind": "Job",
      "metadata": {"name": "j", "namespace": "ml"}, "spec": {"template": {"spec": {"containers": []}}}}}})";
  const controller::HttpReply r = ServeWebhook("/mutate-batch-v1-job", review, view, metrics, kQuiet);
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body, "cannot tell whether LocalQueue ml/default exists: connection refused\n");
}

// Before its cache has synced, the view asks the apiserver; an apiserver that does not say (here
// it refuses: the request is forbidden) is not taken for "no such object".
TEST(InformerViewTest, AnUnansweredLookupIsNotNotFound) {
  const controller::HttpReply forbidden{
      403, "application/json",
      R"({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden", "code": 403})"};
  auto refuse = [forbidden] { return forbidden; };
  auto apiserver = controller::HttpServer::Start(
      "127.0.0.1:0", {{"/apis/kueue.x-k8s.io/v1beta2/namespaces/ml/localqueues/default", refuse},
                      {"/apis/kueue.x-k8s.io/v1beta2/workloadpriorityclasses/high", refuse},
                      {"/apis/kueue.x-k8s.io/v1beta2/cohorts/root", refuse}});
  ASSERT_TRUE(apiserver.ok()) << apiserver.status().message();
  apiclient::RestConfig rest;
  rest.server = "http://127.0.0.1:" + std::to_string((*apiserver)->port());
  auto client = apiclient::Client::Create(rest);
  ASSERT_TRUE(client.ok()) << client.status().message();
  controller::ClusterCache cache(**client, {});  // (not started: never synced)
  InformerView view(**client, cache);
  EXPECT_THROW(view.LocalQueueExists("ml", "default"), LookupFailed);
  EXPECT_THROW(view.PriorityClassExists("high"), LookupFailed);
  EXPECT_THROW(view.CohortParent("root"), LookupFailed);
  // Objects that do not exist (404 for any other path) are simply not there.
  EXPECT_FALSE(view.LocalQueueExists("ml", "gpu"));
  EXPECT_FALSE(view.CohortParent("other").has_value());
}

}  // namespace
}  // namespace rota::webhook
