#pragma once

// Shared by the HTTP and HTTPS servers (private to controller/): opens, binds and listens on
// "host:port" (":port" for every interface, port 0 for any free port).

#include <boost/asio/ip/tcp.hpp>
#include <string>

#include "rota/admission/status.h"

namespace rota::controller {

Status Listen(boost::asio::ip::tcp::acceptor& acceptor, const std::string& address);

}  // namespace rota::controller
