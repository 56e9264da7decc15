#pragma once

// Who may read an endpoint such as /metrics, decided as Kubernetes' own components decide it
// (controller-runtime's secure metrics, the kubelet): the request's bearer token is reviewed by
// the apiserver (TokenReview), and the user it names must be allowed the verb on the path as a
// non-resource URL (SubjectAccessReview). So a Prometheus whose ServiceAccount is bound to a
// ClusterRole with `nonResourceURLs: [/metrics], verbs: [get]` may scrape, and nobody else.
//
// Decisions are kept per token (by its SHA-256, never the token itself) and path: allowed for
// a minute, refused for 10 seconds; a failure to ask the apiserver is not kept.

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http_server.h"
#include "rota/admission/status.h"
#include "rota/apiclient/client.h"
#include "rota/apiclient/clock.h"

namespace rota::serving {

struct User {
  std::string name, uid;
  std::vector<std::string> groups;
  apiclient::Json extra = apiclient::Json::object();
};

// The two questions asked of the apiserver; an interface so that tests can answer them.
class Reviewer {
 public:
  virtual ~Reviewer() = default;
  // The user the token belongs to; nullopt when the apiserver does not authenticate it.
  virtual Result<std::optional<User>> Authenticate(const std::string& token) = 0;
  virtual Result<bool> Allowed(const User& user, const std::string& verb, const std::string& path) = 0;
  // The same for a resource: `attributes` is a SubjectAccessReview's spec.resourceAttributes
  // (verb, group, version, resource, subresource, namespace, name).
  virtual Result<bool> AllowedResource(const User& user, const apiclient::Json& attributes) {
    (void)user;
    (void)attributes;
    return InvalidArgument("this reviewer does not review access to resources");
  }
};

// Asks through `client` (POST tokenreviews and subjectaccessreviews; RBAC: create on both).
std::unique_ptr<Reviewer> NewApiReviewer(apiclient::Client& client);

class RequestAuthorizer {
 public:
  using Logger = std::function<void(const std::string& level, const std::string& message)>;
  RequestAuthorizer(Reviewer& reviewer, apiclient::Clock& clock, Logger log);

  // nullopt when the request may be served; otherwise the reply: 401 without a valid bearer
  // token, 403 when its user may not `get` the path, 500 when the apiserver could not be asked.
  // Thread-safe.
  std::optional<controller::HttpReply> Check(const std::string& path, std::string_view authorization);

 private:
  struct Decision {
    int status;  // 0 allowed, else the reply's status
    std::string message;
    apiclient::Clock::TimePoint expires;
  };
  Decision Decide(const std::string& token, const std::string& path);
  std::optional<controller::HttpReply> Reply(const Decision& d) const;

  Reviewer& reviewer_;
  apiclient::Clock& clock_;
  Logger log_;
  std::mutex mu_;
  std::map<std::string, Decision> decisions_;  // by token hash and path
};

}  // namespace rota::serving
