#include "https_server.h"

#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "self_signed.h"

namespace rota::controller {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

struct Answer {
  bool handshake = false;  // the server's certificate verified against the CA given
  int status = 0;
};

// GET `path` from 127.0.0.1:`port` over TLS, trusting only `ca_pem`.
Answer Get(int port, const std::string& ca_pem, const std::string& path, const std::string& authorization) {
  asio::io_context io;
  asio::ssl::context ctx(asio::ssl::context::tls_client);
  ctx.add_certificate_authority(asio::buffer(ca_pem));
  ctx.set_verify_mode(asio::ssl::verify_peer);
  beast::ssl_stream<beast::tcp_stream> stream(io, ctx);
  beast::get_lowest_layer(stream).connect({asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)});
  beast::error_code ec;
  stream.handshake(asio::ssl::stream_base::client, ec);
  if (ec) return {};
  http::request<http::empty_body> req{http::verb::get, path, 11};
  req.set(http::field::host, "127.0.0.1");
  if (!authorization.empty()) req.set(http::field::authorization, authorization);
  http::write(stream, req);
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::read(stream, buffer, res);
  return {true, static_cast<int>(res.result_int())};
}

serving::ServingCert MakeCert() {
  auto made = serving::MakeServingCert({"localhost", {}, true, std::chrono::system_clock::now()});
  EXPECT_TRUE(made.ok()) << made.status().message();
  return *made;
}

// A server of one GET route, /metrics, on `opts` (which hold the certificate).
Result<std::unique_ptr<HttpsServer>> StartMetricsServer(const HttpsOptions& opts) {
  return HttpsServer::Start(
      opts,
      {{"/metrics",
        [] {
          return HttpReply{200, "text/plain", "m 1\n"};
        }}},
      [](const std::string&, std::string_view) {
        return HttpReply{405, "text/plain", ""};
      },
      [](auto&&, auto&&) {});
}

TEST(HttpsServerTest, ServesACertificateFromMemoryAndSwapsItForNewConnections) {
  const serving::ServingCert a = MakeCert(), b = MakeCert();
  HttpsOptions opts;
  opts.address = "127.0.0.1:0";
  opts.cert_pem = a.cert_pem;
  opts.key_pem = a.key_pem;
  auto server = StartMetricsServer(opts);
  ASSERT_TRUE(server.ok()) << server.status().message();
  const int port = (*server)->port();
  EXPECT_EQ(Get(port, a.ca_pem, "/metrics", "").status, 200);
  EXPECT_FALSE(Get(port, b.ca_pem, "/metrics", "").handshake) << "another CA does not vouch for it";

  EXPECT_FALSE((*server)->SetCertificate(b.cert_pem, a.key_pem).ok()) << "a certificate with another's key";
  EXPECT_EQ(Get(port, a.ca_pem, "/metrics", "").status, 200) << "a bad pair keeps the one before";
  ASSERT_TRUE((*server)->SetCertificate(b.cert_pem, b.key_pem).ok());
  EXPECT_EQ(Get(port, b.ca_pem, "/metrics", "").status, 200);
  EXPECT_FALSE(Get(port, a.ca_pem, "/metrics", "").handshake);
}

TEST(HttpsServerTest, TheAuthorizerSeesEveryGetWithItsAuthorizationHeader) {
  const serving::ServingCert a = MakeCert();
  HttpsOptions opts;
  opts.address = "127.0.0.1:0";
  opts.cert_pem = a.cert_pem;
  opts.key_pem = a.key_pem;
  std::vector<std::string> seen;
  opts.authorize = [&seen](const std::string& path, std::string_view authorization) -> std::optional<HttpReply> {
    seen.push_back(path + " " + std::string(authorization));
    if (authorization == "Bearer good") return std::nullopt;
    return HttpReply{401, "text/plain", "no\n"};
  };
  opts.threads = 1;
  auto server = StartMetricsServer(opts);
  ASSERT_TRUE(server.ok());
  EXPECT_EQ(Get((*server)->port(), a.ca_pem, "/metrics", "").status, 401);
  EXPECT_EQ(Get((*server)->port(), a.ca_pem, "/metrics", "Bearer good").status, 200);
  EXPECT_EQ(Get((*server)->port(), a.ca_pem, "/nothing", "Bearer good").status, 404);
  (*server)->Stop();
  EXPECT_EQ(seen, (std::vector<std::string>{"/metrics ", "/metrics Bearer good"}));
}

}  // namespace
}  // namespace rota::controller
