#pragma once

// Kueue's visibility API (visibility.kueue.x-k8s.io, v1beta2 and v1beta1), served by rota as an
// aggregated API server behind the apiserver:
//   /apis/visibility.kueue.x-k8s.io[/VERSION]                    discovery
//   .../VERSION/clusterqueues/NAME/pendingworkloads              PendingWorkloadsSummary
//   .../VERSION/namespaces/NS/localqueues/NAME/pendingworkloads  the same, for one LocalQueue
// with ?offset=N&limit=N (default 0 and 1000). Items are in the engine's scheduling order with
// Kueue's positionInClusterQueue and positionInLocalQueue, and two fields of rota's own:
// estimatedStartTime (RFC 3339, absent when there is no estimate) and estimateBasis.
// Requests must come through the front proxy (401 otherwise), and its user must be allowed
// `get` on the subresource (a SubjectAccessReview; 403 otherwise). Errors are metav1.Status.

#include <functional>
#include <string>

#include "https_server.h"
#include "serving/request_auth.h"
#include "visibility/board.h"
#include "visibility/front_proxy.h"

namespace rota::visibility {

inline constexpr const char* kGroup = "visibility.kueue.x-k8s.io";

class VisibilityApi {
 public:
  using LocalQueueExists = std::function<bool(const std::string& ns, const std::string& name)>;
  using Logger = std::function<void(const std::string& level, const std::string& message)>;
  VisibilityApi(FrontProxyConfig front_proxy, serving::Reviewer& reviewer, VisibilityBoard& board,
                LocalQueueExists local_queue_exists, Logger log);

  controller::HttpReply Serve(const controller::HttpsRequest& request);

 private:
  struct Target;
  controller::HttpReply Pending(const Target& t, const std::string& query);
  std::optional<controller::HttpReply> Authorize(const serving::User& user, const Target& t);

  FrontProxyConfig front_proxy_;
  serving::Reviewer& reviewer_;
  VisibilityBoard& board_;
  LocalQueueExists local_queue_exists_;
  Logger log_;
};

}  // namespace rota::visibility
