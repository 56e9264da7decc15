#pragma once

// A TCP proxy on 127.0.0.1 for fault tests: it forwards every connection to one upstream address
// and can stall (hold every byte, both ways, on open and new connections), cut (reset every open
// connection) and freeze (silence every open connection). It sees only bytes, so it works under
// TLS. One thread runs it.

#include <cstdint>
#include <memory>
#include <string>

namespace rota::testing {

class TcpProxy {
 public:
  // Listens on an ephemeral port of 127.0.0.1; forwards to upstream_host:upstream_port.
  static std::unique_ptr<TcpProxy> Start(const std::string& upstream_host, uint16_t upstream_port);
  ~TcpProxy();
  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;

  uint16_t port() const;
  // Bytes read from either side are held, not forwarded, until Resume. Connections stay open.
  void Stall();
  void Resume();
  // Resets every connection open now; later ones are forwarded as usual.
  void CutAll();
  // Every connection open now stays open but carries nothing more, either way: what arrives is
  // read and dropped, as a path through a middlebox that lost its state looks to both ends (TCP
  // keepalive is still answered). Later connections are forwarded as usual.
  void FreezeAll();
  // Connections open now (after the calls above have taken effect).
  size_t open_connections() const;

 private:
  struct Impl;
  explicit TcpProxy(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rota::testing
