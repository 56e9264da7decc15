#include "request_auth.h"

#include <gtest/gtest.h>

namespace rota::serving {
namespace {

// Answers as an apiserver would for two tokens: "reader-token" (allowed) and "other-token"
// (authenticated, not allowed); counts the questions.
class FakeReviewer : public Reviewer {
 public:
  Result<std::optional<User>> Authenticate(const std::string& token) override {
    ++authentications;
    if (down) return InvalidArgument("connection refused");
    if (token == "reader-token") return std::optional<User>(User{"system:serviceaccount:monitoring:prometheus", "u1"});
    if (token == "other-token") return std::optional<User>(User{"alice", "u2"});
    return std::optional<User>();
  }
  Result<bool> Allowed(const User& user, const std::string& verb, const std::string& path) override {
    ++authorizations;
    last_verb = verb;
    last_path = path;
    return user.name == "system:serviceaccount:monitoring:prometheus";
  }
  int authentications = 0, authorizations = 0;
  bool down = false;
  std::string last_verb, last_path;
};

class RequestAuthTest : public ::testing::Test {
 protected:
  FakeReviewer reviewer;
  apiclient::FakeClock clock;
  std::vector<std::string> logged;
  RequestAuthorizer auth{reviewer, clock, [this](const std::string&, const std::string& m) { logged.push_back(m); }};
};

TEST_F(RequestAuthTest, WithoutABearerTokenTheAnswerIs401AndNobodyIsAsked) {
  for (const char* header : {"", "Basic dXNlcjpwYXNz", "Bearer ", "Bearer"}) {
    auto reply = auth.Check("/metrics", header);
    ASSERT_TRUE(reply) << header;
    EXPECT_EQ(reply->status, 401) << header;
  }
  EXPECT_EQ(reviewer.authentications, 0);
}

TEST_F(RequestAuthTest, AnUnknownTokenIs401AndAnUnauthorizedUserIs403ByName) {
  auto unknown = auth.Check("/metrics", "Bearer made-up");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 401);
  auto other = auth.Check("/metrics", "Bearer other-token");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 403);
  EXPECT_NE(other->body.find("\"alice\" may not get path \"/metrics\""), std::string::npos) << other->body;
}

TEST_F(RequestAuthTest, AnAllowedTokenIsServedAndAskedAboutGetOnThePath) {
  EXPECT_FALSE(auth.Check("/metrics", "Bearer reader-token"));
  EXPECT_FALSE(auth.Check("/metrics", "bearer   reader-token"));  // (the scheme is case-insensitive)
  EXPECT_EQ(reviewer.last_verb, "get");
  EXPECT_EQ(reviewer.last_path, "/metrics");
}

TEST_F(RequestAuthTest, DecisionsAreKeptForAMinuteAndRefusalsForTenSeconds) {
  EXPECT_FALSE(auth.Check("/metrics", "Bearer reader-token"));
  EXPECT_TRUE(auth.Check("/metrics", "Bearer other-token"));
  EXPECT_EQ(reviewer.authentications, 2);
  clock.Advance(std::chrono::seconds(9));
  EXPECT_FALSE(auth.Check("/metrics", "Bearer reader-token"));
  EXPECT_TRUE(auth.Check("/metrics", "Bearer other-token"));
  EXPECT_EQ(reviewer.authentications, 2);
  clock.Advance(std::chrono::seconds(2));
  EXPECT_TRUE(auth.Check("/metrics", "Bearer other-token"));
  EXPECT_EQ(reviewer.authentications, 3);  // the refusal expired
  clock.Advance(std::chrono::seconds(50));
  EXPECT_FALSE(auth.Check("/metrics", "Bearer reader-token"));
  EXPECT_EQ(reviewer.authentications, 4);  // and so did the permission
}

TEST_F(RequestAuthTest, AnApiserverThatCannotBeAskedIs500AndNotRemembered) {
  reviewer.down = true;
  auto reply = auth.Check("/metrics", "Bearer reader-token");
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, 500);
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_NE(logged[0].find("connection refused"), std::string::npos);
  reviewer.down = false;
  EXPECT_FALSE(auth.Check("/metrics", "Bearer reader-token"));
}

}  // namespace
}  // namespace rota::serving
