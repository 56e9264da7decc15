#include "rota/apiclient/client.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <thread>

#include <simdjson.h>

#include "transport.h"

namespace rota::apiclient {

namespace resources {
const Resource kNamespaces = Resource::Core("namespaces", false);
const Resource kPods = Resource::Core("pods");
const Resource kEvents = Resource::Core("events");
const Resource kConfigMaps = Resource::Core("configmaps");
const Resource kJobs = {"batch", "v1", "jobs", true};
const Resource kLeases = {"coordination.k8s.io", "v1", "leases", true};
const Resource kClusterQueues = {"kueue.x-k8s.io", "v1beta2", "clusterqueues", false};
const Resource kLocalQueues = {"kueue.x-k8s.io", "v1beta2", "localqueues", true};
const Resource kCohorts = {"kueue.x-k8s.io", "v1beta2", "cohorts", false};
const Resource kResourceFlavors = {"kueue.x-k8s.io", "v1beta2", "resourceflavors", false};
const Resource kWorkloadPriorityClasses = {"kueue.x-k8s.io", "v1beta2", "workloadpriorityclasses", false};
const Resource kWorkloads = {"kueue.x-k8s.io", "v1beta2", "workloads", true};
const Resource kBudgets = {"rota.dev", "v1alpha1", "budgets", false};
}  // namespace resources

std::string ApiError::ToString() const {
  if (code == 0) return message;
  return std::to_string(code) + (reason.empty() ? "" : " " + reason) + ": " + message;
}

std::string UrlEncode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

namespace {

Retry RetryFor(int code) {
  if (code == 409) return Retry::kReread;
  if (code == 410) return Retry::kRelist;
  if (code == 0 || code == 429 || code >= 500) return Retry::kBackoff;
  return Retry::kNo;
}

ApiError ErrorFrom(const HttpResponse& resp) {
  ApiError e;
  e.code = static_cast<int>(resp.status);
  if (!resp.transport_error.empty()) {
    e.code = 0;
    e.message = resp.transport_error;
    e.retry = Retry::kBackoff;
    return e;
  }
  Json status = Json::parse(resp.body, nullptr, /*allow_exceptions=*/false);
  if (status.is_object() && status.value("kind", "") == "Status") {
    e.reason = status.value("reason", "");
    e.message = status.value("message", "");
    if (status.contains("details")) e.details = status["details"];
    if (status.contains("code") && status["code"].is_number_integer()) e.code = status["code"].get<int>();
  } else {
    e.message = resp.body.empty() ? "HTTP " + std::to_string(resp.status) : resp.body.substr(0, 1024);
  }
  e.retry = RetryFor(e.code);
  return e;
}

// Seconds from a Retry-After header (delta-seconds form), capped; 0 when absent.
int RetryAfterSeconds(const HttpResponse& resp) {
  if (resp.retry_after.empty()) return 0;
  try {
    return std::clamp(std::stoi(resp.retry_after), 1, 30);
  } catch (...) {
    return 1;
  }
}

const char* ContentType(PatchType t) {
  switch (t) {
    case PatchType::kMerge:
      return "Content-Type: application/merge-patch+json";
    case PatchType::kJson:
      return "Content-Type: application/json-patch+json";
    case PatchType::kStrategicMerge:
      return "Content-Type: application/strategic-merge-patch+json";
    case PatchType::kApply:
      return "Content-Type: application/apply-patch+yaml";
  }
  return "";
}

// The slow way of ParseKeeping, for text simdjson refuses (see below).
//
// Builds what `keep` keeps of the Kubernetes objects whose fields are at nesting depth
// `object_depth` (1: the document is the object; 2: a watch event's object; 3: a list's items),
// straight from the parser's events: what is left out (metadata.managedFields, and with kMetadata
// everything but apiVersion, kind and metadata) is read past without being built. With kMetadata
// on a document that is one object, it stops reading once it has those three fields: the
// apiserver writes an object's fields in order (apiVersion, kind, metadata, spec, status), so a
// write's reply, whose new resourceVersion is all most callers read, is parsed only to the end of
// its metadata, and its spec and status, most of a Workload's bytes, are never read. (Fields in
// another order are still found; the reader then reads on.) A key of a left-out name anywhere
// else is kept.
class KeepingReader final : public nlohmann::json_sax<Json> {
 public:
  KeepingReader(int object_depth, Keep keep) : object_depth_(object_depth), keep_(keep) {}

