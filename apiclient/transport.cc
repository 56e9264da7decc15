#include "transport.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace rota::apiclient {
namespace {

struct CallState {
  const HttpRequest* req;
  HttpResponse* resp;
  CURL* curl;
};

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* st = static_cast<CallState*>(user);
  std::string line(data, size * n);
  const size_t colon = line.find(':');
  if (line.rfind("HTTP/", 0) == 0) st->resp->headers.clear();  // a new response (after 100 or redirect)
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n')) value.pop_back();
    st->resp->headers[name] = value;
  }
  return size * n;
}

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* st = static_cast<CallState*>(user);
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
  return 0;
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
  for (const auto& [what, path] : {std::pair{"certificate-authority", config.ca_file},
                                   std::pair{"client-certificate", config.client_cert_file},
                                   std::pair{"client-key", config.client_key_file},
                                   std::pair{"tokenFile", config.token_file}}) {
    if (!path.empty() && !std::filesystem::exists(path)) {
      return InvalidArgument(std::string(what) + " file \"" + path + "\" does not exist");
    }
  }
  const bool has_cert = !config.client_cert_file.empty() || !config.client_cert_data.empty();
  const bool has_key = !config.client_key_file.empty() || !config.client_key_data.empty();
  if (has_cert != has_key) {
    return InvalidArgument("a client certificate and its key must be given together");
  }
  return std::unique_ptr<Transport>(new Transport(config));
}

Transport::~Transport() {
  for (void* c : pool_) curl_easy_cleanup(static_cast<CURL*>(c));
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

HttpResponse Transport::Perform(const HttpRequest& req) {
  HttpResponse resp;
  CURL* curl = static_cast<CURL*>(Acquire());
  if (!curl) {
    resp.transport_error = "libcurl could not create a handle";
    return resp;
  }
  CallState st{&req, &resp, curl};
  const std::string url = config_.server + req.path_and_query;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  if (req.method == "HEAD") curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_HTTP_VERSION, config_.http2 ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, req.timeout_ms);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, config_.user_agent.c_str());
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &st);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &st);
  if (req.stop) {
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, OnProgress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &st);
  }
  if (!req.body.empty() || req.method == "POST" || req.method == "PUT" || req.method == "PATCH") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, req.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  }
  // TLS: verify the server unless told not to; client certificate if configured.
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, config_.insecure ? 0L : 1L);
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, config_.insecure ? 0L : 2L);
  curl_blob ca{const_cast<char*>(config_.ca_data.data()), config_.ca_data.size(), CURL_BLOB_NOCOPY};
  if (!config_.ca_data.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO_BLOB, &ca);
  else if (!config_.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, config_.ca_file.c_str());
  curl_blob cert{const_cast<char*>(config_.client_cert_data.data()), config_.client_cert_data.size(), CURL_BLOB_NOCOPY};
  curl_blob key{const_cast<char*>(config_.client_key_data.data()), config_.client_key_data.size(), CURL_BLOB_NOCOPY};
  if (!config_.client_cert_data.empty()) {
    curl_easy_setopt(curl, CURLOPT_SSLCERT_BLOB, &cert);
    curl_easy_setopt(curl, CURLOPT_SSLCERTTYPE, "PEM");
  } else if (!config_.client_cert_file.empty()) {
    curl_easy_setopt(curl, CURLOPT_SSLCERT, config_.client_cert_file.c_str());
  }
  if (!config_.client_key_data.empty()) {
    curl_easy_setopt(curl, CURLOPT_SSLKEY_BLOB, &key);
    curl_easy_setopt(curl, CURLOPT_SSLKEYTYPE, "PEM");
  } else if (!config_.client_key_file.empty()) {
    curl_easy_setopt(curl, CURLOPT_SSLKEY, config_.client_key_file.c_str());
  }
  curl_slist* headers = nullptr;
  for (const auto& h : req.headers) headers = curl_slist_append(headers, h.c_str());
  const std::string token = BearerToken();
  std::string auth;
  if (!token.empty()) {
    auth = "Authorization: Bearer " + token;
    headers = curl_slist_append(headers, auth.c_str());
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);

  const CURLcode rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &resp.status);
  long connects = 0;
  if (curl_easy_getinfo(curl, CURLINFO_NUM_CONNECTS, &connects) == CURLE_OK) connections_opened_ += connects;
  if (rc != CURLE_OK && !resp.stopped) {
    resp.transport_error = std::string(curl_easy_strerror(rc)) + " (" + req.method + " " + url + ")";
    if (rc != CURLE_WRITE_ERROR && rc != CURLE_OPERATION_TIMEDOUT) resp.status = 0;
  }
  curl_slist_free_all(headers);
  Release(curl);
  return resp;
}

}  // namespace rota::apiclient
