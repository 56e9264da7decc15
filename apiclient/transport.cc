#include "transport.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

namespace rota::apiclient {
namespace {

struct CallState {
  const HttpRequest* req;
  HttpResponse* resp;
  CURL* curl;
  std::chrono::steady_clock::time_point last_byte;  // of the reply (for idle_timeout_ms)
};

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* st = static_cast<CallState*>(user);
  st->last_byte = std::chrono::steady_clock::now();
  const std::string_view line(data, size * n);
  if (line.starts_with("HTTP/")) st->resp->retry_after.clear();  // a new response (after 100 or redirect)
  constexpr std::string_view kRetryAfter = "retry-after:";
  if (line.size() > kRetryAfter.size() &&
      std::equal(kRetryAfter.begin(), kRetryAfter.end(), line.begin(),
                 [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); })) {
    std::string_view value = line.substr(kRetryAfter.size());
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' '))
      value.remove_suffix(1);
    st->resp->retry_after = value;
  }
  return size * n;
}

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* st = static_cast<CallState*>(user);
  st->last_byte = std::chrono::steady_clock::now();
  long code = 0;
  curl_easy_getinfo(st->curl, CURLINFO_RESPONSE_CODE, &code);
  if (st->req->on_data && code >= 200 && code < 300) {
    if (!st->req->on_data(data, size * n)) {
      st->resp->stopped = true;
      return 0;  // aborts the transfer
    }
    return size * n;
  }
  st->resp->body.append(data, size * n);
  return size * n;
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* st = static_cast<CallState*>(user);
  if (st->req->stop && st->req->stop->load()) {
    st->resp->stopped = true;
    return 1;  // aborts the transfer
  }
  if (st->req->idle_timeout_ms > 0 &&
      std::chrono::steady_clock::now() - st->last_byte >= std::chrono::milliseconds(st->req->idle_timeout_ms)) {
    st->resp->idle = true;
    return 1;
  }
  return 0;
}

// Whether an http(s):// URL names this machine (127.0.0.0/8, ::1 or localhost).
bool IsLoopback(const std::string& url) {
  const size_t start = url.find("://") + 3;
  std::string host = url.substr(start, url.find_first_of("/", start) - start);
  if (host.rfind("[", 0) == 0) return host.rfind("[::1]", 0) == 0;
  host = host.substr(0, host.find(':'));
  return host == "localhost" || host.rfind("127.", 0) == 0;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

Result<std::unique_ptr<Transport>> Transport::Create(const RestConfig& config) {
  static const CURLcode init = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (init != CURLE_OK) return Status(StatusCode::kInternal, "libcurl failed to initialise");
  if (config.server.rfind("https://", 0) != 0 && config.server.rfind("http://", 0) != 0) {
    return InvalidArgument("server \"" + config.server + "\" must start with https:// (or http://)");
  }
  for (const auto& [what, path] :
       {std::pair{"certificate-authority", config.ca_file}, std::pair{"client-certificate", config.client_cert_file},
        std::pair{"client-key", config.client_key_file}, std::pair{"tokenFile", config.token_file}}) {
    if (!path.empty() && !std::filesystem::exists(path)) {
      return InvalidArgument(std::string(what) + " file \"" + path + "\" does not exist");
    }
  }
  if (config.server.rfind("http://", 0) == 0 && (!config.token.empty() || !config.token_file.empty()) &&
      !IsLoopback(config.server)) {
    return InvalidArgument("server \"" + config.server +
                           "\" is plain http://: the bearer token would cross the network in clear text; use https://");
  }
  const bool has_cert = !config.client_cert_file.empty() || !config.client_cert_data.empty();
  const bool has_key = !config.client_key_file.empty() || !config.client_key_data.empty();
  if (has_cert != has_key) {
    return InvalidArgument("a client certificate and its key must be given together");
  }
  return std::unique_ptr<Transport>(new Transport(config));
}

Transport::Transport(RestConfig config) : config_(std::move(config)), base_url_(config_.server) {
  if (config_.tls_server_name.empty() || config_.server.rfind("https://", 0) != 0) return;
  // https://HOST[:PORT] -> https://NAME:PORT, connecting to HOST:PORT.
  const std::string authority = config_.server.substr(8, config_.server.find('/', 8) - 8);
  const size_t colon = authority.rfind(':');
  const bool has_port = colon != std::string::npos && authority.find(']', colon) == std::string::npos;
  const std::string host = has_port ? authority.substr(0, colon) : authority;
  const std::string port = has_port ? authority.substr(colon + 1) : "443";
  base_url_ = "https://" + config_.tls_server_name + ":" + port + config_.server.substr(8 + authority.size());
  const std::string route = config_.tls_server_name + ":" + port + ":" + host + ":" + port;
  connect_to_ = curl_slist_append(nullptr, route.c_str());
}

Transport::~Transport() {
  for (void* c : pool_) curl_easy_cleanup(static_cast<CURL*>(c));
  curl_slist_free_all(static_cast<curl_slist*>(connect_to_));
}

void* Transport::Acquire() {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!pool_.empty()) {
      void* c = pool_.back();
      pool_.pop_back();
      return c;
    }
  }
  return curl_easy_init();
}

