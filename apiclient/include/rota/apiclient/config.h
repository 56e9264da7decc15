#pragma once

// How to reach and authenticate to the apiserver: from kubeconfig files (as kubectl reads them)
// or from inside a pod.

#include <chrono>
#include <string>

#include "rota/admission/status.h"

namespace rota::apiclient {

struct RestConfig {
  std::string server;  // https://host:port
  // Trust: the CA as a PEM file or PEM data; TLS verification is on unless `insecure`.
  std::string ca_file;
  std::string ca_data;
  bool insecure = false;
  std::string tls_server_name;
  // Credentials: a bearer token (inline or from a file, re-read as it rotates) and/or a client
  // certificate and key (files or PEM data).
  std::string token;
  std::string token_file;
  std::string client_cert_file, client_key_file;
  std::string client_cert_data, client_key_data;
  // Client-side limits (client-go's defaults are 5 QPS / 10 burst; a controller wants more).
  double qps = 50;
  int burst = 100;
  std::chrono::milliseconds timeout{std::chrono::seconds(30)};
  // Sends of one request at most: the first, then resends on 429, on 5xx with Retry-After, and
  // (for requests safe to repeat) on connection errors and timeouts.
  int attempts = 5;
  // A watch that receives nothing for this long, not even the bookmark the apiserver sends
  // about once a minute, is taken for a dead connection: it is ended and resumed from the last
  // resourceVersion seen. 0: only the watch's own timeout (5 to 10 minutes) ends it.
  std::chrono::milliseconds watch_idle_timeout{std::chrono::seconds(90)};
  std::string user_agent = "rota";
  // HTTP/2 where the server offers it, else HTTP/1.1. The loaders below turn it off when
  // DISABLE_HTTP2 is set in the environment, as client-go does.
  bool http2 = true;
};

// Reads kubeconfig like kubectl: `paths` is a colon-separated list (default: $KUBECONFIG, else
// ~/.kube/config); the files are merged, the first file to set a map entry or current-context
// wins. `context` empty means the current context. Relative file paths in a kubeconfig are
// relative to that file's directory. Errors name the file and the field.
Result<RestConfig> LoadKubeconfig(const std::string& paths = "", const std::string& context = "");

// The pod's service account: KUBERNETES_SERVICE_HOST/PORT, the token and CA under
// /var/run/secrets/kubernetes.io/serviceaccount (or `root` in tests).
Result<RestConfig> InClusterConfig(const std::string& root = "/var/run/secrets/kubernetes.io/serviceaccount");

}  // namespace rota::apiclient
