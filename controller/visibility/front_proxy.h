#pragma once

// Who is asking, for an aggregated API server: the apiserver proxies each request with its
// front-proxy client certificate and names the user in headers (X-Remote-User, X-Remote-Group,
// X-Remote-Extra-*, X-Remote-Uid). Those headers are believed only from a client whose
// certificate the front-proxy CA signed and whose name is allowed, all as the apiserver publishes
// them in kube-system/extension-apiserver-authentication (as every aggregated server does). They
// are read once, at start: a rotated front-proxy CA needs a restart of rota.

#include <optional>
#include <string>
#include <vector>

#include "https_server.h"
#include "rota/admission/status.h"
#include "rota/apiclient/client.h"
#include "serving/request_auth.h"

namespace rota::visibility {

struct FrontProxyConfig {
  std::string client_ca_pem;               // requestheader-client-ca-file
  std::vector<std::string> allowed_names;  // empty: any name the CA signed
  std::vector<std::string> username_headers, group_headers, extra_prefixes;
  std::vector<std::string> uid_headers;  // requestheader-uid-headers (Kubernetes 1.32 and later)
};

// Reads the ConfigMap's data; an error when it is missing or has no requestheader CA (the
// apiserver was started without --requestheader-client-ca-file: no aggregation).
Result<FrontProxyConfig> LoadFrontProxyConfig(apiclient::Client& client);
// The same from the ConfigMap's `data`, for tests.
Result<FrontProxyConfig> ParseFrontProxyConfig(const apiclient::Json& data);

// The user a request names, when it came through the front proxy (a verified certificate with
// an allowed name, and a user header); nullopt otherwise.
std::optional<serving::User> FrontProxyUser(const FrontProxyConfig& config, const controller::HttpsRequest& request);

}  // namespace rota::visibility
