#include "support/tcp_proxy.h"

#include <gtest/gtest.h>

#include <utility>  // (before Asio, which uses std::exchange)

#include <boost/asio.hpp>
#include <chrono>
#include <thread>

namespace rota::testing {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using namespace std::chrono_literals;

// An upstream that accepts one connection: the test reads and writes its end directly.
struct Upstream {
  asio::io_context io;
  tcp::acceptor acceptor{io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};
  tcp::socket peer{io};
  uint16_t port() const { return acceptor.local_endpoint().port(); }
};

std::string ReadSome(tcp::socket& s, size_t n) {
  std::string buf(n, '\0');
  asio::read(s, asio::buffer(buf));
  return buf;
}

TEST(TcpProxyTest, ForwardsBothWaysHoldsBytesWhileStalledAndResetsOnCut) {
  Upstream up;
  auto proxy = TcpProxy::Start("127.0.0.1", up.port());
  asio::io_context io;
  tcp::socket client(io);
  client.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), proxy->port()));
  up.acceptor.accept(up.peer);

  asio::write(client, asio::buffer(std::string("ping")));
  EXPECT_EQ(ReadSome(up.peer, 4), "ping");
  asio::write(up.peer, asio::buffer(std::string("pong")));
  EXPECT_EQ(ReadSome(client, 4), "pong");

  proxy->Stall();
  asio::write(client, asio::buffer(std::string("held")));
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(up.peer.available(), 0u) << "a stalled proxy forwards nothing";
  proxy->Resume();
  EXPECT_EQ(ReadSome(up.peer, 4), "held") << "and everything once it resumes";

  EXPECT_EQ(proxy->open_connections(), 1u);
  proxy->CutAll();
  char byte;
  boost::system::error_code ec;
  client.read_some(asio::buffer(&byte, 1), ec);
  EXPECT_TRUE(ec == asio::error::connection_reset || ec == asio::error::eof) << ec.message();
  EXPECT_EQ(proxy->open_connections(), 0u);
}

}  // namespace
}  // namespace rota::testing
