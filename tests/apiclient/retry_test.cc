// The client's retry and rate-limit behaviour, against a scripted HTTP server on 127.0.0.1 (not an
// apiserver: it only replays status lines, so that 429 and 5xx can be produced on demand).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <deque>
#include <mutex>
#include <thread>

#include "rota/apiclient/client.h"

namespace rota::apiclient {
namespace {

// Serves one scripted response per connection, in order; records request lines. With
// `hold_open`, a connection stays open after its response, silent, until the server stops.
class ScriptedServer {
 public:
  explicit ScriptedServer(std::deque<std::string> responses, bool hold_open = false)
      : responses_(std::move(responses)), hold_open_(hold_open) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    listen(fd_, 16);
    thread_ = std::thread([this] { Serve(); });
  }
  ~ScriptedServer() {
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  int port() const { return port_; }
  std::vector<std::string> requests() {
    std::lock_guard l(mu_);
    return requests_;
  }

 private:
  void Serve() {
    while (!stop_) {
      int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string req;
      char buf[4096];
      while (req.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = read(c, buf, sizeof buf);
        if (n <= 0) break;
        req.append(buf, static_cast<size_t>(n));
      }
      std::string response;
      {
        std::lock_guard l(mu_);
        requests_.push_back(req.substr(0, req.find("\r\n")));
        response =
            responses_.empty() ? "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n" : responses_.front();
        if (!responses_.empty()) responses_.pop_front();
      }
      ssize_t unused = write(c, response.data(), response.size());
      (void)unused;
      while (hold_open_ && !stop_) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      close(c);
    }
  }
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::deque<std::string> responses_;
  bool hold_open_ = false;
  std::vector<std::string> requests_;
  std::thread thread_;
};

std::string Response(int code, const std::string& reason, const std::string& body,
                     const std::string& extra_headers = "") {
  return "HTTP/1.1 " + std::to_string(code) + " " + reason + "\r\nContent-Type: application/json\r\n" + extra_headers +
         "Connection: close\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

const std::string kStatus429 =
    R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"slow down","reason":"TooManyRequests","code":429})";

std::unique_ptr<Client> ClientFor(const ScriptedServer& s, FakeClock& clock, double qps = 0) {
  RestConfig c;
  c.server = "http://127.0.0.1:" + std::to_string(s.port());
  c.qps = qps;
  c.burst = 1;
  return std::move(Client::Create(c, clock).value());
}

// Advances the fake clock whenever the client sleeps on it, recording how long it slept.
class SleepDriver {
 public:
  explicit SleepDriver(FakeClock& clock) : clock_(clock), thread_([this] { Run(); }) {}
  ~SleepDriver() {
    stop_ = true;
    thread_.join();
  }
  Clock::Duration slept() const { return std::chrono::milliseconds(slept_ms_.load()); }

