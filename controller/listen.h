#pragma once

// Shared by the HTTP and HTTPS servers (private to controller/): listening on an address, and
// accepting connections for as long as the server runs.

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "rota/admission/status.h"

namespace rota::controller {

// Opens, binds and listens on "host:port" (":port" for every interface, port 0 for any free port).
Status Listen(boost::asio::ip::tcp::acceptor& acceptor, const std::string& address);

// How long to wait before accepting again after an accept failed (out of file descriptors, most
// likely): a server that stopped accepting would be down for good, and one that retried at once
// would spin on the error.
inline constexpr std::chrono::milliseconds kAcceptRetry{100};

// Accepts connections on `acceptor` until it is closed, each on an executor from `executor()`,
// and hands each to `serve`. After an error other than the acceptor's closing, it waits
// kAcceptRetry and accepts again.
template <typename MakeExecutor, typename Serve>
void AcceptForever(boost::asio::ip::tcp::acceptor& acceptor, MakeExecutor executor, Serve serve) {
  acceptor.async_accept(
      executor(), [&acceptor, executor, serve](boost::system::error_code ec, boost::asio::ip::tcp::socket socket) {
        if (ec == boost::asio::error::operation_aborted || !acceptor.is_open()) return;  // closed
        if (!ec) {
          serve(std::move(socket));
          AcceptForever(acceptor, executor, serve);
          return;
        }
        auto timer = std::make_shared<boost::asio::steady_timer>(acceptor.get_executor(), kAcceptRetry);
        timer->async_wait([&acceptor, executor, serve, timer](boost::system::error_code wait) {
          if (!wait) AcceptForever(acceptor, executor, serve);
        });
      });
}

}  // namespace rota::controller