void Transport::Release(void* curl) {
  curl_easy_reset(static_cast<CURL*>(curl));  // keeps the connection and TLS session caches
  std::lock_guard<std::mutex> l(mu_);
  pool_.push_back(curl);
}

void Transport::DropPooled() {
  std::vector<void*> pooled;
  {
    std::lock_guard<std::mutex> l(mu_);
    pooled.swap(pool_);
  }
  for (void* c : pooled) curl_easy_cleanup(static_cast<CURL*>(c));
}

std::string Transport::BearerToken() {
  if (config_.token_file.empty()) return config_.token;
  std::lock_guard<std::mutex> l(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (token_cache_.empty() || now - token_read_ > std::chrono::minutes(1)) {
    std::string t = ReadFile(config_.token_file);
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
    token_cache_ = t;
    token_read_ = now;
  }
  return token_cache_;
}

// One request and everything libcurl points into while it is in flight.
struct Transport::Call {
  uint64_t id = 0;  // a Multi's name for it
  HttpRequest req;
  HttpResponse resp;
  CallState st{};
  CURL* curl = nullptr;
  std::string url, auth;
  curl_slist* headers = nullptr;
  curl_blob ca{}, cert{}, key{};
};

void Transport::Prepare(Call& c) {
  CURL* curl = c.curl;
  const HttpRequest& req = c.req;
  c.st = CallState{&c.req, &c.resp, curl, std::chrono::steady_clock::now()};
  c.url = base_url_ + req.path_and_query;
  curl_easy_setopt(curl, CURLOPT_URL, c.url.c_str());
  curl_easy_setopt(curl, CURLOPT_CONNECT_TO, static_cast<curl_slist*>(connect_to_));
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  if (req.method == "HEAD") curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_HTTP_VERSION, config_.http2 ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1);
  // In a Multi, a request waits for the connection being opened to multiplex over it rather
  // than opening one of its own.
  curl_easy_setopt(curl, CURLOPT_PIPEWAIT, 1L);
  // Probes a silent connection every 30 s, as client-go's dialer does (libcurl's default is 60 s):
  // a watch whose peer is gone fails within minutes instead of waiting out its timeout.
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPIDLE, 30L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPINTVL, 30L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, req.timeout_ms);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, config_.user_agent.c_str());
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &c.st);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &c.st);
  if (req.stop || req.idle_timeout_ms > 0) {
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, OnProgress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &c.st);
  }
  if (!req.body.empty() || req.method == "POST" || req.method == "PUT" || req.method == "PATCH") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, req.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  }
  // TLS: verify the server unless told not to; client certificate if configured.
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, config_.insecure ? 0L : 1L);
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, config_.insecure ? 0L : 2L);
  c.ca = curl_blob{const_cast<char*>(config_.ca_data.data()), config_.ca_data.size(), CURL_BLOB_NOCOPY};
  if (!config_.ca_data.empty())
    curl_easy_setopt(curl, CURLOPT_CAINFO_BLOB, &c.ca);
  else if (!config_.ca_file.empty())
    curl_easy_setopt(curl, CURLOPT_CAINFO, config_.ca_file.c_str());
  c.cert =
      curl_blob{const_cast<char*>(config_.client_cert_data.data()), config_.client_cert_data.size(), CURL_BLOB_NOCOPY};
  c.key =
      curl_blob{const_cast<char*>(config_.client_key_data.data()), config_.client_key_data.size(), CURL_BLOB_NOCOPY};
  if (!config_.client_cert_data.empty()) {
    curl_easy_setopt(curl, CURLOPT_SSLCERT_BLOB, &c.cert);
    curl_easy_setopt(curl, CURLOPT_SSLCERTTYPE, "PEM");
  } else if (!config_.client_cert_file.empty()) {
    curl_easy_setopt(curl, CURLOPT_SSLCERT, config_.client_cert_file.c_str());
  }
  if (!config_.client_key_data.empty()) {
    curl_easy_setopt(curl, CURLOPT_SSLKEY_BLOB, &c.key);
    curl_easy_setopt(curl, CURLOPT_SSLKEYTYPE, "PEM");
  } else if (!config_.client_key_file.empty()) {
    curl_easy_setopt(curl, CURLOPT_SSLKEY, config_.client_key_file.c_str());
  }
  c.headers = nullptr;
  for (const auto& h : req.headers) c.headers = curl_slist_append(c.headers, h.c_str());
  const std::string token = BearerToken();
  if (!token.empty()) {
    c.auth = "Authorization: Bearer " + token;
    c.headers = curl_slist_append(c.headers, c.auth.c_str());
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, c.headers);
}

