#pragma once

// rota's Kubernetes REST client: verbs on any resource by group/version/resource, and watch
// streams, over libcurl (TLS by OpenSSL, HTTP/2 when the server offers it, connections reused).
// Errors keep the apiserver's Status and say what the caller should do next.
//
// Thread-safe: any thread may call any method; each call uses a pooled connection of its own.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "rota/admission/status.h"
#include "rota/apiclient/clock.h"
#include "rota/apiclient/config.h"

namespace rota::apiclient {

using Json = nlohmann::json;

// What a caller should do about a failed request (client-go's meaning of the codes).
enum class Retry {
  kNo,       // 4xx: the request itself is wrong, or forbidden
  kReread,   // 409 Conflict: read the object again and retry the change
  kRelist,   // 410 Gone: the resourceVersion is too old; list again
  kBackoff,  // 429, 5xx, timeouts, connection errors: wait and try again
};

// A failed request: the apiserver's Status when it sent one, else a transport error (code 0).
struct ApiError {
  int code = 0;         // HTTP status, 0 for a transport error
  std::string reason;   // Status.reason, e.g. "Conflict", "NotFound", "Forbidden"
  std::string message;  // Status.message, or the transport error
  Json details;         // Status.details, if any
  Retry retry = Retry::kNo;

  bool IsNotFound() const { return code == 404; }
  bool IsConflict() const { return code == 409; }
  bool IsAlreadyExists() const { return code == 409 && reason == "AlreadyExists"; }
  bool IsGone() const { return code == 410; }
  std::string ToString() const;
};

// A value, or the ApiError that prevented it.
template <typename T>
using ApiResult = Expected<T, ApiError>;

// A kind of resource: its API group ("" for core), version, plural name, and scope.
struct Resource {
  std::string group;
  std::string version;
  std::string plural;
  bool namespaced = true;

  static Resource Core(std::string plural, bool namespaced = true) { return {"", "v1", std::move(plural), namespaced}; }
};

namespace resources {
extern const Resource kNamespaces, kPods, kEvents, kConfigMaps, kJobs, kLeases;
extern const Resource kClusterQueues, kLocalQueues, kCohorts, kResourceFlavors, kWorkloadPriorityClasses, kWorkloads;
extern const Resource kBudgets;  // rota.dev/v1alpha1
}  // namespace resources

// How much of an object in a response the caller keeps. Parsing costs a controller CPU per byte
// kept: metadata.managedFields is often the largest part of an object and few callers read it, and
// a caller that only wants the new resourceVersion need not build the rest.
enum class Keep {
  kAll,
  kAllButManagedFields,  // metadata.managedFields is left out
  kMetadata,             // apiVersion, kind and metadata (without managedFields) only
  kNothing,              // the body is not parsed: a success returns an empty object
};

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  int64_t limit = 500;           // page size; 0 for no pagination
  std::string resource_version;  // "" = most recent (quorum read)
  Keep keep = Keep::kAll;        // of each item (kAll or kAllButManagedFields)
};

struct List {
  std::string resource_version;
  std::vector<Json> items;
};

struct WatchOptions {
  std::string resource_version;
  std::string label_selector;
  std::string field_selector;
  bool allow_bookmarks = true;
  int timeout_seconds = 300;  // the server ends the watch after this
  Keep keep = Keep::kAll;     // of each event's object (kAll or kAllButManagedFields)
  // Events are read in batches: bytes that arrive after the watch has gone idle (read all it
  // had) wait this long before they are read, so that the events arriving meanwhile are read
  // with one wake-up of the thread (and one poll, one TLS read) instead of one each. 0 reads each
  // event as it comes.
  std::chrono::milliseconds settle{0};
};

struct WatchEvent {
  std::string type;  // ADDED, MODIFIED, DELETED, BOOKMARK, ERROR
  Json object;
};

// How a watch ended without an error.
struct WatchEnd {
  std::string resource_version;  // the last one seen: resume from here
  bool idle = false;             // ended because nothing arrived for the watch idle timeout
};

enum class PatchType { kMerge, kJson, kStrategicMerge, kApply };

struct PatchOptions {
  std::string field_manager = "rota";
  bool force = false;       // server-side apply: take over conflicting fields
  std::string subresource;  // e.g. "status"
  Keep keep = Keep::kAll;   // of the object the server returns
};

struct DeleteOptions {
  std::string precondition_uid;
  std::string precondition_resource_version;
  std::string propagation_policy;  // Foreground, Background, Orphan; "" = the resource's default
};

class Transport;
struct HttpRequest;
struct HttpResponse;

class Client {
 public:
  // Checks the configuration (readable files, valid PEM) and prepares the transport.
  static Result<std::unique_ptr<Client>> Create(const RestConfig& config, Clock& clock = RealClock());
  ~Client();

  ApiResult<Json> Get(const Resource& r, const std::string& ns, const std::string& name,
                      const std::string& subresource = "");
  // Lists every page; the List's resourceVersion is the one to watch from.
  ApiResult<List> ListAll(const Resource& r, const std::string& ns, const ListOptions& options = {});
  // Lists page by page, handing each page's items to `on_page` (so a caller can keep a compact
  // form and drop the JSON); returns the list's resourceVersion.
  ApiResult<std::string> ListPages(const Resource& r, const std::string& ns, const ListOptions& options,
                                   const std::function<void(std::vector<Json>&& items)>& on_page);
  ApiResult<Json> Create(const Resource& r, const std::string& ns, const Json& object, Keep keep = Keep::kAll);
  // PUT with the object's metadata.resourceVersion: a stale one fails with 409 (Retry::kReread).
  ApiResult<Json> Update(const Resource& r, const std::string& ns, const Json& object,
                         const std::string& subresource = "");
  // `body` is JSON for merge, strategic-merge and apply patches, a JSON array for JSON patches.
  ApiResult<Json> Patch(const Resource& r, const std::string& ns, const std::string& name, PatchType type,
                        const Json& body, const PatchOptions& options = {});
  ApiResult<Json> Delete(const Resource& r, const std::string& ns, const std::string& name,
                         const DeleteOptions& options = {});

