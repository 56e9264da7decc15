#pragma once

// HTTP over libcurl for the Client (private to apiclient). Keeps a pool of curl easy handles so
// that connections (and their TLS sessions, HTTP/2 where offered) are reused across requests.

#include <atomic>
#include <chrono>
#include <cstdint>
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
  // Streaming: the request ends (HttpResponse::idle) when no byte of the reply arrives for this
  // long, checked about once a second. 0: never.
  long idle_timeout_ms = 0;
};

struct HttpResponse {
  long status = 0;  // 0: the request did not complete
  std::string body;
  // Of the headers, only what the client reads: Retry-After ("" when absent). Keeping every
  // header cost each reply a few allocations apiece, for nothing.
  std::string retry_after;
  std::string transport_error;  // why it did not complete, or ""
  bool stopped = false;         // ended by on_data or `stop`
  bool idle = false;            // ended by idle_timeout_ms
};

class Transport {
 public:
  static Result<std::unique_ptr<Transport>> Create(const RestConfig& config);
  ~Transport();
  HttpResponse Perform(HttpRequest req);

  struct Call;  // one request in flight (transport.cc)

  // Many requests at once, driven by the one thread that owns it (Wake excepted): they go as
  // streams of one HTTP/2 connection where the server offers it (else one connection each), and
  // a single poll serves them all, where Perform costs each request a blocked thread, its own
  // reads and a wake-up. For a thread that keeps many writes going. Not for streaming requests.
  class Multi {
   public:
    explicit Multi(Transport& transport);
    ~Multi();  // abandons the requests in flight
    Multi(const Multi&) = delete;
    Multi& operator=(const Multi&) = delete;
    // Starts `req`; its response comes out of Poll with `id`.
    void Start(uint64_t id, HttpRequest req);
    // Waits up to `timeout` (or until Wake) for started requests to finish; returns those that did.
    std::vector<std::pair<uint64_t, HttpResponse>> Poll(std::chrono::milliseconds timeout);
    // From any thread: makes a Poll in progress (or the next one) return at once.
    void Wake();
    size_t in_flight() const { return calls_.size(); }

   private:
    Transport& transport_;
    void* multi_;                                              // CURLM*
    std::map<void*, std::unique_ptr<Call>> calls_;             // by CURL*
    std::vector<void*> idle_;                                  // easy handles to reuse
    std::vector<std::pair<uint64_t, HttpResponse>> finished_;  // not yet returned by Poll
  };
  // Connections opened so far (each costs a TCP and TLS handshake; a request on a kept one none).
  int64_t connections_opened() const { return connections_opened_.load(); }

 private:
  explicit Transport(RestConfig config);
  void Prepare(Call& c);           // sets c.curl up for c.req
  void Finish(Call& c, int code);  // fills c.resp in from libcurl's result code
  void* Acquire();                 // a CURL*, from the pool or new
  void Release(void* curl);        // back to the pool
  void DropPooled();               // closes every pooled handle and the connection it keeps
  std::string BearerToken();

  RestConfig config_;
  // Requests go to base_url_ + path. With a tls-server-name, that URL names the server by it (for
  // SNI and for checking its certificate), and connect_to_ (libcurl's CURLOPT_CONNECT_TO) sends
  // the connection to the server's own host and port.
  std::string base_url_;
  void* connect_to_ = nullptr;  // curl_slist*, owned
  std::mutex mu_;
  std::vector<void*> pool_;
  std::atomic<int64_t> connections_opened_{0};
  // The token file is re-read at most once a minute (it rotates).
  std::string token_cache_;
  std::chrono::steady_clock::time_point token_read_{};
};

}  // namespace rota::apiclient
