#include "http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace rota::controller {
namespace {

// A TCP connection to 127.0.0.1:port whose reads give up after `timeout`; -1 when none can be made.
int Connect(int port, std::chrono::seconds timeout = std::chrono::seconds(3)) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  timeval tv{static_cast<time_t>(timeout.count()), 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// GET `path`; the whole reply, or "" when none came.
std::string Get(int port, const std::string& path) {
  const int fd = Connect(port);
  if (fd < 0) return "";
  const std::string req = "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n";
  if (send(fd, req.data(), req.size(), 0) != static_cast<ssize_t>(req.size())) {
    close(fd);
    return "";
  }
  std::string reply;
  char buf[4096];
  for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;) reply.append(buf, static_cast<size_t>(n));
  close(fd);
  return reply;
}

std::map<std::string, HttpServer::Handler> Healthz() {
  return {{"/healthz", [] { return HttpReply{200, "text/plain; charset=utf-8", "ok\n"}; }}};
}

// Connections that never send a request are closed after the timeout, and do not keep others
// from being served.
TEST(HttpServerTest, IdleConnectionsAreClosedAfterTheTimeout) {
  auto server = HttpServer::Start("127.0.0.1:0", Healthz(), std::chrono::milliseconds(300));
  ASSERT_TRUE(server.ok()) << server.status().message();
  std::vector<int> idle;
  for (int i = 0; i < 20; ++i) idle.push_back(Connect((*server)->port()));
  EXPECT_NE(Get((*server)->port(), "/healthz").find("200 OK"), std::string::npos);
  for (int fd : idle) {
    ASSERT_GE(fd, 0);
    char c;
    EXPECT_EQ(recv(fd, &c, 1, 0), 0) << "the server closes an idle connection (not the client's read timeout)";
    close(fd);
  }
}

// Out of file descriptors, accept fails; the server accepts again once some are free, rather
// than stopping for good (liveness and readiness probes would then fail forever). Run in a child
// process, whose file limit can be lowered without touching the test runner's.
TEST(HttpServerTest, KeepsAcceptingAfterRunningOutOfFileDescriptors) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(20);  // (a hang fails the test rather than the run)
    auto server = HttpServer::Start("127.0.0.1:0", Healthz(), std::chrono::seconds(5));
    if (!server.ok()) _exit(3);
    const int port = (*server)->port();
    size_t open_fds = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++open_fds;
    rlimit limit{};
    getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = open_fds + 6;
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) _exit(4);
    // Connect until no descriptor is left: the server's accepts fail past that point.
    std::vector<int> clients;
    for (int fd; (fd = Connect(port)) >= 0;) clients.push_back(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    for (int fd : clients) close(fd);
    // Descriptors are free again: a probe is answered.
    const bool answered = Get(port, "/healthz").find("200 OK") != std::string::npos;
    _exit(answered ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child was killed (signal " << WTERMSIG(status) << ")";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: /healthz not answered after the accept errors; 3-4: set-up failed";
}

}  // namespace
}  // namespace rota::controller
