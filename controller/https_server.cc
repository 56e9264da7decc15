#include "https_server.h"

#include "listen.h"

#include <sys/stat.h>

#include <openssl/pem.h>
#include <openssl/x509.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cctype>
#include <mutex>
#include <thread>
#include <vector>

namespace rota::controller {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

// What identifies a version of a file: a rotation changes one of these.
struct FileStamp {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};

FileStamp Stamp(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {st.st_dev, st.st_ino, st.st_size, static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

Result<std::shared_ptr<ssl::context>> NewContext(const std::string& client_ca_pem) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  // TLS 1.2 and 1.3 only.
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_compression | ssl::context::single_dh_use);
  if (!client_ca_pem.empty()) {
    beast::error_code ec;
    ctx->add_certificate_authority(asio::buffer(client_ca_pem), ec);
    if (ec) return InvalidArgument("client CA: " + ec.message());
    ctx->set_verify_mode(ssl::verify_peer, ec);  // (a client without a certificate is let through)
    // Names the CA in the handshake, so that a client with several certificates picks its own.
    STACK_OF(X509_NAME)* names = sk_X509_NAME_new_null();
    BIO* bio = BIO_new_mem_buf(client_ca_pem.data(), static_cast<int>(client_ca_pem.size()));
    while (X509* ca = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
      sk_X509_NAME_push(names, X509_NAME_dup(X509_get_subject_name(ca)));
      X509_free(ca);
    }
    BIO_free(bio);
    SSL_CTX_set_client_CA_list(ctx->native_handle(), names);
  }
  return ctx;
}

Result<std::shared_ptr<ssl::context>> LoadContext(const std::string& cert, const std::string& key,
                                                  const std::string& client_ca_pem) {
  auto made = NewContext(client_ca_pem);
  if (!made.ok()) return made.status();
  auto ctx = *made;
  beast::error_code ec;
  ctx->use_certificate_chain_file(cert, ec);
  if (ec) return InvalidArgument("certificate " + cert + ": " + ec.message());
  ctx->use_private_key_file(key, ssl::context::pem, ec);
  if (ec) return InvalidArgument("key " + key + ": " + ec.message());
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    return InvalidArgument("key " + key + " does not match certificate " + cert);
  }
  return ctx;
}

Result<std::shared_ptr<ssl::context>> PemContext(const std::string& cert, const std::string& key,
                                                 const std::string& client_ca_pem) {
  auto made = NewContext(client_ca_pem);
  if (!made.ok()) return made.status();
  auto ctx = *made;
  beast::error_code ec;
  ctx->use_certificate_chain(asio::buffer(cert), ec);
  if (ec) return InvalidArgument("certificate: " + ec.message());
  ctx->use_private_key(asio::buffer(key), ssl::context::pem, ec);
  if (ec) return InvalidArgument("key: " + ec.message());
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) return InvalidArgument("key does not match certificate");
  return ctx;
}

// The common name of the peer's certificate, when it sent one that the handshake verified.
std::string VerifiedClientName(SSL* ssl) {
  X509* cert = SSL_get1_peer_certificate(ssl);
  if (!cert) return "";
  std::string cn;
  if (SSL_get_verify_result(ssl) == X509_V_OK) {
    char buf[256] = {};
    if (X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, buf, sizeof buf) > 0) cn = buf;
  }
  X509_free(cert);
  return cn;
}

}  // namespace

// Sessions and handlers point at the Impl without owning it: Stop() joins the threads, and the
// io_context (a member) destroys whatever handlers are left before the rest of the Impl goes.
struct HttpsServer::Impl {
  HttpsOptions options;
  std::map<std::string, GetHandler> get_routes;
  PostHandler post;
  Logger log;
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::vector<std::thread> threads;
  int port = 0;

  std::mutex mu;  // guards the context and the stamps
  std::shared_ptr<ssl::context> context;
  FileStamp cert_stamp, key_stamp;
  std::chrono::steady_clock::time_point last_check;
  std::atomic<int> reloads{0};