  Json result;
  bool invalid = false;   // the text is not JSON
  bool complete = false;  // stopped early: everything kept has been read

  bool null() override { return Value(nullptr); }
  bool boolean(bool v) override { return Value(v); }
  bool number_integer(number_integer_t v) override { return Value(v); }
  bool number_unsigned(number_unsigned_t v) override { return Value(v); }
  bool number_float(number_float_t v, const string_t&) override { return Value(v); }
  bool string(string_t& v) override { return Value(std::move(v)); }
  bool binary(binary_t& v) override { return Value(Json::binary(std::move(v))); }
  bool start_object(std::size_t) override { return Open(Json::object()); }
  bool start_array(std::size_t) override { return Open(Json::array()); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }
  bool key(string_t& k) override {
    if (skipping_ > 0) return true;
    const size_t depth = open_.size();
    if (depth == static_cast<size_t>(object_depth_)) {
      in_metadata_ = k == "metadata";
      drop_next_ = keep_ == Keep::kMetadata && !in_metadata_ && k != "apiVersion" && k != "kind";
    } else {
      drop_next_ = depth == static_cast<size_t>(object_depth_) + 1 && in_metadata_ && k == "managedFields";
    }
    key_ = std::move(k);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    invalid = true;
    return false;
  }

 private:
  // Whether the value that starts now is left out (a dropped field, or inside one).
  bool Skip() {
    if (skipping_ > 0) return true;
    if (!drop_next_) return false;
    drop_next_ = false;
    return true;
  }
  // Where a kept value goes: the document itself, under the last key in an object, or at the end
  // of an array.
  Json& Place(Json v) {
    if (open_.empty()) {
      result = std::move(v);
      return result;
    }
    Json& parent = *open_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return parent.back();
    }
    Json& slot = parent[key_];
    slot = std::move(v);
    return slot;
  }
  bool Value(Json v) {
    if (!Skip()) Place(std::move(v));
    return Go();
  }
  bool Open(Json container) {
    if (Skip()) {
      ++skipping_;
      return true;
    }
    open_.push_back(&Place(std::move(container)));
    return true;
  }
  bool Close() {
    if (skipping_ > 0) {
      --skipping_;
      return true;
    }
    open_.pop_back();
    return Go();
  }
  // Whether to read on: with kMetadata on a single object, not once the three fields are read
  // and the reader is back at the object's top level.
  bool Go() {
    if (keep_ != Keep::kMetadata || object_depth_ != 1 || open_.size() != 1 || skipping_ > 0) return true;
    if (result.contains("apiVersion") && result.contains("kind") && result.contains("metadata")) {
      complete = true;
      return false;
    }
    return true;
  }

  const int object_depth_;
  const Keep keep_;
  std::vector<Json*> open_;  // the kept containers being filled, outermost first
  std::string key_;
  bool in_metadata_ = false;  // the object field being read is "metadata"
  bool drop_next_ = false;
  int skipping_ = 0;  // depth inside a left-out container
};

Json ParseKeepingSlowly(std::string_view text, int object_depth, Keep keep) {
  if (keep == Keep::kAll || keep == Keep::kNothing) return Json::parse(text, nullptr, /*allow_exceptions=*/false);
  KeepingReader reader(object_depth, keep);
  const bool whole = Json::sax_parse(text, &reader, nlohmann::json::input_format_t::json, /*strict=*/true);
  if (reader.invalid || (!whole && !reader.complete)) return Json(Json::value_t::discarded);
  return std::move(reader.result);
}

// The fast path of ParseKeeping: simdjson checks and indexes the whole text at gigabytes a
// second, and only what `keep` keeps is then built as Json, by KeepingReader's rules. `depth` is
// the number of containers open once `e`'s own is: an object's fields are at object_depth when
// depth == object_depth. (simdjson refuses text nested deeper than 1,024 levels, which bounds
// the recursion.)
class FastKeeper {
 public:
  FastKeeper(int object_depth, Keep keep)
      : object_depth_(object_depth),
        keep_(keep),
        trims_(keep == Keep::kAllButManagedFields || keep == Keep::kMetadata) {}