  // Streams watch events to `on_event` until the server ends the watch, `on_event` returns false,
  // `stop` becomes true, nothing arrives for the config's watch_idle_timeout, or an error occurs.
  // Returns the last resourceVersion seen (to resume from). An ERROR event with code 410 is
  // returned as an ApiError with Retry::kRelist. `on_event` may take the event's object (move it
  // out).
  ApiResult<WatchEnd> Watch(const Resource& r, const std::string& ns, const WatchOptions& options,
                            const std::function<bool(WatchEvent&)>& on_event, const std::atomic<bool>* stop = nullptr);

 private:
  struct Request;  // one request as the client sends it (client.cc); named here for Pipeline::Start

 public:
  // Requests sent from the one thread that owns it, many at a time: as streams of one HTTP/2
  // connection where the server offers it, served by a single poll. For a thread that keeps many
  // writes going (a thread per request costs each one a wake-up, its own reads and a connection).
  // Rate limit, authentication, errors and resends (429, 5xx with Retry-After) are the client's.
  class Pipeline {
   public:
    ~Pipeline();  // abandons the requests in flight
    Pipeline(const Pipeline&) = delete;
    Pipeline& operator=(const Pipeline&) = delete;
    // Starts a Patch (as Client::Patch); its result comes out of Poll with `id`, which must not
    // be in flight already. May wait for the client's rate limit.
    void Patch(uint64_t id, const Resource& r, const std::string& ns, const std::string& name, PatchType type,
               const Json& body, const PatchOptions& options = {});
    // Starts a Create (as Client::Create, never resent after a connection error: a POST may
    // have been applied).
    void Create(uint64_t id, const Resource& r, const std::string& ns, const Json& object, Keep keep = Keep::kAll);
    // Waits up to `timeout` (or until Wake) for requests to finish; returns those that did. A
    // request to be resent stays in flight until its last attempt.
    std::vector<std::pair<uint64_t, ApiResult<Json>>> Poll(std::chrono::milliseconds timeout);
    // From any thread: makes a Poll in progress (or the next one) return at once.
    void Wake();
    size_t in_flight() const;

   private:
    friend class Client;
    struct State;  // the transport's requests, and each one's attempts (client.cc)
    struct Pending;
    explicit Pipeline(Client& client);
    void Start(uint64_t id, Request req);
    void Send(uint64_t id, Pending& p);

    Client& client_;
    std::unique_ptr<State> state_;
  };
  std::unique_ptr<Pipeline> NewPipeline();

  // A raw GET of an absolute path (e.g. "/readyz"): the body.
  ApiResult<std::string> GetRaw(const std::string& path);

  const RestConfig& config() const { return config_; }
  Clock& clock() { return clock_; }

  // While `may_write` returns false, every request but a GET fails at once, unsent, with
  // reason "LeaderLeaseLost": a replica that may have lost its leader lease must not act on what
  // it saw while it led. Requests for coordination.k8s.io Leases are exempt (the elector renews
  // and releases through them). Set it before the client is shared between threads.
  void SetWriteFence(std::function<bool()> may_write) { may_write_ = std::move(may_write); }

  // Requests sent (including retries), for tests and metrics.
  int64_t requests_sent() const { return requests_sent_.load(); }
  // Connections to the apiserver opened so far (requests on kept-alive ones open none).
  int64_t connections_opened() const;
  // Watches ended because nothing arrived for watch_idle_timeout.
  int64_t idle_watches_ended() const { return idle_watches_ended_.load(); }

 private:
  Client(RestConfig config, Clock& clock, std::unique_ptr<Transport> transport);

  ApiResult<Json> Do(const Request& req);
  // Whether the write fence refuses `req`.
  bool Fenced(const Request& req) const;
  HttpRequest ToHttp(const Request& req) const;
  Request CreateRequest(const Resource& r, const std::string& ns, const Json& object, Keep keep) const;
  Request PatchRequest(const Resource& r, const std::string& ns, const std::string& name, PatchType type,
                       const Json& body, const PatchOptions& options) const;
  // What `resp` means for `req` at its `attempt` (from 1): the result, and in `again` how long
  // to wait before sending it again when it is to be resent.
  ApiResult<Json> Interpret(const Request& req, const HttpResponse& resp, int attempt, Backoff& backoff,
                            std::optional<Clock::Duration>& again) const;
  std::string Path(const Resource& r, const std::string& ns, const std::string& name,
                   const std::string& subresource) const;

  RestConfig config_;
  Clock& clock_;
  std::unique_ptr<Transport> transport_;
  std::atomic<int64_t> requests_sent_{0};
  std::atomic<int64_t> idle_watches_ended_{0};
  TokenBucket bucket_;  // the client-side rate limit
  std::function<bool()> may_write_;
};

// Parses `text` as JSON, keeping of each Kubernetes object whose fields are at nesting depth
// `object_depth` (1: the document is the object; 2: a watch event's object; 3: a list's items)
// what `keep` says. Returns a discarded value (is_discarded()) when `text` is not JSON.
Json ParseKeeping(std::string_view text, int object_depth, Keep keep);

// Builds a query string parameter value safely (percent-encoding).
std::string UrlEncode(const std::string& s);

}  // namespace rota::apiclient
