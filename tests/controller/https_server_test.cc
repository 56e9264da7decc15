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

// GET `path` from 127.0.0.1:`port` over TLS, trusting only `ca_pem`; with `client` (a
// certificate and key), presenting it.
Answer Get(int port, const std::string& ca_pem, const std::string& path, const std::string& authorization,
           const serving::ServingCert* client = nullptr, std::string* body = nullptr) {
  asio::io_context io;
  asio::ssl::context ctx(asio::ssl::context::tls_client);
  ctx.add_certificate_authority(asio::buffer(ca_pem));
  if (client) {
    ctx.use_certificate_chain(asio::buffer(client->cert_pem));
    ctx.use_private_key(asio::buffer(client->key_pem), asio::ssl::context::pem);
  }
  ctx.set_verify_mode(asio::ssl::verify_peer);
  beast::ssl_stream<beast::tcp_stream> stream(io, ctx);
  beast::get_lowest_layer(stream).connect({asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)});
  beast::error_code ec;
  stream.handshake(asio::ssl::stream_base::client, ec);
  if (ec) return {};
  http::request<http::empty_body> req{http::verb::get, path, 11};
  req.set(http::field::host, "127.0.0.1");
  if (!authorization.empty()) req.set(http::field::authorization, authorization);
  // (Under TLS 1.3 a server refuses a client's certificate after the client's handshake is done:
  // the refusal comes with the first read, and counts as a failed handshake here.)
  http::write(stream, req, ec);
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  if (!ec) http::read(stream, buffer, res, ec);
  if (ec) return {};
  if (body) *body = res.body();
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

TEST(HttpsServerTest, AClientCertificateOfTheClientCaNamesTheCaller) {
  // As the apiserver's front proxy calls an aggregated API server: a client certificate signed by
  // the requestheader CA, and the user in headers. The catch-all route sees the verified name,
  // the query and the headers; a client without a certificate is served with no name; one whose
  // certificate another CA signed is refused at the handshake.
  const serving::ServingCert serving = MakeCert();
  auto proxy = serving::MakeServingCert(
      {"front-proxy-client", {}, false, std::chrono::system_clock::now(), std::chrono::hours(24), "", "", true});
  auto stranger = serving::MakeServingCert(
      {"front-proxy-client", {}, false, std::chrono::system_clock::now(), std::chrono::hours(24), "", "", true});
  ASSERT_TRUE(proxy.ok() && stranger.ok());
  HttpsOptions opts;
  opts.address = "127.0.0.1:0";
  opts.cert_pem = serving.cert_pem;
  opts.key_pem = serving.key_pem;
  opts.client_ca_pem = proxy->ca_pem;
  opts.get_any = [](const HttpsRequest& r) {
    auto user = r.headers.find("x-remote-user");
    return HttpReply{
        200, "text/plain",
        r.path + "?" + r.query + " cn=" + r.client_cn + " user=" + (user == r.headers.end() ? "" : user->second)};
  };
  auto server = StartMetricsServer(opts);
  ASSERT_TRUE(server.ok()) << server.status().message();
  const int port = (*server)->port();
  std::string body;
  EXPECT_EQ(Get(port, serving.ca_pem, "/apis/x?limit=1", "", &*proxy, &body).status, 200);
  EXPECT_EQ(body, "/apis/x?limit=1 cn=front-proxy-client user=");
  EXPECT_EQ(Get(port, serving.ca_pem, "/apis/x", "", nullptr, &body).status, 200);
  EXPECT_EQ(body, "/apis/x? cn= user=");
  EXPECT_FALSE(Get(port, serving.ca_pem, "/apis/x", "", &*stranger).handshake);
  EXPECT_EQ(Get(port, serving.ca_pem, "/metrics", "", &*proxy).status, 200) << "routes still come first";
}

TEST(HttpsServerTest, AHandlerThatThrowsGetsA500) {
  const serving::ServingCert a = MakeCert();
  HttpsOptions opts;
  opts.address = "127.0.0.1:0";
  opts.cert_pem = a.cert_pem;
  opts.key_pem = a.key_pem;
  opts.get_any = [](const HttpsRequest&) -> HttpReply { throw std::runtime_error("unexpected input"); };
  auto server = StartMetricsServer(opts);
  ASSERT_TRUE(server.ok());
  EXPECT_EQ(Get((*server)->port(), a.ca_pem, "/apis/x", "").status, 500);
  EXPECT_EQ(Get((*server)->port(), a.ca_pem, "/metrics", "").status, 200) << "and it serves on";
}

}  // namespace
}  // namespace rota::controller
