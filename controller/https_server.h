#pragma once

// The HTTPS server behind rota's admission webhooks (Boost.Asio + Beast + OpenSSL).
//
// - TLS 1.2 or newer, certificate and key from PEM files that are re-read when they change
//   (cert-manager rotates them in place); a bad new pair is logged and the old one kept.
// - HTTP/1.1 with keep-alive, several threads, a size limit on request bodies and a deadline on
//   every read and write; an oversized or malformed request gets a 400 and a log line.
// - GET on a path in `get_routes` (/healthz), POST on any other path goes to `post`.
// - Certificate and key may instead be given as PEM text (a certificate rota made itself); they
//   are then never reloaded. `authorize`, when set, sees every GET first and may refuse it.

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "http_server.h"
#include "rota/admission/status.h"
#include "rota/apiclient/clock.h"

namespace rota::controller {

// A GET request as the catch-all route sees it.
struct HttpsRequest {
  std::string path;   // without the query
  std::string query;  // after '?', undecoded; "" if none
  std::string authorization;
  // The common name of the client's certificate when it sent one that `client_ca_pem` signed
  // (verified by the handshake); "" when it sent none.
  std::string client_cn;
  std::multimap<std::string, std::string> headers;  // names in lower case
};

struct HttpsOptions {
  std::string address;  // "127.0.0.1:9443", ":9443", port 0 for any free port
  std::string cert_file, key_file;
  std::string cert_pem, key_pem;  // used instead of the files when cert_pem is set
  std::string name = "webhook";   // what the log lines call this server
  // Called before a GET route with the path and the Authorization header ("" if none); a reply
  // (401, 403, 500) is sent instead of the route's.
  std::function<std::optional<HttpReply>(const std::string& path, std::string_view authorization)> authorize;
  // When set (PEM), clients may present a certificate, which must be signed by one of these CAs
  // (a handshake with any other fails); a client without one is served as before.
  std::string client_ca_pem;
  // GET on a path with no route goes here (404 without it).
  std::function<HttpReply(const HttpsRequest&)> get_any;
  size_t max_body_bytes = 4 << 20;
  std::chrono::milliseconds io_timeout{10000};
  int threads = 2;
  // How often the certificate files are checked for a change (on the next connection after).
  std::chrono::milliseconds reload_check{1000};
  apiclient::Clock* clock = &apiclient::RealClock();  // for the reload checks
};

class HttpsServer {
 public:
  using PostHandler = std::function<HttpReply(const std::string& path, std::string_view body)>;
  using GetHandler = std::function<HttpReply()>;
  using Logger = std::function<void(const std::string& level, const std::string& message)>;

  static Result<std::unique_ptr<HttpsServer>> Start(HttpsOptions options, std::map<std::string, GetHandler> get_routes,
                                                    PostHandler post, Logger log);
  ~HttpsServer();
  int port() const;
  // Times a changed certificate was loaded (for tests and logs).
  int reloads() const;
  // Serves this certificate (PEM, as cert_pem and key_pem) to connections from now on; an error
  // (a bad pair) keeps the one before.
  Status SetCertificate(const std::string& cert_pem, const std::string& key_pem);
  void Stop();

 private:
  struct Impl;
  explicit HttpsServer(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace rota::controller