  // The context for a new connection, re-reading the files if they changed since last time.
  std::shared_ptr<ssl::context> Context() {
    std::lock_guard<std::mutex> l(mu);
    const auto now = options.clock->Now();
    if (!options.cert_pem.empty() || now - last_check < options.reload_check) return context;
    last_check = now;
    const FileStamp c = Stamp(options.cert_file), k = Stamp(options.key_file);
    if (c == cert_stamp && k == key_stamp) return context;
    auto fresh = LoadContext(options.cert_file, options.key_file, options.client_ca_pem);
    if (!fresh.ok()) {
      // Mid-rotation (one file written, not the other) or a bad pair: keep serving the old one.
      log("warn", options.name + " certificate changed but cannot be used yet (keeping the previous one): " +
                      fresh.status().message());
      return context;
    }
    cert_stamp = c;
    key_stamp = k;
    context = *fresh;
    ++reloads;
    log("info", options.name + " certificate reloaded from " + options.cert_file);
    return context;
  }

  void Accept() {
    AcceptForever(
        acceptor, [this] { return asio::make_strand(io); }, [this](tcp::socket socket) { Serve(std::move(socket)); });
  }

  struct Session : std::enable_shared_from_this<Session> {
    Impl* server;
    std::shared_ptr<ssl::context> ctx;  // kept alive for the stream
    beast::ssl_stream<beast::tcp_stream> stream;
    beast::flat_buffer buffer;
    std::optional<http::request_parser<http::string_body>> parser;
    http::response<http::string_body> res;
    std::string peer;

    Session(Impl* s, std::shared_ptr<ssl::context> c, tcp::socket socket)
        : server(s), ctx(std::move(c)), stream(std::move(socket), *ctx) {
      beast::error_code ec;
      auto ep = beast::get_lowest_layer(stream).socket().remote_endpoint(ec);
      peer = ec ? "?" : ep.address().to_string() + ":" + std::to_string(ep.port());
    }

    void Start() {
      beast::get_lowest_layer(stream).expires_after(server->options.io_timeout);
      stream.async_handshake(ssl::stream_base::server, [self = shared_from_this()](beast::error_code ec) {
        if (ec) {
          self->server->log(
              "debug", self->server->options.name + " TLS handshake with " + self->peer + " failed: " + ec.message());
          return;
        }
        self->Read();
      });
    }

    void Read() {
      parser.emplace();
      parser->body_limit(server->options.max_body_bytes);
      parser->header_limit(16 * 1024);
      beast::get_lowest_layer(stream).expires_after(server->options.io_timeout);
      http::async_read(stream, buffer, *parser,
                       [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
    }

    void OnRead(beast::error_code ec) {
      if (ec == http::error::end_of_stream || ec == asio::ssl::error::stream_truncated) return Close();
      if (ec == http::error::body_limit || ec == http::error::header_limit) {
        server->log("warn", server->options.name + " request from " + peer + " refused: " + ec.message());
        return Reply(
            400,
            "request too large: bodies are limited to " + std::to_string(server->options.max_body_bytes) + " bytes\n",
            false);
      }
      if (ec == beast::error::timeout) return Close();
      if (ec) {
        if (ec.category() == beast::error_code(http::error::bad_target).category()) {
          server->log("warn", server->options.name + " request from " + peer + " is not valid HTTP: " + ec.message());
          return Reply(400, "bad request: " + ec.message() + "\n", false);
        }
        return Close();
      }
      auto& req = parser->get();
      std::string target(req.target());
      const size_t question = target.find('?');
      const std::string query = question == std::string::npos ? "" : target.substr(question + 1);
      target = target.substr(0, question);
      HttpReply reply = Handle(req, target, query);
      Reply(reply.status, std::move(reply.body), req.keep_alive(), reply.content_type);
    }

    // The route's reply; a handler that throws (a bug, or input it did not expect) gets a 500
    // and a log line, never the process.
    HttpReply Handle(const http::request<http::string_body>& req, const std::string& target, const std::string& query) {
      try {
        if (req.method() == http::verb::get || req.method() == http::verb::head) {
          if (server->options.get_any && !server->get_routes.count(target))
            return server->options.get_any(Request(req, target, query));
          const auto auth = req[http::field::authorization];
          return Get(target, std::string_view(auth.data(), auth.size()));
        }
        if (req.method() == http::verb::post) return server->post(target, req.body());
        return {405, "text/plain; charset=utf-8", "use POST for webhooks, GET for /healthz\n"};
      } catch (const std::exception& e) {
        server->log("error", server->options.name + " request " + target + " from " + peer + " failed: " + e.what());
        return {500, "text/plain; charset=utf-8", "internal error\n"};
      }
    }

    HttpsRequest Request(const http::request<http::string_body>& req, const std::string& path,
                         const std::string& query) {
      HttpsRequest r{
          path, query, std::string(req[http::field::authorization]), VerifiedClientName(stream.native_handle()), {}};
      for (const auto& field : req) {
        std::string name(field.name_string());
        std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
        r.headers.emplace(std::move(name), std::string(field.value()));
      }
      return r;
    }

    HttpReply Get(const std::string& target, std::string_view authorization) {
      auto route = server->get_routes.find(target);
      if (route == server->get_routes.end()) return {404, "text/plain; charset=utf-8", "not found: " + target + "\n"};
      if (server->options.authorize) {
        if (auto refused = server->options.authorize(target, authorization)) return std::move(*refused);
      }
      return route->second();
    }

    void Reply(int status, std::string body, bool keep_alive, const std::string& type = "text/plain; charset=utf-8") {
      res = {};
      res.version(11);
      res.result(static_cast<http::status>(status));
      res.set(http::field::content_type, type);
      res.keep_alive(keep_alive);
      res.body() = std::move(body);
      res.prepare_payload();
      beast::get_lowest_layer(stream).expires_after(server->options.io_timeout);
      http::async_write(stream, res, [self = shared_from_this(), keep_alive](beast::error_code ec, size_t) {
        if (ec) return;
        if (keep_alive) return self->Read();
        self->Close();
      });
    }

    void Close() {
      beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(2));
      stream.async_shutdown([self = shared_from_this()](beast::error_code) {
        beast::error_code ignored;
        beast::get_lowest_layer(self->stream).socket().shutdown(tcp::socket::shutdown_both, ignored);
      });
    }
  };

