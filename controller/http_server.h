#pragma once

// A small HTTP/1.1 server (Boost.Asio + Beast) for rota's /metrics, /healthz and /readyz. One
// io_context on one thread owns all sockets; handlers are called on it and must be quick.

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "rota/admission/status.h"

namespace rota::controller {

struct HttpReply {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

class HttpServer {
 public:
  using Handler = std::function<HttpReply()>;

  // Listens on `address` ("127.0.0.1:8080", ":8080" for every interface, port 0 for any free
  // port); GET on a path in `routes` calls its handler, anything else is 404. A connection that
  // has not sent its request (or taken its reply) within `io_timeout` is closed.
  static Result<std::unique_ptr<HttpServer>> Start(const std::string& address, std::map<std::string, Handler> routes,
                                                   std::chrono::milliseconds io_timeout = std::chrono::seconds(10));
  ~HttpServer();
  int port() const { return port_; }
  void Stop();

 private:
  struct Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl, int port);
  std::unique_ptr<Impl> impl_;
  int port_;
};

}  // namespace rota::controller