  Json Build(simdjson::dom::element e, int depth, bool is_metadata) const {
    using T = simdjson::dom::element_type;
    switch (e.type()) {
      case T::OBJECT: {
        Json out = Json::object();
        for (simdjson::dom::key_value_pair field : simdjson::dom::object(e)) {
          if (trims_ && Drops(field.key, depth, is_metadata)) continue;
          // The last of repeated keys wins, as with nlohmann's parser.
          out[std::string(field.key)] =
              Build(field.value, depth + 1, depth == object_depth_ && field.key == "metadata");
        }
        return out;
      }
      case T::ARRAY: {
        Json out = Json::array();
        for (simdjson::dom::element item : simdjson::dom::array(e)) out.push_back(Build(item, depth + 1, false));
        return out;
      }
      case T::STRING:
        return Json(std::string(std::string_view(e)));
      case T::INT64: {  // nlohmann reads a number without a sign as unsigned; so does this
        const int64_t v = int64_t(e);
        return v >= 0 ? Json(static_cast<uint64_t>(v)) : Json(v);
      }
      case T::UINT64:
        return Json(uint64_t(e));
      case T::DOUBLE:
        return Json(double(e));
      case T::BOOL:
        return Json(bool(e));
      case T::NULL_VALUE:
        return Json(nullptr);
    }
    return Json();
  }

 private:
  bool Drops(std::string_view key, int depth, bool is_metadata) const {
    if (depth == object_depth_)
      return keep_ == Keep::kMetadata && key != "metadata" && key != "apiVersion" && key != "kind";
    return depth == object_depth_ + 1 && is_metadata && key == "managedFields";
  }

  const int object_depth_;
  const Keep keep_;
  const bool trims_;
};

// simdjson's parser keeps buffers sized for the largest text it has read. Each thread has one,
// cut back after a large text (a list page) so that it holds little between them.
constexpr size_t kParserKeeps = 64 * 1024;

}  // namespace

Json ParseKeeping(std::string_view text, int object_depth, Keep keep) {
  thread_local simdjson::dom::parser parser(kParserKeeps);
  struct CutBack {
    simdjson::dom::parser& p;
    size_t size;
    ~CutBack() {
      if (size > kParserKeeps && p.allocate(kParserKeeps) != simdjson::SUCCESS) p = simdjson::dom::parser(kParserKeeps);
    }
  } cut_back{parser, text.size()};
  // What simdjson refuses (text that is not JSON, or a number beyond 64 bits, which nlohmann
  // reads as a double) goes the slower way, which also reads the metadata of a cut-off text.
  simdjson::dom::element root;
  if (text.size() > simdjson::SIMDJSON_MAXSIZE_BYTES ||
      parser.parse(text.data(), text.size()).get(root) != simdjson::SUCCESS) {
    return ParseKeepingSlowly(text, object_depth, keep);
  }
  return FastKeeper(object_depth, keep).Build(root, 1, false);
}

struct Client::Request {
  std::string method;
  std::string path;  // with query
  std::string body;
  std::vector<std::string> headers;
  bool idempotent = true;  // safe to resend after a transport error
  Keep keep = Keep::kAll;  // of the object in the response
  int object_depth = 1;    // where that object's fields are (3: a list's items)
};

Result<std::unique_ptr<Client>> Client::Create(const RestConfig& config, Clock& clock) {
  auto t = Transport::Create(config);
  if (!t.ok()) return t.status();
  return std::unique_ptr<Client>(new Client(config, clock, std::move(*t)));
}

Client::Client(RestConfig config, Clock& clock, std::unique_ptr<Transport> transport)
    : config_(std::move(config)),
      clock_(clock),
      transport_(std::move(transport)),
      bucket_(clock, config_.qps, config_.burst) {}

Client::~Client() = default;