  void Serve(tcp::socket socket) {
    auto ctx = Context();
    std::make_shared<Session>(this, std::move(ctx), std::move(socket))->Start();
  }
};

Result<std::unique_ptr<HttpsServer>> HttpsServer::Start(HttpsOptions options,
                                                        std::map<std::string, GetHandler> get_routes, PostHandler post,
                                                        Logger log) {
  auto impl = std::make_shared<Impl>();
  auto ctx = options.cert_pem.empty() ? LoadContext(options.cert_file, options.key_file, options.client_ca_pem)
                                      : PemContext(options.cert_pem, options.key_pem, options.client_ca_pem);
  if (!ctx.ok()) return ctx.status();
  impl->context = *ctx;
  impl->cert_stamp = Stamp(options.cert_file);
  impl->key_stamp = Stamp(options.key_file);
  impl->last_check = options.clock->Now();
  impl->options = std::move(options);
  impl->get_routes = std::move(get_routes);
  impl->post = std::move(post);
  impl->log = std::move(log);
  if (Status s = Listen(impl->acceptor, impl->options.address); !s.ok()) return s;
  impl->port = impl->acceptor.local_endpoint().port();
  impl->Accept();
  for (int i = 0; i < std::max(1, impl->options.threads); ++i) {
    impl->threads.emplace_back([raw = impl.get()] { raw->io.run(); });
  }
  return std::unique_ptr<HttpsServer>(new HttpsServer(std::move(impl)));
}

HttpsServer::HttpsServer(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpsServer::~HttpsServer() { Stop(); }
int HttpsServer::port() const { return impl_->port; }
int HttpsServer::reloads() const { return impl_->reloads.load(); }

Status HttpsServer::SetCertificate(const std::string& cert_pem, const std::string& key_pem) {
  std::lock_guard<std::mutex> l(impl_->mu);
  auto ctx = PemContext(cert_pem, key_pem, impl_->options.client_ca_pem);
  if (!ctx.ok()) return ctx.status();
  impl_->options.cert_pem = cert_pem;  // (from now on the files, if any, are not read again)
  impl_->context = *ctx;
  ++impl_->reloads;
  return Status::Ok();
}

void HttpsServer::Stop() {
  if (!impl_ || impl_->threads.empty()) return;
  Impl* impl = impl_.get();
  asio::post(impl->acceptor.get_executor(), [impl] {
    beast::error_code ignored;
    impl->acceptor.close(ignored);
  });
  impl->io.stop();
  for (auto& t : impl_->threads) t.join();
  impl_->threads.clear();
}

}  // namespace rota::controller