void Transport::Finish(Call& c, int code) {
  const CURLcode rc = static_cast<CURLcode>(code);
  curl_easy_getinfo(c.curl, CURLINFO_RESPONSE_CODE, &c.resp.status);
  long connects = 0;
  if (curl_easy_getinfo(c.curl, CURLINFO_NUM_CONNECTS, &connects) == CURLE_OK) connections_opened_ += connects;
  if (c.resp.idle) {
    const long ms = c.req.idle_timeout_ms;
    const std::string limit = ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
    c.resp.transport_error = "nothing received for " + limit + " (" + c.req.method + " " + c.url + ")";
  } else if (rc != CURLE_OK && !c.resp.stopped) {
    c.resp.transport_error = std::string(curl_easy_strerror(rc)) + " (" + c.req.method + " " + c.url + ")";
    if (rc != CURLE_WRITE_ERROR && rc != CURLE_OPERATION_TIMEDOUT) c.resp.status = 0;
  }
  curl_slist_free_all(c.headers);
  c.headers = nullptr;
}

HttpResponse Transport::Perform(HttpRequest req) {
  Call c;
  c.curl = static_cast<CURL*>(Acquire());
  if (!c.curl) {
    c.resp.transport_error = "libcurl could not create a handle";
    return c.resp;
  }
  c.req = std::move(req);  // (a Call owns its request, as a Multi's must)
  Prepare(c);
  const CURLcode rc = curl_easy_perform(c.curl);
  Finish(c, rc);
  if (c.resp.idle || (rc != CURLE_OK && !c.resp.stopped)) {
    // Its connection may be dead while looking open (a silent path; HTTP/2 keeps a connection
    // whose stream failed), and so may the idle ones kept over the same path: none is reused.
    curl_easy_cleanup(c.curl);
    DropPooled();
  } else {
    Release(c.curl);
  }
  return std::move(c.resp);
}

Transport::Multi::Multi(Transport& transport) : transport_(transport), multi_(curl_multi_init()) {
  // One connection, every request a stream of it, where the server speaks HTTP/2.
  curl_multi_setopt(multi_, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
  // Over HTTP/1.1 a connection per request in flight, all kept: libcurl's default keeps four per
  // request in flight at the time one is returned, which between bursts is none or one, and a
  // closed connection costs the next burst a TLS handshake per request.
  constexpr long kKeptConnections = 64;
  curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, kKeptConnections);
}

Transport::Multi::~Multi() {
  for (auto& [curl, call] : calls_) {
    curl_multi_remove_handle(multi_, curl);
    curl_slist_free_all(call->headers);
    curl_easy_cleanup(static_cast<CURL*>(curl));
  }
  for (void* curl : idle_) curl_easy_cleanup(static_cast<CURL*>(curl));
  curl_multi_cleanup(multi_);  // closes the connections it kept
}

void Transport::Multi::Start(uint64_t id, HttpRequest req) {
  auto call = std::make_unique<Call>();
  call->id = id;
  call->req = std::move(req);
  if (!idle_.empty()) {
    call->curl = static_cast<CURL*>(idle_.back());
    idle_.pop_back();
    curl_easy_reset(call->curl);
  } else {
    call->curl = curl_easy_init();
  }
  if (!call->curl) {
    call->resp.transport_error = "libcurl could not create a handle";
    finished_.emplace_back(id, std::move(call->resp));
    return;
  }
  transport_.Prepare(*call);
  if (CURLMcode mc = curl_multi_add_handle(multi_, call->curl); mc != CURLM_OK) {
    call->resp.transport_error = std::string("libcurl could not start the request: ") + curl_multi_strerror(mc);
    curl_slist_free_all(call->headers);
    idle_.push_back(call->curl);
    finished_.emplace_back(id, std::move(call->resp));
    return;
  }
  CURL* curl = call->curl;
  calls_.emplace(curl, std::move(call));
}

std::vector<std::pair<uint64_t, HttpResponse>> Transport::Multi::Poll(std::chrono::milliseconds timeout) {
  auto collect = [this] {
    int running = 0;
    curl_multi_perform(multi_, &running);
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      auto it = calls_.find(msg->easy_handle);
      if (it == calls_.end()) continue;
      Call& c = *it->second;
      transport_.Finish(c, msg->data.result);
      curl_multi_remove_handle(multi_, c.curl);
      idle_.push_back(c.curl);
      finished_.emplace_back(c.id, std::move(c.resp));
      calls_.erase(it);
    }
  };
  collect();
  if (finished_.empty()) {
    curl_multi_poll(multi_, nullptr, 0, static_cast<int>(timeout.count()), nullptr);
    collect();
  }
  std::vector<std::pair<uint64_t, HttpResponse>> out;
  out.swap(finished_);
  return out;
}

void Transport::Multi::Wake() { curl_multi_wakeup(multi_); }

}  // namespace rota::apiclient