std::string Client::Path(const Resource& r, const std::string& ns, const std::string& name,
                         const std::string& subresource) const {
  std::string p = r.group.empty() ? "/api/" + r.version : "/apis/" + r.group + "/" + r.version;
  if (r.namespaced && !ns.empty()) p += "/namespaces/" + UrlEncode(ns);
  p += "/" + r.plural;
  if (!name.empty()) p += "/" + UrlEncode(name);
  if (!subresource.empty()) p += "/" + subresource;
  return p;
}

int64_t Client::connections_opened() const { return transport_->connections_opened(); }

HttpRequest Client::ToHttp(const Request& req) const {
  HttpRequest h;
  h.method = req.method;
  h.path_and_query = req.path;
  h.body = req.body;
  h.headers = req.headers;
  h.headers.push_back("Accept: application/json");
  h.timeout_ms = static_cast<long>(config_.timeout.count());
  return h;
}

ApiResult<Json> Client::Interpret(const Request& req, const HttpResponse& resp, int attempt, Backoff& backoff,
                                  std::optional<Clock::Duration>& again) const {
  again.reset();
  if (resp.transport_error.empty() && resp.status >= 200 && resp.status < 300) {
    if (resp.body.empty() || req.keep == Keep::kNothing) return Json::object();
    Json body = ParseKeeping(resp.body, req.object_depth, req.keep);
    if (body.is_discarded()) {
      return ApiError{static_cast<int>(resp.status), "InvalidResponse", "the apiserver sent a body that is not JSON",
                      Json(), Retry::kBackoff};
    }
    return body;
  }
  ApiError err = ErrorFrom(resp);
  // client-go resends on 429, on 5xx with Retry-After, and (for requests that are safe to
  // repeat) on connection errors.
  const int retry_after = RetryAfterSeconds(resp);
  const bool resend = (err.code == 429) || (err.code >= 500 && retry_after > 0) || (err.code == 0 && req.idempotent);
  if (resend && attempt < config_.attempts) {
    again = retry_after > 0 ? std::chrono::duration_cast<Clock::Duration>(std::chrono::seconds(retry_after))
                            : std::chrono::duration_cast<Clock::Duration>(backoff.Next());
  }
  return err;
}

namespace {
// Between resends of one request (client-go's default for its REST client).
Backoff ResendBackoff() { return Backoff(std::chrono::milliseconds(200), std::chrono::seconds(5)); }
}  // namespace

namespace {
ApiError FencedError() {
  // (kBackoff: the next renewal may restore the lease, as after a stalled connection.)
  return {0, "LeaderLeaseLost", "not sent: this replica no longer holds its leader lease", {}, Retry::kBackoff};
}
}  // namespace

// Lease requests and reviews (TokenReview, SubjectAccessReview: questions, not writes) pass.
bool Client::Fenced(const Request& req) const {
  auto under = [&](const char* prefix) { return req.path.rfind(prefix, 0) == 0; };
  return req.method != "GET" && may_write_ && !under("/apis/coordination.k8s.io/") &&
         !under("/apis/authentication.k8s.io/") && !under("/apis/authorization.k8s.io/") && !may_write_();
}

ApiResult<Json> Client::Do(const Request& req) {
  Backoff backoff = ResendBackoff();
  for (int attempt = 1;; ++attempt) {
    if (Fenced(req)) return FencedError();  // (checked again before every resend)
    bucket_.Wait();
    ++requests_sent_;
    HttpResponse resp = transport_->Perform(ToHttp(req));
    std::optional<Clock::Duration> again;
    ApiResult<Json> result = Interpret(req, resp, attempt, backoff, again);
    if (!again) return result;
    clock_.SleepFor(*again);
  }
}

// A request of a Pipeline, through its attempts.
struct Client::Pipeline::Pending {
  Request req;
  int attempt = 1;
  Backoff backoff = ResendBackoff();
};

struct Client::Pipeline::State {
  explicit State(Transport& transport) : multi(transport) {}
  Transport::Multi multi;
  std::map<uint64_t, Pending> pending;
  std::multimap<Clock::TimePoint, uint64_t> retry_at;  // resends, by when they are due
  std::vector<uint64_t> fenced;                        // refused by the write fence, unsent
};

