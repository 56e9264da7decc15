#include "serve.h"

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

}  // namespace
}  // namespace rota::webhook
