#include "request_auth.h"

#include <openssl/sha.h>

namespace rota::serving {

namespace {

using apiclient::Json;
constexpr auto kAllowedFor = std::chrono::minutes(1);
constexpr auto kRefusedFor = std::chrono::seconds(10);
constexpr size_t kMaxDecisions = 4096;  // distinct tokens and paths kept; then the expired go

const apiclient::Resource kTokenReviews{"authentication.k8s.io", "v1", "tokenreviews", false};
const apiclient::Resource kAccessReviews{"authorization.k8s.io", "v1", "subjectaccessreviews", false};

std::string Hash(const std::string& token, const std::string& path) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), digest);
  return std::string(reinterpret_cast<const char*>(digest), sizeof digest) + path;
}

std::string Bearer(std::string_view authorization) {
  constexpr std::string_view kScheme = "Bearer ";
  if (authorization.size() <= kScheme.size()) return "";
  for (size_t i = 0; i < kScheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(authorization[i])) !=
        std::tolower(static_cast<unsigned char>(kScheme[i])))
      return "";
  std::string_view token = authorization.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && (token.back() == ' ' || token.back() == '\r')) token.remove_suffix(1);
  return std::string(token);
}

class ApiReviewer : public Reviewer {
 public:
  explicit ApiReviewer(apiclient::Client& client) : client_(client) {}

  Result<std::optional<User>> Authenticate(const std::string& token) override {
    Json review = {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenReview"}, {"spec", {{"token", token}}}};
    auto r = client_.Create(kTokenReviews, "", review);
    if (!r.ok()) return InvalidArgument("TokenReview: " + r.error().ToString());
    const Json& status = r->contains("status") ? (*r)["status"] : Json::object();
    if (!status.value("authenticated", false)) return std::optional<User>();
    const Json& u = status.contains("user") ? status["user"] : Json::object();
    User user{u.value("username", ""), u.value("uid", ""), {}, u.value("extra", Json::object())};
    for (const auto& g : u.value("groups", Json::array()))
      if (g.is_string()) user.groups.push_back(g.get<std::string>());
    return std::optional<User>(std::move(user));
  }

  Result<bool> Allowed(const User& user, const std::string& verb, const std::string& path) override {
    return Review(user, "nonResourceAttributes", {{"path", path}, {"verb", verb}});
  }
  Result<bool> AllowedResource(const User& user, const Json& attributes) override {
    return Review(user, "resourceAttributes", attributes);
  }

 private:
  Result<bool> Review(const User& user, const char* kind, const Json& attributes) {
    Json spec = {{"user", user.name}, {"groups", user.groups}, {kind, attributes}};
    if (!user.uid.empty()) spec["uid"] = user.uid;
    if (!user.extra.empty()) spec["extra"] = user.extra;
    Json review = {
        {"apiVersion", "authorization.k8s.io/v1"}, {"kind", "SubjectAccessReview"}, {"spec", std::move(spec)}};
    auto r = client_.Create(kAccessReviews, "", review);
    if (!r.ok()) return InvalidArgument("SubjectAccessReview: " + r.error().ToString());
    return r->contains("status") && (*r)["status"].value("allowed", false);
  }

  apiclient::Client& client_;
};

}  // namespace

std::unique_ptr<Reviewer> NewApiReviewer(apiclient::Client& client) { return std::make_unique<ApiReviewer>(client); }

RequestAuthorizer::RequestAuthorizer(Reviewer& reviewer, apiclient::Clock& clock, Logger log)
    : reviewer_(reviewer), clock_(clock), log_(std::move(log)) {}

std::optional<controller::HttpReply> RequestAuthorizer::Check(const std::string& path, std::string_view authorization) {
  const std::string token = Bearer(authorization);
  if (token.empty())
    return controller::HttpReply{401, "text/plain; charset=utf-8", "Unauthorized: a bearer token is required\n"};
  const std::string key = Hash(token, path);
  const auto now = clock_.Now();
  {
    std::lock_guard<std::mutex> l(mu_);
    if (auto it = decisions_.find(key); it != decisions_.end() && it->second.expires > now) return Reply(it->second);
  }
  Decision d = Decide(token, path);  // (outside the lock: it asks the apiserver)
  if (d.status != 500) {
    std::lock_guard<std::mutex> l(mu_);
    if (decisions_.size() >= kMaxDecisions)
      std::erase_if(decisions_, [&](const auto& e) { return e.second.expires <= now; });
    if (decisions_.size() >= kMaxDecisions) decisions_.clear();
    decisions_[key] = d;
  }
  return Reply(d);
}

RequestAuthorizer::Decision RequestAuthorizer::Decide(const std::string& token, const std::string& path) {
  const auto now = clock_.Now();
  auto user = reviewer_.Authenticate(token);
  if (!user.ok()) {
    log_("warn", "cannot authenticate a request for " + path + ": " + user.status().message());
    return {500, "Internal Server Error: the apiserver could not review the token\n", now};
  }
  if (!user->has_value()) return {401, "Unauthorized: the token was not accepted\n", now + kRefusedFor};
  auto allowed = reviewer_.Allowed(**user, "get", path);
  if (!allowed.ok()) {
    log_("warn", "cannot authorize " + (*user)->name + " for " + path + ": " + allowed.status().message());
    return {500, "Internal Server Error: the apiserver could not review the access\n", now};
  }
  if (!*allowed) {
    return {403, "Forbidden: user \"" + (*user)->name + "\" may not get path \"" + path + "\"\n", now + kRefusedFor};
  }
  return {0, "", now + kAllowedFor};
}

std::optional<controller::HttpReply> RequestAuthorizer::Reply(const Decision& d) const {
  if (d.status == 0) return std::nullopt;
  return controller::HttpReply{d.status, "text/plain; charset=utf-8", d.message};
}

}  // namespace rota::serving