Client::Pipeline::Pipeline(Client& client) : client_(client), state_(std::make_unique<State>(*client.transport_)) {}

Client::Pipeline::~Pipeline() = default;

std::unique_ptr<Client::Pipeline> Client::NewPipeline() { return std::unique_ptr<Pipeline>(new Pipeline(*this)); }

void Client::Pipeline::Patch(uint64_t id, const Resource& r, const std::string& ns, const std::string& name,
                             PatchType type, const Json& body, const PatchOptions& options) {
  Start(id, client_.PatchRequest(r, ns, name, type, body, options));
}

void Client::Pipeline::Create(uint64_t id, const Resource& r, const std::string& ns, const Json& object, Keep keep) {
  Start(id, client_.CreateRequest(r, ns, object, keep));
}

void Client::Pipeline::Start(uint64_t id, Request req) {
  auto [it, added] = state_->pending.try_emplace(id);
  it->second.req = std::move(req);
  Send(id, it->second);
}

void Client::Pipeline::Send(uint64_t id, Pending& p) {
  if (client_.Fenced(p.req)) {
    state_->fenced.push_back(id);  // the next Poll returns its failure
    return;
  }
  client_.bucket_.Wait();
  ++client_.requests_sent_;
  state_->multi.Start(id, client_.ToHttp(p.req));
}

std::vector<std::pair<uint64_t, ApiResult<Json>>> Client::Pipeline::Poll(std::chrono::milliseconds timeout) {
  // Resends that are due go first; a Poll waits no longer than the next one's time.
  Clock& clock = client_.clock_;
  for (auto due = state_->retry_at.begin(); due != state_->retry_at.end() && due->first <= clock.Now();
       due = state_->retry_at.erase(due)) {
    auto p = state_->pending.find(due->second);
    if (p != state_->pending.end()) Send(p->first, p->second);
  }
  if (!state_->retry_at.empty()) {
    const auto until_next = std::chrono::ceil<std::chrono::milliseconds>(state_->retry_at.begin()->first - clock.Now());
    timeout = std::clamp(until_next, std::chrono::milliseconds(0), timeout);
  }
  std::vector<std::pair<uint64_t, ApiResult<Json>>> out;
  for (uint64_t id : state_->fenced) {
    out.emplace_back(id, FencedError());
    state_->pending.erase(id);
  }
  if (!state_->fenced.empty()) timeout = std::chrono::milliseconds(0);
  state_->fenced.clear();
  for (auto& [id, resp] : state_->multi.Poll(timeout)) {
    auto p = state_->pending.find(id);
    if (p == state_->pending.end()) continue;
    std::optional<Clock::Duration> again;
    ApiResult<Json> result = client_.Interpret(p->second.req, resp, p->second.attempt, p->second.backoff, again);
    if (again) {
      ++p->second.attempt;
      state_->retry_at.emplace(clock.Now() + *again, id);
      continue;
    }
    out.emplace_back(id, std::move(result));
    state_->pending.erase(p);
  }
  return out;
}

void Client::Pipeline::Wake() { state_->multi.Wake(); }

size_t Client::Pipeline::in_flight() const { return state_->pending.size(); }

ApiResult<Json> Client::Get(const Resource& r, const std::string& ns, const std::string& name,
                            const std::string& subresource) {
  return Do({"GET", Path(r, ns, name, subresource), "", {}, true});
}

ApiResult<std::string> Client::ListPages(const Resource& r, const std::string& ns, const ListOptions& o,
                                         const std::function<void(std::vector<Json>&&)>& on_page) {
  std::string cont, resource_version;
  do {
    std::string q;
    auto add = [&](const std::string& k, const std::string& v) {
      if (!v.empty()) q += (q.empty() ? "?" : "&") + k + "=" + UrlEncode(v);
    };
    add("labelSelector", o.label_selector);
    add("fieldSelector", o.field_selector);
    if (o.limit > 0) add("limit", std::to_string(o.limit));
    add("continue", cont);
    if (cont.empty()) add("resourceVersion", o.resource_version);
    auto page = Do({"GET", Path(r, ns, "", "") + q, "", {}, true, o.keep, /*object_depth=*/3});
    if (!page.ok()) return page.error();
    Json& p = *page;
    std::vector<Json> items;
    if (p.contains("items") && p["items"].is_array()) {
      items.reserve(p["items"].size());
      for (auto& item : p["items"]) items.push_back(std::move(item));
    }
    on_page(std::move(items));
    const Json& meta = p.contains("metadata") ? p["metadata"] : Json::object();
    resource_version = meta.value("resourceVersion", "");
    cont = meta.value("continue", "");
  } while (!cont.empty());
  return resource_version;
}

