#include "support/tcp_proxy.h"

#include <array>
#include <utility>  // (before Asio, which uses std::exchange)

#include <boost/asio.hpp>
#include <functional>
#include <future>
#include <thread>
#include <vector>

namespace rota::testing {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

// One proxied connection: two pumps (client to upstream, upstream to client), each reading into
// its own buffer and writing it out before reading again. Everything runs on the proxy's thread.
class Session : public std::enable_shared_from_this<Session> {
 public:
  using Gate = std::function<void(std::function<void()>)>;
  Session(tcp::socket client, const Gate& gate)
      : client_(std::move(client)), upstream_(client_.get_executor()), gate_(gate) {}

  void Start(const tcp::endpoint& upstream) {
    upstream_.async_connect(upstream, [self = shared_from_this()](boost::system::error_code ec) {
      if (ec) return self->Close();
      self->Pump(self->client_, self->upstream_, self->up_);
      self->Pump(self->upstream_, self->client_, self->down_);
    });
  }

  // Closes both sockets with a reset (SO_LINGER 0), as a broken network path would look.
  void Close() {
    boost::system::error_code ignored;
    for (tcp::socket* s : {&client_, &upstream_}) {
      if (!s->is_open()) continue;
      s->set_option(asio::socket_base::linger(true, 0), ignored);
      s->close(ignored);
    }
  }
  bool open() const { return client_.is_open(); }
  void Freeze() { frozen_ = true; }

 private:
  using Buffer = std::array<char, 16384>;
  void Pump(tcp::socket& from, tcp::socket& to, Buffer& buf) {
    from.async_read_some(asio::buffer(buf),
                         [self = shared_from_this(), &from, &to, &buf](boost::system::error_code ec, size_t n) {
                           if (self->frozen_) {  // what came is dropped; an end is not passed on either
                             if (!ec) self->Pump(from, to, buf);
                             return;
                           }
                           if (ec) return self->Close();
                           self->gate_([self, &from, &to, &buf, n] {
                             asio::async_write(to, asio::buffer(buf.data(), n),
                                               [self, &from, &to, &buf](boost::system::error_code ec, size_t) {
                                                 if (ec) return self->Close();
                                                 self->Pump(from, to, buf);
                                               });
                           });
                         });
  }

  tcp::socket client_, upstream_;
  Buffer up_{}, down_{};
  const Gate& gate_;
  bool frozen_ = false;
};

}  // namespace

struct TcpProxy::Impl {
  asio::io_context io;
  tcp::acceptor acceptor{io};
  tcp::endpoint upstream;
  std::thread thread;
  // Touched only on the proxy's thread.
  bool stalled = false;
  std::vector<std::function<void()>> held;
  std::vector<std::weak_ptr<Session>> sessions;
  Session::Gate gate = [this](std::function<void()> step) {
    if (stalled)
      held.push_back(std::move(step));
    else
      step();
  };

  void Accept() {
    acceptor.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted) return;
      if (!ec) {
        auto session = std::make_shared<Session>(std::move(socket), gate);
        sessions.push_back(session);
        gate([this, session] { session->Start(upstream); });
      }
      Accept();
    });
  }

  // Runs `fn` on the proxy's thread and waits for it.
  template <typename F>
  auto OnThread(F fn) {
    std::packaged_task<decltype(fn())()> task(std::move(fn));
    auto done = task.get_future();
    asio::post(io, [&task] { task(); });
    return done.get();
  }
};

TcpProxy::TcpProxy(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

std::unique_ptr<TcpProxy> TcpProxy::Start(const std::string& upstream_host, uint16_t upstream_port) {
  auto impl = std::make_unique<Impl>();
  impl->upstream = tcp::endpoint(asio::ip::make_address(upstream_host), upstream_port);
  const tcp::endpoint local(asio::ip::make_address("127.0.0.1"), 0);
  impl->acceptor.open(local.protocol());
  impl->acceptor.set_option(tcp::acceptor::reuse_address(true));
  impl->acceptor.bind(local);
  impl->acceptor.listen();
  impl->Accept();
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->io.run(); });
  return std::unique_ptr<TcpProxy>(new TcpProxy(std::move(impl)));
}

TcpProxy::~TcpProxy() {
  impl_->OnThread([this] {
    boost::system::error_code ignored;
    impl_->acceptor.close(ignored);
    for (auto& weak : impl_->sessions)
      if (auto s = weak.lock()) s->Close();
    impl_->held.clear();
    return 0;
  });
  impl_->io.stop();
  impl_->thread.join();
}

uint16_t TcpProxy::port() const { return impl_->acceptor.local_endpoint().port(); }

void TcpProxy::Stall() {
  impl_->OnThread([this] { return impl_->stalled = true; });
}

void TcpProxy::Resume() {
  impl_->OnThread([this] {
    impl_->stalled = false;
    for (auto& step : impl_->held) asio::post(impl_->io, std::move(step));
    impl_->held.clear();
    return 0;
  });
}

void TcpProxy::CutAll() {
  impl_->OnThread([this] {
    for (auto& weak : impl_->sessions)
      if (auto s = weak.lock()) s->Close();
    impl_->sessions.clear();
    return 0;
  });
}

void TcpProxy::FreezeAll() {
  impl_->OnThread([this] {
    for (auto& weak : impl_->sessions)
      if (auto s = weak.lock()) s->Freeze();
    return 0;
  });
}

size_t TcpProxy::open_connections() const {
  return impl_->OnThread([this] {
    std::erase_if(impl_->sessions, [](const std::weak_ptr<Session>& w) {
      auto s = w.lock();
      return !s || !s->open();
    });
    return impl_->sessions.size();
  });
}

}  // namespace rota::testing
