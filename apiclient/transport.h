#pragma once

// HTTP over libcurl for the Client (private to apiclient). Keeps a pool of curl easy handles so
// that connections (and their TLS sessions, HTTP/2 where offered) are reused across requests.

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "rota/admission/status.h"
#include "rota/apiclient/config.h"

namespace rota::apiclient {

struct HttpRequest {
  std::string method = "GET";
  std::string path_and_query;  // appended to the server URL
  std::vector<std::string> headers;
  std::string body;
  long timeout_ms = 30000;  // whole request; 0 = none
  // Streaming: called with each chunk of a 2xx body instead of collecting it; return false to
  // stop. A non-2xx body is always collected.
  std::function<bool(const char* data, size_t len)> on_data;
  const std::atomic<bool>* stop = nullptr;  // checked about once a second while streaming
};

struct HttpResponse {
  long status = 0;                            // 0: the request did not complete
  std::string body;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string transport_error;                // why it did not complete, or ""
  bool stopped = false;                       // ended by on_data or `stop`
};

class Transport {
 public:
  static Result<std::unique_ptr<Transport>> Create(const RestConfig& config);
  ~Transport();
  HttpResponse Perform(const HttpRequest& req);
  // Connections opened so far (each costs a TCP and TLS handshake; a request on a kept one none).
  int64_t connections_opened() const { return connections_opened_.load(); }

 private:
  explicit Transport(RestConfig config) : config_(std::move(config)) {}
  void* Acquire();           // a CURL*, from the pool or new
  void Release(void* curl);  // back to the pool
  std::string BearerToken();

  RestConfig config_;
  std::mutex mu_;
  std::vector<void*> pool_;
  std::atomic<int64_t> connections_opened_{0};
  // The token file is re-read at most once a minute (it rotates).
  std::string token_cache_;
  std::chrono::steady_clock::time_point token_read_{};
};

}  // namespace rota::apiclient