ApiResult<List> Client::ListAll(const Resource& r, const std::string& ns, const ListOptions& o) {
  List out;
  auto rv = ListPages(r, ns, o, [&](std::vector<Json>&& items) {
    for (auto& item : items) out.items.push_back(std::move(item));
  });
  if (!rv.ok()) return rv.error();
  out.resource_version = *rv;
  return out;
}

Client::Request Client::CreateRequest(const Resource& r, const std::string& ns, const Json& object, Keep keep) const {
  return {"POST", Path(r, ns, "", ""), object.dump(), {"Content-Type: application/json"}, /*idempotent=*/false, keep};
}

ApiResult<Json> Client::Create(const Resource& r, const std::string& ns, const Json& object, Keep keep) {
  return Do(CreateRequest(r, ns, object, keep));
}

ApiResult<Json> Client::Update(const Resource& r, const std::string& ns, const Json& object,
                               const std::string& subresource) {
  const std::string name = object.contains("metadata") ? object["metadata"].value("name", "") : "";
  if (name.empty()) {
    return ApiError{400, "Invalid", "update needs metadata.name", Json(), Retry::kNo};
  }
  return Do({"PUT", Path(r, ns, name, subresource), object.dump(), {"Content-Type: application/json"}, true});
}

Client::Request Client::PatchRequest(const Resource& r, const std::string& ns, const std::string& name, PatchType type,
                                     const Json& body, const PatchOptions& o) const {
  std::string q;
  if (!o.field_manager.empty()) q += "?fieldManager=" + UrlEncode(o.field_manager);
  if (type == PatchType::kApply && o.force) q += std::string(q.empty() ? "?" : "&") + "force=true";
  return {"PATCH", Path(r, ns, name, o.subresource) + q, body.dump(), {ContentType(type)}, true, o.keep};
}

ApiResult<Json> Client::Patch(const Resource& r, const std::string& ns, const std::string& name, PatchType type,
                              const Json& body, const PatchOptions& o) {
  return Do(PatchRequest(r, ns, name, type, body, o));
}

ApiResult<Json> Client::Delete(const Resource& r, const std::string& ns, const std::string& name,
                               const DeleteOptions& o) {
  Json body = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
  if (!o.precondition_uid.empty()) body["preconditions"]["uid"] = o.precondition_uid;
  if (!o.precondition_resource_version.empty())
    body["preconditions"]["resourceVersion"] = o.precondition_resource_version;
  if (!o.propagation_policy.empty()) body["propagationPolicy"] = o.propagation_policy;
  return Do({"DELETE", Path(r, ns, name, ""), body.dump(), {"Content-Type: application/json"}, true});
}

ApiResult<std::string> Client::GetRaw(const std::string& path) {
  bucket_.Wait();
  HttpRequest h;
  h.path_and_query = path;
  h.timeout_ms = static_cast<long>(config_.timeout.count());
  ++requests_sent_;
  HttpResponse resp = transport_->Perform(std::move(h));
  if (resp.transport_error.empty() && resp.status >= 200 && resp.status < 300) return resp.body;
  return ErrorFrom(resp);
}

