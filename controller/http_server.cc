#include "http_server.h"

#include "listen.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace rota::controller {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct HttpServer::Impl {
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::map<std::string, Handler> routes;
  std::chrono::milliseconds io_timeout{10000};
  std::thread thread;

  void Accept() {
    AcceptForever(
        acceptor, [this] { return io.get_executor(); },
        [this](tcp::socket socket) { Serve(std::make_shared<beast::tcp_stream>(std::move(socket))); });
  }

  // One request per connection. A client has `io_timeout` to send its request and take the
  // reply: idle connections must not hold the server's file descriptors.
  void Serve(std::shared_ptr<beast::tcp_stream> stream) {
    auto buffer = std::make_shared<beast::flat_buffer>();
    auto req = std::make_shared<http::request<http::string_body>>();
    stream->expires_after(io_timeout);
    http::async_read(*stream, *buffer, *req, [this, stream, buffer, req](beast::error_code ec, size_t) {
      if (ec) return;  // (the stream closes its socket when the last handler lets it go)
      auto res = std::make_shared<http::response<http::string_body>>(Reply(*req));
      stream->expires_after(io_timeout);
      http::async_write(*stream, *res, [stream, res](beast::error_code, size_t) {
        beast::error_code ignored;
        stream->socket().shutdown(tcp::socket::shutdown_send, ignored);
      });
    });
  }

  http::response<http::string_body> Reply(const http::request<http::string_body>& req) {
    http::response<http::string_body> res;
    res.version(req.version());
    res.keep_alive(false);
    std::string target(req.target());
    target = target.substr(0, target.find('?'));
    auto route = routes.find(target);
    if (req.method() != http::verb::get && req.method() != http::verb::head) {
      res.result(http::status::method_not_allowed);
      res.body() = "only GET\n";
    } else if (route == routes.end()) {
      res.result(http::status::not_found);
      res.body() = "not found: " + target + "\n";
    } else {
      HttpReply reply = route->second();
      res.result(static_cast<http::status>(reply.status));
      res.set(http::field::content_type, reply.content_type);
      res.body() = std::move(reply.body);
    }
    res.prepare_payload();
    return res;
  }
};

Status Listen(tcp::acceptor& acceptor, const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) return InvalidArgument("\"" + address + "\" is not host:port");
  std::string host = address.substr(0, colon);
  int port = -1;
  try {
    port = std::stoi(address.substr(colon + 1));
  } catch (...) {
  }
  if (port < 0 || port > 65535) return InvalidArgument("\"" + address + "\" has no valid port");
  if (host.empty()) host = "0.0.0.0";
  beast::error_code ec;
  tcp::endpoint ep(asio::ip::make_address(host, ec), static_cast<unsigned short>(port));
  if (ec) return InvalidArgument("\"" + host + "\" is not an IP address");
  acceptor.open(ep.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(ep, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return InvalidArgument("cannot listen on " + address + ": " + ec.message());
  return Status::Ok();
}

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const std::string& address, std::map<std::string, Handler> routes,
                                                      std::chrono::milliseconds io_timeout) {
  auto impl = std::make_unique<Impl>();
  impl->routes = std::move(routes);
  impl->io_timeout = io_timeout;
  if (Status s = Listen(impl->acceptor, address); !s.ok()) return s;
  const int bound = impl->acceptor.local_endpoint().port();
  impl->Accept();
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->io.run(); });
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl), bound));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl, int port) : impl_(std::move(impl)), port_(port) {}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Stop() {
  if (!impl_ || !impl_->thread.joinable()) return;
  asio::post(impl_->io, [this] {
    beast::error_code ignored;
    impl_->acceptor.close(ignored);
    impl_->io.stop();
  });
  impl_->thread.join();
}

}  // namespace rota::controller