 private:
  void Run() {
    while (!stop_) {
      if (clock_.Waiters() > 0) {
        slept_ms_ += 100;  // before the advance, which may end the client's sleep at once
        clock_.Advance(std::chrono::milliseconds(100));
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  FakeClock& clock_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> slept_ms_{0};
  std::thread thread_;
};

TEST(ClientRetryTest, RetriesTooManyRequestsHonouringRetryAfter) {
  ScriptedServer server({Response(429, "Too Many Requests", kStatus429, "Retry-After: 2\r\n"),
                         Response(200, "OK", R"({"kind":"ConfigMap","metadata":{"name":"x"}})")});
  FakeClock clock;
  auto client = ClientFor(server, clock);
  SleepDriver driver(clock);
  auto r = client->Get(resources::kConfigMaps, "ns", "x");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ((*r)["metadata"]["name"], "x");
  EXPECT_EQ(server.requests().size(), 2u);
  EXPECT_GE(driver.slept(), std::chrono::seconds(2));  // waited as Retry-After said
}

TEST(ClientRetryTest, PipelineResendsTooManyRequestsOnlyOnceItsRetryAfterIsDue) {
  ScriptedServer server({Response(429, "Too Many Requests", kStatus429, "Retry-After: 2\r\n"),
                         Response(200, "OK", R"({"kind":"ConfigMap","metadata":{"name":"x"}})")});
  FakeClock clock;
  auto client = ClientFor(server, clock);
  auto pipeline = client->NewPipeline();
  pipeline->Patch(42, resources::kConfigMaps, "ns", "x", PatchType::kMerge, {{"data", {{"v", "1"}}}});
  // The 429 comes back; the patch stays in flight, not resent while the clock stands still.
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(pipeline->Poll(std::chrono::milliseconds(50)).empty());
  EXPECT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(pipeline->in_flight(), 1u);
  clock.Advance(std::chrono::seconds(2));
  std::vector<std::pair<uint64_t, ApiResult<Json>>> done;
  for (int i = 0; i < 100 && done.empty(); ++i) done = pipeline->Poll(std::chrono::milliseconds(50));
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].first, 42u);
  ASSERT_TRUE(done[0].second.ok()) << done[0].second.error().ToString();
  EXPECT_EQ((*done[0].second)["metadata"]["name"], "x");
  EXPECT_EQ(server.requests().size(), 2u);
  EXPECT_EQ(server.requests()[1], server.requests()[0]);  // the same PATCH again
  EXPECT_EQ(pipeline->in_flight(), 0u);
}

TEST(ClientRetryTest, GivesUpWithTheStatusAfterRepeated5xxAndDoesNotRetry4xx) {
  const std::string unavailable =
      R"({"kind":"Status","status":"Failure","message":"etcd is down","reason":"ServiceUnavailable","code":503})";
  std::deque<std::string> five;
  for (int i = 0; i < 5; ++i) five.push_back(Response(503, "Service Unavailable", unavailable, "Retry-After: 1\r\n"));
  ScriptedServer server(five);
  FakeClock clock;
  auto client = ClientFor(server, clock);
  SleepDriver driver(clock);
  auto r = client->Get(resources::kConfigMaps, "ns", "x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, 503);
  EXPECT_EQ(r.error().message, "etcd is down");
  EXPECT_EQ(r.error().retry, Retry::kBackoff);
  EXPECT_EQ(server.requests().size(), 5u);

  ScriptedServer bad(
      {Response(422, "Unprocessable Entity",
                R"({"kind":"Status","message":"spec.x: Invalid value","reason":"Invalid","code":422})")});
  auto client2 = ClientFor(bad, clock);
  auto invalid = client2->Create(resources::kConfigMaps, "ns", Json::object());
  ASSERT_FALSE(invalid.ok());
  EXPECT_EQ(invalid.error().reason, "Invalid");
  EXPECT_EQ(invalid.error().retry, Retry::kNo);
  EXPECT_EQ(bad.requests().size(), 1u);
}

TEST(ClientRetryTest, ClientSideRateLimitSpacesRequests) {
  std::deque<std::string> ok;
  for (int i = 0; i < 5; ++i) ok.push_back(Response(200, "OK", "{}"));
  ScriptedServer server(ok);
  FakeClock clock;
  auto client = ClientFor(server, clock, /*qps=*/2);  // burst 1
  SleepDriver driver(clock);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(client->Get(resources::kConfigMaps, "ns", "x").ok());
  // The first request uses the burst; four more at 2 per second need 2 s of waiting.
  EXPECT_GE(driver.slept(), std::chrono::milliseconds(1900));
  EXPECT_EQ(server.requests()[0], "GET /api/v1/namespaces/ns/configmaps/x HTTP/1.1");
}

TEST(ClientRetryTest, AClientOfOneAttemptDoesNotResend) {
  const std::string unavailable =
      R"({"kind":"Status","status":"Failure","message":"etcd is down","reason":"ServiceUnavailable","code":503})";
  ScriptedServer server({Response(503, "Service Unavailable", unavailable, "Retry-After: 1\r\n"),
                         Response(200, "OK", R"({"kind":"Lease","metadata":{"name":"x"}})")});
  FakeClock clock;
  RestConfig c;
  c.server = "http://127.0.0.1:" + std::to_string(server.port());
  c.attempts = 1;  // as the Lease's client: the elector tries again on its own schedule
  auto client = std::move(Client::Create(c, clock).value());
  auto r = client->Get(resources::kLeases, "ns", "x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, 503);
  EXPECT_EQ(server.requests().size(), 1u);
}

// A watch whose connection stays open but carries nothing more ends after the idle timeout, as if
// the server had ended it: the caller gets the last resourceVersion seen and resumes from there.
TEST(ClientWatchTest, AWatchSilentForTheIdleTimeoutEndsWithItsLastVersion) {
  const std::string event =
      R"({"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"7"}}})"
      "\n";
  char size[16];
  std::snprintf(size, sizeof size, "%zx", event.size());
  ScriptedServer server({"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
                         std::string(size) + "\r\n" + event + "\r\n"},
                        /*hold_open=*/true);
  RestConfig c;
  c.server = "http://127.0.0.1:" + std::to_string(server.port());
  c.watch_idle_timeout = std::chrono::seconds(1);
  auto client = std::move(Client::Create(c).value());
  std::vector<std::string> seen;
  WatchOptions o;
  o.resource_version = "5";
  o.timeout_seconds = 5;  // (without the idle timeout, the watch ends after 65 s and the test fails)
  auto watched = client->Watch(resources::kConfigMaps, "ns", o, [&](WatchEvent& e) {
    seen.push_back(e.type + " " + e.object["metadata"].value("name", ""));
    return true;
  });
  ASSERT_TRUE(watched.ok()) << watched.error().ToString();
  EXPECT_TRUE(watched->idle);
  EXPECT_EQ(watched->resource_version, "7");
  EXPECT_EQ(seen, std::vector<std::string>{"ADDED a"});
  EXPECT_EQ(client->idle_watches_ended(), 1);
}

}  // namespace
}  // namespace rota::apiclient