ApiResult<WatchEnd> Client::Watch(const Resource& r, const std::string& ns, const WatchOptions& o,
                                  const std::function<bool(WatchEvent&)>& on_event, const std::atomic<bool>* stop) {
  std::string q = "?watch=1";
  auto add = [&](const std::string& k, const std::string& v) {
    if (!v.empty()) q += "&" + k + "=" + UrlEncode(v);
  };
  add("resourceVersion", o.resource_version);
  add("labelSelector", o.label_selector);
  add("fieldSelector", o.field_selector);
  if (o.allow_bookmarks) q += "&allowWatchBookmarks=true";
  if (o.timeout_seconds > 0) q += "&timeoutSeconds=" + std::to_string(o.timeout_seconds);

  std::string last_rv = o.resource_version;
  std::string pending;  // bytes of an incomplete line
  std::optional<ApiError> stream_error;
  bool caller_stopped = false;
  auto handle_line = [&](std::string_view line) -> bool {
    if (line.empty()) return true;
    Json ev = ParseKeeping(line, /*object_depth=*/2, o.keep);
    if (!ev.is_object() || !ev.contains("type")) {
      stream_error = ApiError{0, "InvalidResponse", "malformed watch event: " + std::string(line.substr(0, 200)),
                              Json(), Retry::kBackoff};
      return false;
    }
    WatchEvent event{ev["type"].get<std::string>(), ev.contains("object") ? std::move(ev["object"]) : Json()};
    if (event.type == "ERROR") {
      ApiError e;
      e.code = event.object.value("code", 0);
      e.reason = event.object.value("reason", "");
      e.message = event.object.value("message", "");
      e.retry = RetryFor(e.code);
      stream_error = e;
      return false;
    }
    if (event.object.contains("metadata")) {
      const std::string rv = event.object["metadata"].value("resourceVersion", "");
      if (!rv.empty()) last_rv = rv;
    }
    if (!on_event(event)) {
      caller_stopped = true;
      return false;
    }
    return true;
  };

  bucket_.Wait();
  HttpRequest h;
  h.path_and_query = Path(r, ns, "", "") + q;
  h.headers = {"Accept: application/json"};
  // The server closes the stream after timeoutSeconds; allow generously more before giving up.
  h.timeout_ms = o.timeout_seconds > 0 ? (o.timeout_seconds + 60) * 1000L : 0;
  h.idle_timeout_ms = static_cast<long>(config_.watch_idle_timeout.count());
  h.stop = stop;
  // Reading in batches: bytes that arrive after the thread has gone idle wait `settle` before
  // they are taken in, and what arrived meanwhile is then read in one go (libcurl hands over what
  // the socket holds in calls that follow each other at once).
  constexpr auto kIdle = std::chrono::milliseconds(1);
  auto last_call_end = std::chrono::steady_clock::time_point{};
  h.on_data = [&](const char* data, size_t len) {
    if (o.settle.count() > 0 && std::chrono::steady_clock::now() - last_call_end >= kIdle && !(stop && stop->load())) {
      std::this_thread::sleep_for(o.settle);
    }
    struct EndOfCall {
      std::chrono::steady_clock::time_point& at;
      ~EndOfCall() { at = std::chrono::steady_clock::now(); }
    } end_of_call{last_call_end};
    pending.append(data, len);
    size_t start = 0, nl;
    while ((nl = pending.find('\n', start)) != std::string::npos) {
      if (!handle_line(std::string_view(pending).substr(start, nl - start))) return false;
      start = nl + 1;
    }
    pending.erase(0, start);
    return true;
  };
  ++requests_sent_;
  HttpResponse resp = transport_->Perform(std::move(h));
  if (stream_error) return *stream_error;
  if (caller_stopped || (resp.stopped && stop && stop->load())) return WatchEnd{last_rv};
  // A connection that carries nothing, not even bookmarks, may be dead without a word (a
  // middlebox that lost its state, a peer that froze): it is ended, and the caller resumes from
  // the last event applied (an incomplete one in `pending` is sent again).
  if (resp.idle && resp.status >= 200 && resp.status < 300) {
    ++idle_watches_ended_;
    return WatchEnd{last_rv, /*idle=*/true};
  }
  if (!resp.transport_error.empty() || resp.status < 200 || resp.status >= 300) return ErrorFrom(resp);
  if (!pending.empty() && !handle_line(pending) && stream_error) return *stream_error;
  return WatchEnd{last_rv};
}

}  // namespace rota::apiclient
