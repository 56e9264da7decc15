#include "queue_controller.h"

#include <algorithm>
#include <atomic>
#include <ctime>
#include <set>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "rota/admission/engine.h"
#include "rota/api/snapshot.h"
#include "rota/apiclient/thread_name.h"

namespace rota::controller {
namespace {

using apiclient::Json;
namespace wc = api::workload_condition;

// Kueue's scheduler applies Workload admission status as "kueue-admission", and tools built on
// Kueue's libraries (its scheduler benchmark runner, for one) apply their own admission changes
// (clearing an evicted workload's reservation) under that name, relying on server-side apply to
// remove what they omit. Owning the fields under the same name makes those tools work on rota.
constexpr const char* kFieldManager = "kueue-admission";
// Status writes in flight at once (the client's QPS limit holds): kWritesInFlight of any kind,
// kSummaryWritesInFlight more of queue status and pending reasons alone (see StatusWriter),
// since on a saturated apiserver a write can take over a second.
constexpr int kWritesInFlight = 8;
constexpr int kSummaryWritesInFlight = 4;
// Workload condition types rota owns (and so always applies in full).
const std::vector<std::string> kOwnedConditions = {std::string(wc::kQuotaReserved), std::string(wc::kAdmitted),
                                                   std::string(wc::kEvicted), std::string(wc::kPreempted),
                                                   std::string(wc::kRequeued)};

std::string NowRfc3339() { return api::FormatTime(std::time(nullptr)); }

// Whether a cached object at resourceVersion `cached` includes our write that returned `written`.
// Resource versions are etcd revisions in practice; when either is not a number only equality
// tells.
bool SeenVersion(const std::string& cached, const std::string& written) {
  if (written.empty() || cached.empty()) return false;
  if (cached == written) return true;
  char* end_c = nullptr;
  char* end_w = nullptr;
  const unsigned long long c = std::strtoull(cached.c_str(), &end_c, 10);
  const unsigned long long w = std::strtoull(written.c_str(), &end_w, 10);
  return *end_c == 0 && *end_w == 0 && c >= w;
}

struct ConditionUpdate {
  std::string status;  // True / False
  std::string reason;
  std::string message;
};

// The full list of rota-owned conditions for an object whose current conditions are `current`,
// with `updates` applied; a condition keeps its lastTransitionTime unless its status changes.
Json OwnedConditions(const std::vector<api::Condition>& current,
                     const std::map<std::string, ConditionUpdate>& updates, const std::string& now) {
  Json out = Json::array();
  for (const std::string& type : kOwnedConditions) {
    const api::Condition* c = api::FindCondition(current, type);
    auto u = updates.find(type);
    if (u != updates.end()) {
      std::string ltt = now;
      if (c && std::string(api::EnumName(c->status)) == u->second.status) ltt = c->last_transition_time;
      out.push_back({{"type", type},
                     {"status", u->second.status},
                     {"reason", u->second.reason},
                     {"message", u->second.message},
                     {"lastTransitionTime", ltt}});
    } else if (c) {
      out.push_back(api::EncodeValue(*c));
    }
  }
  return out;
}

// Adds `amount` to `key`'s entry of a short (key, amount) list, or appends one.
void AddUsage(std::vector<std::pair<uint32_t, int64_t>>& usage, uint32_t key, int64_t amount) {
  auto it = std::find_if(usage.begin(), usage.end(), [&](const auto& u) { return u.first == key; });
  if (it == usage.end()) usage.emplace_back(key, amount);
  else it->second += amount;
}

// Amounts print as the apiserver would print the requests they came from: byte-sized resources
// in binary SI ("256Gi"), the rest in decimal SI ("64", "500m").
std::string Amount(const std::string& resource, int64_t milli) {
  const bool bytes = resource == "memory" || resource == "ephemeral-storage" || resource.rfind("hugepages-", 0) == 0;
  return Quantity::FromMilli(milli, bytes ? Quantity::Format::kBinarySI : Quantity::Format::kDecimalSI).ToString();
}

Json AdmissionJson(const admission::AdmitDecision& d) {
  Json assignments = Json::array();
  for (const auto& ps : d.pod_sets) {
    Json usage = Json::object();
    for (const auto& [r, milli] : ps.usage) usage[r] = Amount(r, milli);
    assignments.push_back({{"name", ps.name}, {"flavors", ps.flavors}, {"resourceUsage", usage}, {"count", ps.count}});
  }
  return {{"clusterQueue", d.cluster_queue}, {"podSetAssignments", assignments}};
}

std::string PreemptionMessage(const admission::PreemptDecision& p) {
  const char* why = "prioritization in the ClusterQueue";
  switch (p.reason) {
    case admission::PreemptionReason::kInClusterQueue: break;
    case admission::PreemptionReason::kInCohortReclamation: why = "reclamation within the cohort"; break;
    case admission::PreemptionReason::kInCohortReclaimWhileBorrowing:
      why = "reclamation within the cohort while borrowing";
      break;
    case admission::PreemptionReason::kInCohortFairSharing: why = "fair sharing within the cohort"; break;
  }
  return "Preempted to accommodate workload " + p.preemptor + " due to " + why;
}

// Whether the Workload document has condition Finished=True.
bool FinishedDocument(const Json& workload) {
  auto st = workload.find("status");
  if (st == workload.end() || !st->is_object()) return false;
  auto cs = st->find("conditions");
  if (cs == st->end() || !cs->is_array()) return false;
  for (const Json& c : *cs) {
    if (c.is_object() && c.value("type", Json()) == wc::kFinished && c.value("status", Json()) == "True") return true;
  }
  return false;
}

}  // namespace

Result<api::Workload> DecodeCompactWorkload(Json& compact, api::JsonInterner& templates) {
  if (auto m = compact.find("metadata"); m != compact.end() && m->is_object()) {
    // Of the metadata, the cache keeps identity, times and owners (the Job integration follows
    // its Workloads by owner); labels, annotations, managedFields and the rest nothing reads.
    static const std::set<std::string, std::less<>> kKept = {"name", "namespace", "uid", "resourceVersion", "generation",
                                                              "creationTimestamp", "deletionTimestamp", "ownerReferences"};
    for (auto it = m->begin(); it != m->end();) it = kKept.count(it.key()) ? std::next(it) : m->erase(it);
  }
  // A finished Workload is kept for its name, owner and conditions only: nothing schedules it
  // again, so its pod templates are not kept at all.
  const bool finished = FinishedDocument(compact);
  // Each pod set's template, trimmed, is moved out of the document and interned before the rest
  // is decoded (the decoder would copy it whole, only for the copy to give way to the interned
  // one); the pod set decodes an empty template in its place.
  std::vector<api::SharedJson> interned;
  if (auto spec = compact.find("spec"); spec != compact.end() && spec->is_object()) {
    if (auto sets = spec->find("podSets"); sets != spec->end() && sets->is_array()) {
      interned.resize(sets->size());
      for (size_t i = 0; i < sets->size(); ++i) {
        Json& ps = (*sets)[i];
        if (!ps.is_object() || !ps.contains("template") || !ps["template"].is_object()) continue;
        if (finished) {
          ps["template"] = Json::object();
          continue;
        }
        Json& tpl = ps["template"];
        Json pod = Json::object();
        if (auto ts = tpl.find("spec"); ts != tpl.end() && ts->is_object()) {
          for (const char* k : {"overhead", "nodeSelector", "tolerations", "affinity"}) {
            if (auto f = ts->find(k); f != ts->end()) pod[k] = std::move(*f);
          }
          for (const char* list : {"initContainers", "containers"}) {
            auto cs = ts->find(list);
            if (cs == ts->end() || !cs->is_array()) continue;
            Json out = Json::array();
            for (Json& c : *cs) {
              Json kept = Json::object();
              if (!c.is_object()) continue;
              for (const char* k : {"name", "resources", "restartPolicy"}) {
                if (auto f = c.find(k); f != c.end()) kept[k] = std::move(*f);
              }
              out.push_back(std::move(kept));
            }
            pod[list] = std::move(out);
          }
        }
        interned[i] = templates.Intern(api::SharedJson(Json{{"spec", std::move(pod)}}));
        ps["template"] = Json::object();
      }
    }
  }
  auto w = api::DecodeObject<api::Workload>(compact);
  if (!w.ok()) return w;
  w->extra = Json();
  for (size_t i = 0; i < w->spec.pod_sets.size(); ++i) {
    auto& ps = w->spec.pod_sets[i];
    ps.template_ = i < interned.size() && interned[i].shared() ? interned[i] : templates.Intern(ps.template_);
  }
  if (finished && w->status) {
    // Nothing reads a finished Workload's admission or its other conditions from the cache.
    w->status->admission.reset();
    std::erase_if(w->status->conditions, [](const api::Condition& c) { return c.type != wc::kFinished; });
  }
  return w;
}

namespace {

// What the cache holds for every finished Workload that has no owner (plain Workloads, such as a
// benchmark's or a pipeline's, which are never deleted by a garbage collector and pile up): one
// shared object that says only that it is finished. Nothing reads more of such a Workload: it
// holds no quota, gets no status, and no Job follows it; its key is the informer's. A finished
// Workload with an owner is kept by DecodeCompactWorkload (the Job integration finds its Job).
std::shared_ptr<const api::Workload> FinishedWithoutOwner() {
  static const std::shared_ptr<const api::Workload> kFinished = [] {
    auto w = std::make_shared<api::Workload>();
    api::Condition c;
    c.type = wc::kFinished;
    c.status = api::ConditionStatus::kTrue;
    w->status.emplace().conditions.push_back(std::move(c));
    return w;
  }();
  return kFinished;
}

bool HasOwner(const Json& workload) {
  auto m = workload.find("metadata");
  if (m == workload.end() || !m->is_object()) return false;
  auto owners = m->find("ownerReferences");
  return owners != m->end() && owners->is_array() && !owners->empty();
}

bool IsFinished(const api::Workload& w) {
  const api::Condition* c = w.status ? api::FindCondition(w.status->conditions, wc::kFinished) : nullptr;
  return c && c->status == api::ConditionStatus::kTrue;
}

template <typename T>
std::vector<T> Copy(const apiclient::Informer<T>& informer) {
  std::vector<T> out;
  for (const auto& p : informer.List()) out.push_back(*p);
  return out;
}

// Status writes as server-side apply patches of the status subresource, several at once over
// one connection (a Pipeline of the client), for one of the StatusWriter's threads.
class ApplySink : public StatusWriter::Sink {
 public:
  ApplySink(apiclient::Client& client, const QueueController::Logger& log) : pipeline_(client.NewPipeline()), log_(log) {}

  void Start(uint64_t id, const StatusWriter::Write& w, bool report) override {
    namespace r = apiclient::resources;
    const apiclient::Resource& resource =
        w.kind == "clusterqueues" ? r::kClusterQueues : w.kind == "localqueues" ? r::kLocalQueues : r::kWorkloads;
    apiclient::PatchOptions apply;
    apply.field_manager = kFieldManager;
    apply.force = true;
    apply.subresource = "status";
    // Of the reply only the resourceVersion of a write whose outcome is reported is read (an
    // admission or eviction, which the loop assumes until its cache catches up); queue status
    // and pending reasons leave the reply unparsed.
    apply.keep = report ? apiclient::Keep::kMetadata : apiclient::Keep::kNothing;
    writes_[id] = &w;  // (for the warning of a failed write, which names it)
    pipeline_->Patch(id, resource, w.ns, w.name, apiclient::PatchType::kApply, w.body, apply);
  }

  std::vector<std::pair<uint64_t, StatusWriter::Outcome>> Poll(std::chrono::milliseconds timeout) override {
    std::vector<std::pair<uint64_t, StatusWriter::Outcome>> out;
    for (auto& [id, res] : pipeline_->Poll(timeout)) {
      StatusWriter::Outcome o;
      const auto write = writes_.extract(id);
      if (res.ok()) {
        o.ok = true;
        o.resource_version = (*res).value("metadata", Json::object()).value("resourceVersion", "");
      } else {
        o.error = res.error().ToString();
        if (!res.error().IsNotFound() && write) {  // (a deleted Workload needs no status)
          const StatusWriter::Write& w = *write.mapped();
          log_("warn", "status of " + w.body.value("kind", std::string("object")) + " " + (w.ns.empty() ? "" : w.ns + "/") +
                           w.name + ": " + o.error);
        }
      }
      out.emplace_back(id, std::move(o));
    }
    return out;
  }

  void Wake() override { pipeline_->Wake(); }

 private:
  std::unique_ptr<apiclient::Client::Pipeline> pipeline_;
  const QueueController::Logger& log_;
  std::unordered_map<uint64_t, const StatusWriter::Write*> writes_;  // in flight (see Sink::Start)
};

}  // namespace

QueueController::QueueController(apiclient::Client& client, RunConfig config, Logger log, Metrics* metrics,
                                 apiclient::EventRecorder* events)
    : client_(client), config_(std::move(config)), log_(std::move(log)), metrics_(metrics), events_(events) {
  if (events_) events_qps_ = events_->qps();
  if (metrics_) metrics_->Set("rota_apiserver_behind", {}, 0);
  namespace r = apiclient::resources;
  apiclient::InformerOptions options;
  options.on_error = [this](const std::string& m) { log_("warn", m); };
  // A pass waits the batch period for events to settle anyway; the watches read theirs in
  // batches within half of it (at most 50 ms), rather than waking for each (every admission,
  // eviction and finish is a Workload event). In Kueue's baseline scenario the Workload watch
  // used 2.40 s of CPU reading every 50 ms against 2.69 s every 20 ms, with the same admission
  // times (and less since a watch waits only for bytes that come after it was idle).
  options.settle = std::min<std::chrono::milliseconds>(std::chrono::milliseconds(50), config_.batch_period / 2);
  auto notify = [this](auto&&...) { MarkDirty(); };
  // Every kind's changes may change decisions: each informer just marks the loop dirty.
  auto handlers = [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    typename apiclient::Informer<T>::Handlers h;
    h.on_add = notify;
    h.on_update = notify;
    h.on_delete = notify;
    return h;
  };
  // A queue whose status alone changed (rota's own queue status coming back, mostly) changes no
  // decision: its generation, labels and annotations are as they were.
  auto queue_handlers = [&](auto* tag) {
    auto h = handlers(tag);
    h.on_update = [this](const auto& old, const auto& now) {
      const api::ObjectMeta &a = old.metadata, &b = now.metadata;
      const bool status_only = a.generation && a.generation == b.generation && a.labels == b.labels &&
                               a.annotations == b.annotations && a.deletion_timestamp == b.deletion_timestamp;
      MarkDirty(!status_only);
    };
    return h;
  };
  flavors_ = std::make_unique<apiclient::Informer<api::ResourceFlavor>>(
      client_, r::kResourceFlavors, "", api::DecodeObject<api::ResourceFlavor>,
      handlers(static_cast<api::ResourceFlavor*>(nullptr)), options);
  cohorts_ = std::make_unique<apiclient::Informer<api::Cohort>>(
      client_, r::kCohorts, "", api::DecodeObject<api::Cohort>, handlers(static_cast<api::Cohort*>(nullptr)), options);
  cluster_queues_ = std::make_unique<apiclient::Informer<api::ClusterQueue>>(
      client_, r::kClusterQueues, "", api::DecodeObject<api::ClusterQueue>,
      queue_handlers(static_cast<api::ClusterQueue*>(nullptr)), options);
  local_queues_ = std::make_unique<apiclient::Informer<api::LocalQueue>>(
      client_, r::kLocalQueues, "", api::DecodeObject<api::LocalQueue>,
      queue_handlers(static_cast<api::LocalQueue*>(nullptr)), options);
  priority_classes_ = std::make_unique<apiclient::Informer<api::WorkloadPriorityClass>>(
      client_, r::kWorkloadPriorityClasses, "", api::DecodeObject<api::WorkloadPriorityClass>,
      handlers(static_cast<api::WorkloadPriorityClass*>(nullptr)), options);
  // Workload changes also go to the listener (the Job integration follows its Workloads).
  apiclient::Informer<api::Workload>::Handlers workload_handlers;
  // A Workload that finished or went away frees quota, which matters only to pending workloads.
  auto tell = [this](const api::Workload& w, bool urgent) {
    MarkDirty(urgent);
    if (workload_listener_) workload_listener_(w);
  };
  workload_handlers.on_add = [tell](const api::Workload& w) { tell(w, !IsFinished(w)); };
  workload_handlers.on_update = [tell](const api::Workload&, const api::Workload& w) { tell(w, !IsFinished(w)); };
  workload_handlers.on_delete = [tell](const api::Workload& w) { tell(w, false); };
  workloads_ = std::make_unique<apiclient::Informer<api::Workload>>(
      client_, r::kWorkloads, "",
      [this](Json& j) -> Result<std::shared_ptr<const api::Workload>> {
        if (FinishedDocument(j) && !HasOwner(j)) return FinishedWithoutOwner();
        auto w = DecodeCompactWorkload(j, templates_);
        if (!w.ok()) return w.status();
        return std::make_shared<const api::Workload>(std::move(w).value());
      },
      workload_handlers, options);
  workloads_->SetView([](const api::Workload& w) { return !IsFinished(w); });  // what a pass looks at
  namespaces_ = std::make_unique<apiclient::Informer<NamespaceInfo>>(
      client_, r::kNamespaces, "",
      [](const Json& j) -> Result<NamespaceInfo> {
        api::ObjectMeta m;
        Status s = api::DecodeValue(j.contains("metadata") ? j["metadata"] : Json::object(), "metadata", m);
        if (!s.ok()) return s;
        return NamespaceInfo{m.name, m.labels};
      },
      handlers(static_cast<NamespaceInfo*>(nullptr)), options);
  writer_ = std::make_unique<StatusWriter>(
      [this] { return std::make_unique<ApplySink>(client_, log_); }, kWritesInFlight, kSummaryWritesInFlight,
      [this] { MarkDirty(); });  // a failed write is retried by the next pass
}

QueueController::~QueueController() = default;

QueueController::Stats QueueController::stats() const {
  Stats s;
  {
    std::lock_guard<std::mutex> l(mu_);
    s = stats_;
  }
  const StatusWriter::Counts c = writer_->counts();
  s.status_writes = static_cast<int64_t>(c.sent);
  s.write_errors = static_cast<int64_t>(c.failed);
  s.writer_wakes = static_cast<int64_t>(c.wakes);
  return s;
}

std::chrono::steady_clock::duration QueueStatusInterval(size_t queues, bool apiserver_behind) {
  // Queue status is a summary for people and dashboards: while workloads churn it is written at
  // most once per interval per queue, so that admissions get the apiserver's capacity. The
  // interval is 3 s, or longer with many queues: all of them, busy at once, are written at most
  // kQueueWritesPerSecond times a second (a thousand ClusterQueues and their thousand LocalQueues,
  // each every 40 s), and half that while the apiserver is behind on admissions (each every 80 s).
  // The last state is always written, and the counts are also Prometheus gauges, which are
  // current at every scrape.
  constexpr auto kMinInterval = std::chrono::seconds(3);
  constexpr size_t kQueueWritesPerSecond = 50;
  const size_t per_second = apiserver_behind ? kQueueWritesPerSecond / 2 : kQueueWritesPerSecond;
  return std::max<std::chrono::steady_clock::duration>(kMinInterval,
                                                       std::chrono::milliseconds(1000 * queues / per_second));
}

bool ApiserverBehind::Observe(std::chrono::steady_clock::duration waited, std::chrono::steady_clock::time_point now) {
  if (waited >= kBehindWait) until_ = now + kBehindHold;
  behind_ = until_ && now < *until_;
  return behind_;
}

bool QueueController::QueueStatusDue(const std::string& key, const QueueCounts& counts,
                                     std::chrono::steady_clock::time_point now,
                                     std::chrono::steady_clock::duration interval, uint64_t pass) {
  const auto it = queue_written_.find(key);
  if (it == queue_written_.end() || now - it->second.at >= interval) return true;
  if (Idle(counts) != it->second.idle) return true;  // drained, or busy again after being idle
  held_queue_status_[key] = HeldQueueStatus{it->second.at + interval, pass};
  return false;
}

void QueueController::QueueStatusWritten(const std::string& key, const QueueCounts& counts,
                                         std::chrono::steady_clock::time_point now) {
  queue_written_[key] = QueueWritten{now, Idle(counts)};
  held_queue_status_.erase(key);
}

std::optional<std::chrono::steady_clock::time_point> QueueController::NextHeldQueueStatus(
    std::chrono::steady_clock::time_point after) const {
  std::optional<std::chrono::steady_clock::time_point> next;
  for (const auto& [key, held] : held_queue_status_) {
    if (held.due > after && (!next || held.due < *next)) next = held.due;
  }
  return next;
}

void QueueController::ExportWriterMetrics() {
  if (!metrics_) return;
  const StatusWriter::Counts c = writer_->counts();
  metrics_->Set("rota_status_writes_total", {{"result", "success"}}, static_cast<double>(c.sent));
  metrics_->Set("rota_status_writes_total", {{"result", "error"}}, static_cast<double>(c.failed));
  metrics_->Set("rota_status_writes_queued", {{"priority", "admission"}}, static_cast<double>(writer_->Queued(StatusWriter::kAdmission)));
  metrics_->Set("rota_status_writes_queued", {{"priority", "queue"}}, static_cast<double>(writer_->Queued(StatusWriter::kQueueStatus)));
  metrics_->Set("rota_status_writes_queued", {{"priority", "pending"}}, static_cast<double>(writer_->Queued(StatusWriter::kPending)));
}

void QueueController::WakeAt(std::chrono::steady_clock::time_point due) {
  std::lock_guard<std::mutex> l(mu_);
  if (!wake_at_ || due < *wake_at_) wake_at_ = due;
}

void QueueController::MarkDirty(bool urgent) {
  std::lock_guard<std::mutex> l(mu_);
  dirty_ = true;
  urgent_ = urgent_ || urgent;
  cv_.notify_all();
}

void QueueController::Start() {
  for (auto* r : Reflectors()) r->Start();
}

bool QueueController::HasSynced() const {
  for (auto* r : Reflectors())
    if (!r->HasSynced()) return false;
  return true;
}

std::vector<apiclient::Reflector*> QueueController::Reflectors() const {
  return {flavors_.get(), cohorts_.get(), cluster_queues_.get(), local_queues_.get(),
          priority_classes_.get(), workloads_.get(), namespaces_.get()};
}

void QueueController::Run(const std::atomic<bool>& stop) {
  Start();
  while (!stop && !HasSynced()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  log_("info", "caches synced; scheduling");
  MarkDirty();
  auto last_pass = std::chrono::steady_clock::now();
  auto last_pass_start = last_pass;
  while (!stop) {
    bool idle_wake = false;
    {
      std::unique_lock<std::mutex> l(mu_);
      // A pass at least every few seconds retries failed writes even without new events; `stop`
      // (set from a signal handler, which cannot notify) is checked every 200 ms.
      auto deadline = last_pass + std::chrono::seconds(5);
      if (wake_at_ && *wake_at_ < deadline) deadline = *wake_at_;  // a pending reason is due
      // Held queue status is due: a pass writes it, and with it whatever else is due within
      // kQueueStatusSlack, so that queues held at slightly different times share one pass.
      constexpr auto kQueueStatusSlack = std::chrono::milliseconds(500);
      if (const auto held = NextHeldQueueStatus(last_pass_start); held && *held + kQueueStatusSlack < deadline) {
        deadline = *held + kQueueStatusSlack;
      }
      // With no workload waiting for quota, changes that cannot make a decision (workloads
      // finishing) wait for kIdlePassInterval: in Kueue's large-scale scenario, once every
      // workload was admitted, the runner took 85 s to finish them, and the loop made a pass
      // every 0.45 s meanwhile (36 ms each, over the thousands of workloads still running) that
      // only updated counts.
      constexpr auto kIdlePassInterval = std::chrono::seconds(1);
      for (;;) {
        auto until = deadline;
        if (dirty_ && (urgent_ || !last_pass_idle_)) break;
        if (dirty_ && last_pass + kIdlePassInterval < until) until = last_pass + kIdlePassInterval;
        const auto now = std::chrono::steady_clock::now();
        if (stop || now >= until) break;
        cv_.wait_for(l, std::min<std::chrono::steady_clock::duration>(std::chrono::milliseconds(200), until - now));
      }
      if (stop) break;
      idle_wake = !urgent_ && last_pass_idle_;
      dirty_ = false;
      urgent_ = false;
      wake_at_.reset();
    }
    // Let a burst of events settle into one pass (after an idle wait they have had a second).
    const auto wait = idle_wake ? std::chrono::nanoseconds(0) : BatchWait(config_.batch_period, last_pass_cpu_, config_.cpu_share);
    if (metrics_) {
      metrics_->Set("rota_scheduling_batch_seconds", {}, std::chrono::duration<double>(wait).count());
      metrics_->Set("rota_scheduling_pass_cpu_seconds", {}, std::chrono::duration<double>(last_pass_cpu_).count());
    }
    std::this_thread::sleep_for(wait);
    batch_waited_ = wait;
    // Backpressure: the next pass waits until at most kPassLowWater of the last one's admissions
    // and evictions wait in the writer (the writer sends those while the pass runs). Deciding far
    // ahead of what the apiserver has accepted only piles up decisions on assumptions (and, in a
    // busy cohort, lends quota only to take it back). It waits for queue status too, but at most
    // a second: the summary threads send it whatever the admissions do, and on a saturated
    // apiserver thousands of queue writes would otherwise hold every pass for a minute. Pending
    // reasons are not waited for.
    // Only a pass queues admissions and queue status, so neither count grows meanwhile; the
    // writer wakes the loop as it takes writes (`stop` is looked at every 200 ms).
    constexpr size_t kPassLowWater = 100;
    constexpr auto kStopCheck = std::chrono::milliseconds(200);
    const auto writer_wait_start = std::chrono::steady_clock::now();
    while (!stop && !writer_->WaitQueuedAtMost(StatusWriter::kAdmission, kPassLowWater,
                                               std::chrono::steady_clock::now() + kStopCheck)) {
    }
    // A long wait here means that the apiserver, not the loop, sets the pace of admissions. While
    // it does, queue status and Events (summaries for people, and most of rota's other writes on
    // a busy cluster) take half their budgets: in a run of Kueue's large-scale scenario they were 48
    // of rota's 108 thousand requests, each costing the apiserver about what an admission costs.
    const auto admissions_taken = std::chrono::steady_clock::now();
    const bool was_behind = apiserver_.behind();
    if (const bool behind = apiserver_.Observe(admissions_taken - writer_wait_start, admissions_taken);
        behind != was_behind) {
      if (events_ && events_qps_ > 0) events_->SetQps(behind ? events_qps_ / 2 : events_qps_);
      if (metrics_) metrics_->Set("rota_apiserver_behind", {}, behind ? 1 : 0);
      log_("info", behind ? "the apiserver is behind on admissions: queue status and Events at half their rates"
                          : "the apiserver has caught up with admissions: queue status and Events at their full rates");
    }
    const auto queue_wait_end = writer_wait_start + std::chrono::seconds(1);
    while (!stop && std::chrono::steady_clock::now() < queue_wait_end &&
           !writer_->WaitQueuedAtMost(StatusWriter::kQueueStatus, 0,
                                      std::min(queue_wait_end, std::chrono::steady_clock::now() + kStopCheck))) {
    }
    // (Thread CPU: what a pass costs, whatever else shares the machine.)
    const auto cpu_before = apiclient::ThisThreadCpu();
    last_pass_start = std::chrono::steady_clock::now();
    writer_waited_ = last_pass_start - writer_wait_start;
    Pass();
    last_pass_cpu_ = apiclient::ThisThreadCpu() - cpu_before;
    last_pass = std::chrono::steady_clock::now();
  }
  for (auto* r : Reflectors()) r->RequestStop();  // all at once, then wait for each
  for (auto* r : Reflectors()) r->Stop();
}

std::chrono::nanoseconds BatchWait(std::chrono::milliseconds batch_period, std::chrono::nanoseconds last_pass_cpu,
                                   double cpu_share) {
  // A pass looks at every workload, so with a deep backlog it costs milliseconds, and under a
  // steady stream of changes (each finished workload is one) the loop would run a pass every
  // batch period. Waiting (1 / cpu_share - 1) times the last pass's CPU instead keeps the loop to
  // about cpu_share of a core, whatever the backlog; a small cluster's passes are far below the
  // batch period and change nothing. In Kueue's baseline benchmark (12,000 workloads waiting,
  // passes of about 10 ms of CPU) fixed periods of 100, 250 and 500 ms gave 1,481, 703 and 354
  // passes and 27.3, 21.5 and 16.4 s of rota CPU; the wall time stayed within this machine's
  // run-to-run spread, while at 500 ms medium and large workloads waited longer for admission (66
  // and 9.7 s on average, against 49-52 and 0.9-3.1 s). The wait is capped, so that even a huge
  // backlog sees a pass every few seconds.
  constexpr std::chrono::milliseconds kMaxStretch(2000);
  const double multiple = 1 / std::clamp(cpu_share, 1e-3, 1.0) - 1;
  const auto stretched = std::min<std::chrono::nanoseconds>(
      std::chrono::nanoseconds(static_cast<int64_t>(static_cast<double>(last_pass_cpu.count()) * multiple)), kMaxStretch);
  return std::max<std::chrono::nanoseconds>(batch_period, stretched);
}

void QueueController::Pass() {
  const auto pass_start = std::chrono::steady_clock::now();
  last_pass_idle_ = false;  // (until this pass has shown it: a pass that stops early is not idle)
  api::ClusterState state;
  state.fair_sharing = config_.fair_sharing;
  state.keep_going = true;  // one Workload rota cannot read must not stop every admission
  state.now = static_cast<int64_t>(std::time(nullptr));
  state.flavors = Copy(*flavors_);
  state.cohorts = Copy(*cohorts_);
  state.cluster_queues = cq_copies_.Take(*cluster_queues_);
  state.local_queues = lq_copies_.Take(*local_queues_);
  // (The queues' copies go back for the next pass however this one ends; nothing changes them.)
  struct GiveBack {
    QueueController& c;
    api::ClusterState& state;
    ~GiveBack() {
      c.cq_copies_.GiveBack(std::move(state.cluster_queues));
      c.lq_copies_.GiveBack(std::move(state.local_queues));
    }
  } give_back{*this, state};
  state.priority_classes = Copy(*priority_classes_);
  for (const auto& ns : namespaces_->List()) state.namespace_labels[ns->name] = ns->labels;
  const uint64_t pass_number = stats().passes + 1;
  // What the writer did since the last pass: a write we assumed either succeeded (the cache is
  // the truth once it reaches the version the write returned) or failed (the cache stays the
  // truth, and the next pass decides again); a failed pending reason is written again.
  for (auto& done : writer_->TakeDone()) {
    constexpr std::string_view kPrefix = "workloads/";
    if (done.key.compare(0, kPrefix.size(), kPrefix) != 0) continue;
    const std::string key = done.key.substr(kPrefix.size());
    if (!done.outcome.ok) pending_written_.erase(key);
    auto it = assumed_.find(key);
    if (it == assumed_.end() || it->second.write != done.seq) continue;  // superseded by a later decision
    if (done.outcome.ok) {
      it->second.written_version = done.outcome.resource_version;
    } else {
      assumed_.erase(it);
    }
  }
  // Finished workloads hold no quota and need no status: they are not copied into the pass (the
  // cache's view holds only the unfinished ones). Overlay what we wrote but have not seen back
  // yet; forget assumptions the cache confirms. The few assumed keys are told by their hashes
  // first, so that the many others are not hashed or read. An object the snapshot builder holds
  // from the last pass is only vouched for, not copied (SnapshotBuilder::StillHas).
  std::unordered_set<size_t> assumed_hashes;
  for (const auto& entry : assumed_) assumed_hashes.insert(std::hash<std::string>{}(entry.first));
  size_t place = 0;  // in the view, which moves few of its entries between passes
  workloads_->ForEachInView([&](const apiclient::Informer<api::Workload>::ViewEntry& e) {
    const std::shared_ptr<const api::Workload>& shared = e.object;
    const size_t here = place++;
    auto it = assumed_hashes.count(e.key_hash) ? assumed_.find(*e.key) : assumed_.end();
    if (it == assumed_.end()) {
      if (!snapshot_builder_.StillHas(shared.get(), here)) state.workloads.push_back(shared);
      return;
    }
    const api::Workload& w = *shared;
    it->second.seen = pass_number;
    const bool has = w.status && w.status->admission;
    // Confirmed, or the cache has caught up with our write (or gone past it: someone changed the
    // workload after us, and the cache is the truth again).
    if (has == it->second.admission.has_value() || SeenVersion(w.metadata.resource_version, it->second.written_version)) {
      assumed_.erase(it);
      state.workloads.push_back(shared);
      return;
    }
    auto copy = std::make_shared<api::Workload>(w);  // the cache's object stays as it is
    if (!copy->status) copy->status = api::WorkloadStatus{};
    copy->status->admission = it->second.admission;
    state.workloads.push_back(std::move(copy));
  });
  for (auto it = assumed_.begin(); it != assumed_.end();) it = it->second.seen == pass_number ? std::next(it) : assumed_.erase(it);

  if (Status s = snapshot_builder_.Build(state); !s.ok()) {
    log_("error", "cannot build the scheduling snapshot: " + s.message());
    return;
  }
  // A workload we evicted is not admitted again until the cache shows the eviction: the newer
  // admission would replace the eviction not yet sent, or race whoever finishes the eviction
  // (for a Job, the Job integration; for a plain Workload, its owner) and be undone by it.
  for (const auto& [key, assumed] : assumed_) {
    if (assumed.admission) continue;
    const admission::WorkloadSpec* spec = snapshot_builder_.Find(key);
    if (!spec || spec->admission || !spec->inadmissible_reason.empty()) continue;
    admission::WorkloadSpec* w = snapshot_builder_.Mutable(key);
    w->inadmissible_reason = "WaitingForQuota";
    w->inadmissible_message = "its eviction is being written";
  }
  const admission::Snapshot& snapshot = snapshot_builder_.snapshot();
  // A pass hands the writer at most kMaxChangesPerPass admissions and evictions, the first in
  // admission order (guaranteed quota first, then by priority); the rest are decided again by the
  // next pass, which runs once the writer is down to Run's kPassLowWater of these. On a busy
  // apiserver a pass of thousands takes minutes to write, and quota freed meanwhile would wait
  // for all of it before going to the highest-priority workload that needs it (in Kueue's
  // large-scale scenario, passes of up to 8,000 changes ran 80-110 s apart). The engine stops at
  // the limit too: in that scenario's busiest minutes each pass found room for up to 9,400
  // workloads, and deciding the 8,900 it would not hand over was most of the engine's work.
  constexpr size_t kMaxChangesPerPass = 500;
  admission::Decisions d = admission::Schedule(snapshot, workspace_, admission::ScheduleLimits{kMaxChangesPerPass});
  // (The last admission's victims may take the pass past the limit.)
  const size_t deferred = admission::KeepFirstAdmissions(d, kMaxChangesPerPass);
  const bool stopped_early = deferred > 0 || d.not_considered > 0;
  if (stopped_early) MarkDirty();
  const double pass_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - pass_start).count();

  // The object each decision is about (the cache's, or our overlay of it).
  auto object_of = [&](const std::string& key) { return snapshot_builder_.Object(key); };
  const std::string now = NowRfc3339();

  // Workload status writes: (key, apply body).
  struct Write {
    std::string ns, name;
    Json body;
    std::optional<std::optional<api::Admission>> assume;  // set for admission changes
  };
  // The writer sends admissions and evictions first, then the queues' status, then pending
  // conditions (which change no quota), so that a deep queue of new workloads never delays the
  // next admission. At most kMaxQueuedPending pending conditions wait in the writer at a time.
  constexpr size_t kMaxQueuedPending = 500;
  constexpr std::chrono::seconds kFirstPendingDelay(2);
  constexpr std::chrono::seconds kPendingMessageInterval(30);
  constexpr std::chrono::seconds kPendingSettle(5);
  std::vector<Write> writes, pending_writes;
  int64_t pending_first = 0, pending_new_reason = 0, pending_new_message = 0;  // (Stats)
  size_t pending_room = kMaxQueuedPending - std::min(kMaxQueuedPending, writer_->Queued(StatusWriter::kPending));
  auto workload_body = [](const api::Workload& w, Json status) {
    return Json{{"apiVersion", api::kApiVersion},
                {"kind", "Workload"},
                {"metadata", {{"name", w.metadata.name}, {"namespace", w.metadata.namespace_}}},
                {"status", std::move(status)}};
  };
  static const std::vector<api::Condition> kNone;
  auto conditions_of = [&](const api::Workload& w) -> const std::vector<api::Condition>& {
    return w.status ? w.status->conditions : kNone;
  };
  for (const auto& a : d.admitted) {
    const api::Workload* w = object_of(a.workload);
    std::map<std::string, ConditionUpdate> updates = {
        {std::string(wc::kQuotaReserved), {"True", "QuotaReserved", "Quota reserved in ClusterQueue " + a.cluster_queue}},
        {std::string(wc::kAdmitted), {"True", "Admitted", "The workload is admitted"}}};
    // As Kueue does on a new reservation: an earlier eviction or preemption is no longer active
    // (whoever acts on "Evicted" must not evict this admission again).
    for (std::string_view type : {wc::kEvicted, wc::kPreempted}) {
      const api::Condition* c = api::FindCondition(conditions_of(*w), type);
      if (c && c->status == api::ConditionStatus::kTrue) {
        updates[std::string(type)] = {"False", "QuotaReserved", "Previously: " + c->message};
      }
    }
    // (What the cache will hold once the write is back: the written admission, read as the
    // watch reads it.)
    Json admission_json = AdmissionJson(a);
    api::Admission assumed;
    (void)api::DecodeValue(admission_json, "admission", assumed);
    Json status = {{"admission", std::move(admission_json)}, {"conditions", OwnedConditions(conditions_of(*w), updates, now)}};
    writes.push_back({w->metadata.namespace_, w->metadata.name, workload_body(*w, std::move(status)), std::optional<api::Admission>(std::move(assumed))});
  }
  for (const auto& p : d.preempted) {
    const api::Workload* w = object_of(p.workload);
    const std::string message = PreemptionMessage(p);
    Json status = {{"conditions", OwnedConditions(conditions_of(*w),
                                                  {{std::string(wc::kQuotaReserved), {"False", "Preempted", message}},
                                                   {std::string(wc::kAdmitted), {"False", "NoReservation", "The workload has no reservation"}},
                                                   {std::string(wc::kEvicted), {"True", "Preempted", message}},
                                                   {std::string(wc::kPreempted), {"True", admission::ToString(p.reason), message}},
                                                   {std::string(wc::kRequeued), {"True", "Preempted", "Requeued after preemption"}}},
                                                  now)}};
    writes.push_back({w->metadata.namespace_, w->metadata.name, workload_body(*w, std::move(status)), std::optional<api::Admission>()});
  }
  // stopPolicy HoldAndDrain: the queue's admitted workloads are evicted too (Hold lets them run).
  std::set<std::string> draining_cqs, draining_lqs;
  for (const auto& cq : state.cluster_queues)
    if (cq.spec.stop_policy == api::StopPolicy::kHoldAndDrain) draining_cqs.insert(cq.metadata.name);
  for (const auto& lq : state.local_queues)
    if (lq.spec.stop_policy == api::StopPolicy::kHoldAndDrain) draining_lqs.insert(lq.metadata.namespace_ + "/" + lq.metadata.name);
  std::set<std::string> drained;
  if (!draining_cqs.empty() || !draining_lqs.empty()) {
    std::set<std::string> decided;
    for (const auto& a : d.admitted) decided.insert(a.workload);
    for (const auto& p : d.preempted) decided.insert(p.workload);
    for (size_t i = 0; i < snapshot.workloads.size(); ++i) {
      const api::Workload& w = snapshot_builder_.ObjectAt(i);  // (state.workloads has only the changed ones)
      if (!w.status || !w.status->admission) continue;
      const std::string key = w.metadata.namespace_ + "/" + w.metadata.name;
      if (decided.count(key) || IsFinished(w)) continue;
      const bool by_cq = draining_cqs.count(w.status->admission->cluster_queue) > 0;
      if (!by_cq && !draining_lqs.count(w.metadata.namespace_ + "/" + w.spec.queue_name)) continue;
      const std::string reason = by_cq ? "ClusterQueueStopped" : "LocalQueueStopped";
      const std::string message = by_cq ? "The ClusterQueue is stopped" : "The LocalQueue is stopped";
      Json status = {{"conditions", OwnedConditions(conditions_of(w),
                                                    {{std::string(wc::kQuotaReserved), {"False", reason, message}},
                                                     {std::string(wc::kAdmitted), {"False", "NoReservation", "The workload has no reservation"}},
                                                     {std::string(wc::kEvicted), {"True", reason, message}}},
                                                    now)}};
      writes.push_back({w.metadata.namespace_, w.metadata.name, workload_body(w, std::move(status)), std::optional<api::Admission>()});
      drained.insert(key);
      if (metrics_) metrics_->Add("kueue_evicted_workloads_total", {{"cluster_queue", w.status->admission->cluster_queue}, {"reason", reason}});
    }
  }
  // A workload waiting for quota gets its reason once it has been the head of its ClusterQueue
  // for kFirstPendingDelay (Kueue writes one when the head is tried and does not fit): a deep
  // queue must not cost a status write per waiting workload, nor a busy queue one per workload
  // passing through its head, which on a busy apiserver delays the admissions themselves (in
  // Kueue's baseline scenario, pending reasons were 14.6k of rota's 37.6k status writes when the
  // first 10 of each queue got one, and 10.3k of 33.2k when every head did at once).
  // Reasons particular to a workload (no such LocalQueue, more than the quota can ever give, ...)
  // are written whatever its place.
  std::unordered_map<std::string, Head> heads;
  for (const auto& p : d.pending) {
    if (p.reason == "WaitingForQuota") {
      if (p.position != 0) continue;
      const admission::WorkloadSpec& spec = snapshot.workloads[p.index];
      auto was = heads_.find(spec.cluster_queue);
      const auto since = was != heads_.end() && was->second.key == spec.key ? was->second.since : pass_start;
      heads.emplace(spec.cluster_queue, Head{spec.key, since});
      if (pass_start - since < kFirstPendingDelay) {
        WakeAt(since + kFirstPendingDelay);
        continue;
      }
    }
    const api::Workload& w = snapshot_builder_.ObjectAt(p.index);
    if (w.status && w.status->admission) continue;  // evicted this pass; its write is above
    const api::Condition* qr = api::FindCondition(conditions_of(w), wc::kQuotaReserved);
    if (qr && qr->status == api::ConditionStatus::kFalse && qr->reason == p.reason && qr->message == p.message) continue;
    // Pending reasons are for people; they must not crowd out admissions at the apiserver. A new
    // workload gets its first one once it has waited kFirstPendingDelay (most are admitted
    // sooner); a reason that stays the same with a new message ("3 more needed" -> "2 more") is
    // rewritten at most every kPendingMessageInterval. A change of reason is written at once.
    const std::string key = w.metadata.namespace_ + "/" + w.metadata.name;
    // Our eviction of it is not in the cache yet: its cached conditions are stale, and a pending
    // condition built on them would undo the eviction's.
    if (assumed_.count(key)) continue;
    const bool same_reason = qr && qr->status == api::ConditionStatus::kFalse && qr->reason == p.reason;
    auto last = pending_written_.find(key);
    // Already queued or written and not yet seen back.
    if (last != pending_written_.end() && last->second.reason == p.reason && last->second.message == p.message &&
        pass_start - last->second.at < kPendingSettle) {
      continue;
    }
    if (!qr) {
      auto created = api::ParseTime(w.metadata.creation_timestamp);
      if (created.ok() && state.now - *created < kFirstPendingDelay.count()) {
        WakeAt(pass_start + kFirstPendingDelay);
        continue;
      }
    } else if (same_reason && last != pending_written_.end() && pass_start - last->second.at < kPendingMessageInterval) {
      WakeAt(last->second.at + kPendingMessageInterval);
      continue;
    }
    if (pending_room == 0) {
      WakeAt(pass_start + std::chrono::seconds(1));  // the writer is behind: try again shortly
      continue;
    }
    --pending_room;
    if (!qr || qr->status != api::ConditionStatus::kFalse) {
      ++pending_first;
    } else if (same_reason) {
      ++pending_new_message;
    } else {
      ++pending_new_reason;
    }
    Json status = {{"conditions", OwnedConditions(conditions_of(w), {{std::string(wc::kQuotaReserved), {"False", std::string(p.reason), std::string(p.message)}}}, now)}};
    pending_writes.push_back({w.metadata.namespace_, w.metadata.name, workload_body(w, std::move(status)), std::nullopt});
    pending_written_[key] = {pass_start, std::string(p.reason), std::string(p.message)};
  }
  // A pass that stopped at its limit did not reach every queue's head: the heads it did not
  // reach keep the time they became heads.
  if (d.not_considered > 0) heads.insert(heads_.begin(), heads_.end());
  heads_ = std::move(heads);
  for (auto it = pending_written_.begin(); it != pending_written_.end();) {
    it = object_of(it->first) ? std::next(it) : pending_written_.erase(it);
  }
  for (Write& wr : writes) {
    const std::string key = wr.ns + "/" + wr.name;
    pending_written_.erase(key);  // admitted or evicted: a later pending reason is new again
    const uint64_t seq =
        writer_->Enqueue(StatusWriter::kAdmission, {"workloads", wr.ns, wr.name, std::move(wr.body)}, wr.assume.has_value());
    if (wr.assume) assumed_[key] = Assumed{*wr.assume, seq, ""};
  }

  // Queue status from the state after these decisions.
  // (Applied to the kept snapshot's entries, which are therefore made again at the next pass.)
  for (const auto& p : d.preempted) snapshot_builder_.Mutable(p.workload)->admission.reset();
  for (const auto& k : drained)
    if (auto* w = snapshot_builder_.Mutable(k)) w->admission.reset();
  for (const auto& a : d.admitted) snapshot_builder_.Mutable(a.workload)->admission = admission::AdmissionSpec{a.cluster_queue, a.pod_sets};
  // The pass's reason for each pending workload, by its index: 1 waiting for quota, 2 any other
  // (0: not among the pending decisions, such as a victim of this pass).
  std::vector<uint8_t> pending_kind(snapshot.workloads.size(), 0);
  size_t waiting = 0;  // (all of them: whether the pass was idle, below)
  for (const auto& p : d.pending) {
    pending_kind[p.index] = p.reason == "WaitingForQuota" ? 1 : 2;
    waiting += pending_kind[p.index] == 1;
  }
  // By name; the views point into the kept snapshot, the builder's queue names and
  // usage_key_numbers_, which stay as they are for the rest of the pass. Workloads are counted by
  // their queues' numbers first (see SnapshotBuilder::QueueNumbers), and by name after, per queue;
  // an admitted workload whose admission names another ClusterQueue than its LocalQueue points to
  // now is counted by name. What an admitted workload adds is kept from pass to pass while its
  // entry stays the same (SnapshotBuilder::StampOf): reading every admission's flavors and usage
  // by name again was about a tenth of the loop's CPU in a profile of Kueue's large-scale scenario.
  CountsByName cq_counts, lq_counts;
  struct Tally {
    int32_t pending = 0, waiting = 0, inadmissible = 0, admitted = 0;
    std::vector<std::pair<uint32_t, int64_t>> usage;  // (usage key, milli); few: a list
  };
  std::vector<Tally> by_cq(snapshot_builder_.QueueNumbers()), by_lq(snapshot_builder_.QueueNumbers());
  auto add_usage = [](std::vector<std::pair<uint32_t, int64_t>>& usage, const EntryUsage& e) {
    for (const auto& [key, amount] : e.usage) AddUsage(usage, key, amount);
  };
  auto add_admitted = [&](QueueCounts& c, const Tally& t) {
    c.admitted += t.admitted;
    for (const auto& [key, amount] : t.usage) {
      const auto& [flavor, resource] = *usage_keys_[key];
      c.usage[{flavor, resource}] += amount;
    }
  };
  if (usage_key_numbers_.size() > kMaxUsageKeys) {  // (flavors come and go; start the table again)
    usage_keys_.clear();
    usage_key_numbers_.clear();
    entry_usage_.clear();
  }
  entry_usage_.resize(snapshot.workloads.size());
  for (size_t i = 0; i < snapshot.workloads.size(); ++i) {
    const admission::WorkloadSpec& w = snapshot.workloads[i];
    const uint32_t cq = snapshot_builder_.ClusterQueueNumberOf(i), lq = snapshot_builder_.LocalQueueNumberOf(i);
    if (w.admission) {
      EntryUsage& e = entry_usage_[i];
      if (e.stamp != snapshot_builder_.StampOf(i)) e = UsageOf(i);
      Tally* by_number = e.in_own_cluster_queue ? &by_cq[cq] : nullptr;
      if (by_number) {
        ++by_number->admitted;
        add_usage(by_number->usage, e);
      } else {
        Tally t;
        t.admitted = 1;
        add_usage(t.usage, e);
        add_admitted(cq_counts[w.admission->cluster_queue], t);
      }
      if (lq != api::SnapshotBuilder::kNoQueue) {
        ++by_lq[lq].admitted;
        add_usage(by_lq[lq].usage, e);
      }
    } else if (cq != api::SnapshotBuilder::kNoQueue) {
      Tally& c = by_cq[cq];
      ++c.pending;
      if (pending_kind[i] == 1) ++c.waiting;
      if (pending_kind[i] == 2) ++c.inadmissible;
      ++by_lq[lq].pending;
    }
  }
  auto merge = [&](QueueCounts& c, const Tally& t) {
    c.pending = t.pending;
    c.waiting = t.waiting;
    c.inadmissible = t.inadmissible;
    add_admitted(c, t);
  };
  for (uint32_t n = 0; n < by_cq.size(); ++n) {
    if (by_cq[n].pending > 0 || by_cq[n].admitted > 0) merge(cq_counts[snapshot_builder_.QueueName(n)], by_cq[n]);
    if (by_lq[n].pending > 0 || by_lq[n].admitted > 0) merge(lq_counts[snapshot_builder_.QueueName(n)], by_lq[n]);
  }
  std::set<std::string> flavor_names;
  for (const auto& f : state.flavors) flavor_names.insert(f.metadata.name);
  std::vector<StatusWriter::Write> queue_writes;
  const auto queue_interval =
      QueueStatusInterval(state.cluster_queues.size() + state.local_queues.size(), apiserver_.behind());
  auto usage_json = [](const std::vector<api::ResourceGroup>& groups, const QueueCounts& c, bool borrowed_from_nominal) {
    Json out = Json::array();
    for (const auto& g : groups) {
      for (const auto& f : g.flavors) {
        Json resources = Json::array();
        for (const auto& q : f.resources) {
          auto it = c.usage.find({f.name, q.name});
          const int64_t total = it == c.usage.end() ? 0 : it->second;
          Json r = {{"name", q.name}, {"total", Amount(q.name, total)}};
          r["borrowed"] = Amount(q.name, borrowed_from_nominal ? std::max<int64_t>(0, total - q.nominal_quota.milli()) : 0);
          resources.push_back(r);
        }
        out.push_back({{"name", f.name}, {"resources", resources}});
      }
    }
    return out;
  };
  // (Memos of queues that are gone are dropped now and then.)
  if (queue_memo_.size() > 2 * (state.cluster_queues.size() + state.local_queues.size()) + 64) queue_memo_.clear();
  std::string flavor_versions;
  for (const auto& f : state.flavors) flavor_versions.append(f.metadata.name).append("@").append(f.metadata.resource_version).append(",");
  for (const auto& cq : state.cluster_queues) {
    const QueueCounts& c = CountsOf(cq_counts, cq.metadata.name);
    const std::string memo_key = "clusterqueues/" + cq.metadata.name;
    std::string versions = cq.metadata.resource_version + "|" + flavor_versions;
    const bool memo_ok = !cq.metadata.resource_version.empty();
    auto memo = queue_memo_.find(memo_key);
    if (memo_ok && memo != queue_memo_.end() && SameAsMemo(memo->second, versions, c)) continue;
    if (!QueueStatusDue(memo_key, c, pass_start, queue_interval, pass_number)) continue;
    std::string missing;
    for (const auto& g : cq.spec.resource_groups)
      for (const auto& f : g.flavors)
        if (!flavor_names.count(f.name)) missing += (missing.empty() ? "" : ", ") + f.name;
    ConditionUpdate active{"True", "Ready", "Can admit new workloads"};
    if (cq.spec.stop_policy != api::StopPolicy::kNone) active = {"False", "Stopped", "ClusterQueue is stopped"};
    else if (!missing.empty()) active = {"False", "FlavorNotFound", "Can't admit new workloads: references missing ResourceFlavor(s): " + missing};
    const Json usage = usage_json(cq.spec.resource_groups, c, true);
    Json status = {{"pendingWorkloads", c.pending},
                   {"reservingWorkloads", c.admitted},
                   {"admittedWorkloads", c.admitted},
                   {"flavorsReservation", usage},
                   {"flavorsUsage", usage}};
    // Unchanged? Compare with what the object has (conditions by status, reason and message).
    const api::ClusterQueueStatus current = cq.status.value_or(api::ClusterQueueStatus{});
    const api::Condition* cur_active = api::FindCondition(current.conditions, "Active");
    Json current_json = api::EncodeValue(current);
    bool same = cur_active && std::string(api::EnumName(cur_active->status)) == active.status &&
                cur_active->reason == active.reason && cur_active->message == active.message;
    for (const char* k : {"pendingWorkloads", "reservingWorkloads", "admittedWorkloads", "flavorsReservation", "flavorsUsage"}) {
      same = same && current_json.contains(k) && current_json[k] == status[k];
    }
    if (same) {
      if (memo_ok) queue_memo_[memo_key] = MemoOf(std::move(versions), c);
      continue;
    }
    const std::string ltt = cur_active && std::string(api::EnumName(cur_active->status)) == active.status ? cur_active->last_transition_time : now;
    status["conditions"] = Json::array({{{"type", "Active"}, {"status", active.status}, {"reason", active.reason},
                                         {"message", active.message}, {"lastTransitionTime", ltt}}});
    QueueStatusWritten(memo_key, c, pass_start);
    queue_writes.push_back({apiclient::resources::kClusterQueues.plural, "", cq.metadata.name,
                            {{"apiVersion", api::kApiVersion}, {"kind", "ClusterQueue"},
                             {"metadata", {{"name", cq.metadata.name}}}, {"status", std::move(status)}}});
  }
  std::unordered_map<std::string_view, const api::ClusterQueue*> cq_by_name;
  for (const auto& cq : state.cluster_queues) cq_by_name.emplace(cq.metadata.name, &cq);
  for (const auto& lq : state.local_queues) {
    const std::string key = lq.metadata.namespace_ + "/" + lq.metadata.name;
    const QueueCounts& c = CountsOf(lq_counts, key);  // (`key` dies with this iteration)
    static const std::vector<api::ResourceGroup> kNoGroups;
    const auto cq = cq_by_name.find(lq.spec.cluster_queue);
    const std::string memo_key = "localqueues/" + key;
    // (Of its ClusterQueue the spec counts, whose generation does not move with the status.)
    std::string versions = lq.metadata.resource_version + "|";
    if (cq == cq_by_name.end()) versions += "-";
    else if (cq->second->metadata.generation) versions += "#" + std::to_string(*cq->second->metadata.generation);
    else versions += cq->second->metadata.resource_version;
    const bool memo_ok = !lq.metadata.resource_version.empty();
    auto memo = queue_memo_.find(memo_key);
    if (memo_ok && memo != queue_memo_.end() && SameAsMemo(memo->second, versions, c)) continue;
    if (!QueueStatusDue(memo_key, c, pass_start, queue_interval, pass_number)) continue;
    const Json usage = usage_json(cq == cq_by_name.end() ? kNoGroups : cq->second->spec.resource_groups, c, false);
    Json status = {{"pendingWorkloads", c.pending},
                   {"reservingWorkloads", c.admitted},
                   {"admittedWorkloads", c.admitted},
                   {"flavorsReservation", usage},
                   {"flavorsUsage", usage}};
    Json current_json = api::EncodeValue(lq.status.value_or(api::LocalQueueStatus{}));
    bool same = true;
    for (const char* k : {"pendingWorkloads", "reservingWorkloads", "admittedWorkloads", "flavorsReservation", "flavorsUsage"}) {
      same = same && current_json.contains(k) && current_json[k] == status[k];
    }
    if (same) {
      if (memo_ok) queue_memo_[memo_key] = MemoOf(std::move(versions), c);
      continue;
    }
    QueueStatusWritten(memo_key, c, pass_start);
    queue_writes.push_back({apiclient::resources::kLocalQueues.plural, lq.metadata.namespace_, lq.metadata.name,
                            {{"apiVersion", api::kApiVersion}, {"kind", "LocalQueue"},
                             {"metadata", {{"name", lq.metadata.name}, {"namespace", lq.metadata.namespace_}}},
                             {"status", std::move(status)}}});
  }
  // A held status of a queue this pass did not find changed (up to date on the object again,
  // skipped as such by its memo, or gone) is not wanted any more.
  std::erase_if(held_queue_status_, [&](const auto& e) { return e.second.pass != pass_number; });

  // Metrics first, so that whoever sees the status this pass writes finds them agreeing.
  if (metrics_) Record(state, d, cq_counts, pass_seconds);
  for (StatusWriter::Write& qw : queue_writes) writer_->Enqueue(StatusWriter::kQueueStatus, std::move(qw));
  for (Write& pw : pending_writes) {
    writer_->Enqueue(StatusWriter::kPending, {"workloads", pw.ns, pw.name, pw.body});
  }
  if (events_) {
    // Kueue's event reasons, on the Workloads whose status this pass queued.
    struct Ev {
      const api::Workload* w;
      std::string type, reason, message;
    };
    std::vector<Ev> evs;
    for (const auto& a : d.admitted) {
      const api::Workload* w = object_of(a.workload);
      evs.push_back({w, "Normal", "QuotaReserved", "Quota reserved in ClusterQueue " + a.cluster_queue});
      evs.push_back({w, "Normal", "Admitted", "Admitted by ClusterQueue " + a.cluster_queue});
    }
    for (const auto& p : d.preempted) {
      const api::Workload* w = object_of(p.workload);
      evs.push_back({w, "Normal", "Preempted", PreemptionMessage(p)});
      evs.push_back({w, "Normal", "Evicted", "Evicted: " + PreemptionMessage(p)});
    }
    for (const auto& pw : pending_writes) {
      const api::Workload* w = object_of(pw.ns + "/" + pw.name);
      if (!w) continue;
      const Json& c = pw.body["status"]["conditions"];
      for (const auto& cond : c)
        if (cond["type"] == wc::kQuotaReserved) evs.push_back({w, "Warning", "Pending", cond["message"]});
    }
    // Off the scheduling loop: the next pass does not wait for Events.
    for (const Ev& e : evs) {
      events_->Post({std::string(api::kApiVersion), "Workload", e.w->metadata.namespace_, e.w->metadata.name, e.w->metadata.uid},
                    e.type, e.reason, e.message);
    }
  }
  for (const auto& a : d.admitted) log_("info", "admitted " + a.workload + " in ClusterQueue " + a.cluster_queue);
  for (const auto& p : d.preempted) {
    log_("info", "preempted " + p.workload + " for " + p.preemptor + " (" + admission::ToString(p.reason) + ")");
  }
  // Idle: no workload waits for quota (those pending for another reason, such as a flavor that
  // does not exist or more than the quota can ever give, wait for a change of spec, which is
  // urgent) and the pass decided nothing.
  last_pass_idle_ = waiting == 0 && d.admitted.empty() && d.preempted.empty() && !stopped_early && drained.empty();
  // What the pass did and what it waited for, for whoever wants to know why work waits (debug).
  auto ms = [](auto d) { return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()); };
  log_("debug", "pass " + std::to_string(pass_number) + ": " + std::to_string(d.admitted.size()) + " admitted, " +
                    std::to_string(d.preempted.size()) + " preempted, " + std::to_string(deferred) +
                    " admissions and " + std::to_string(d.not_considered) + " workloads left to the next pass, " +
                    std::to_string(d.pending.size()) + " pending (" + std::to_string(waiting) +
                    " waiting for quota), " + std::to_string(assumed_.size()) + " writes not seen back yet, " +
                    std::to_string(pending_writes.size()) + " pending reasons, " + std::to_string(queue_writes.size()) +
                    " queue statuses; after " + ms(batch_waited_) + " ms of batch and " + ms(writer_waited_) +
                    " ms waiting for the writer; took " +
                    ms(std::chrono::steady_clock::now() - pass_start) + " ms");
  std::lock_guard<std::mutex> l(mu_);
  ++stats_.passes;
  stats_.admitted += static_cast<int64_t>(d.admitted.size());
  stats_.preempted += static_cast<int64_t>(d.preempted.size());
  stats_.pending_first += pending_first;
  stats_.pending_new_reason += pending_new_reason;
  stats_.pending_new_message += pending_new_message;
  workspace_.Recycle(std::move(d));
}

QueueController::EntryUsage QueueController::UsageOf(size_t i) {
  const admission::WorkloadSpec& w = snapshot_builder_.snapshot().workloads[i];
  EntryUsage e;
  e.stamp = snapshot_builder_.StampOf(i);
  if (!w.admission) return e;
  const uint32_t cq = snapshot_builder_.ClusterQueueNumberOf(i);
  e.in_own_cluster_queue = cq != api::SnapshotBuilder::kNoQueue && snapshot_builder_.QueueName(cq) == w.admission->cluster_queue;
  for (const auto& ps : w.admission->pod_sets) {
    for (const auto& [resource, flavor] : ps.flavors) {
      const auto u = ps.usage.find(resource);
      const int64_t amount = u == ps.usage.end() ? 0 : u->second;
      const auto [it, added] = usage_key_numbers_.try_emplace({flavor, resource}, static_cast<uint32_t>(usage_keys_.size()));
      if (added) usage_keys_.push_back(&it->first);
      AddUsage(e.usage, it->second, amount);
    }
  }
  return e;
}

bool QueueController::SameAsMemo(const QueueMemo& memo, const std::string& versions, const QueueCounts& counts) {
  return memo.versions == versions && SameCounts(memo, counts);
}

bool QueueController::SameCounts(const QueueMemo& memo, const QueueCounts& counts) {
  if (memo.pending != counts.pending || memo.admitted != counts.admitted || memo.usage.size() != counts.usage.size()) {
    return false;
  }
  size_t i = 0;
  for (const auto& [fr, amount] : counts.usage) {
    const auto& [flavor, resource, milli] = memo.usage[i++];
    if (flavor != fr.first || resource != fr.second || milli != amount) return false;
  }
  return true;
}

QueueController::QueueMemo QueueController::MemoOf(std::string versions, const QueueCounts& counts) {
  QueueMemo m{std::move(versions), counts.pending, counts.admitted, {}};
  for (const auto& [fr, amount] : counts.usage) m.usage.emplace_back(std::string(fr.first), std::string(fr.second), amount);
  return m;
}

const QueueController::QueueCounts& QueueController::CountsOf(const CountsByName& counts, std::string_view name) {
  static const QueueCounts kNone;
  const auto it = counts.find(name);
  return it == counts.end() ? kNone : it->second;
}

void QueueController::Record(const api::ClusterState& state, const admission::Decisions& d, const CountsByName& cq_counts,
                             double pass_seconds) {
  Metrics& m = *metrics_;
  auto spec_of = [&](const std::string& key) { return snapshot_builder_.Find(key); };
  const double now = static_cast<double>(std::time(nullptr));
  // Admissions by ClusterQueue, so that each queue's series are updated once a pass.
  struct Admitted {
    double count = 0;
    std::vector<double> waits;  // seconds since creation, of those that have a creation time
  };
  std::map<std::string_view, Admitted> admitted;
  for (const auto& a : d.admitted) {
    Admitted& q = admitted[a.cluster_queue];
    ++q.count;
    const auto* w = spec_of(a.workload);
    if (w->creation_time > 0) q.waits.push_back(std::max(0.0, now - static_cast<double>(w->creation_time)));
  }
  for (const auto& [name, q] : admitted) {
    const Labels cq = {{"cluster_queue", std::string(name)}};
    m.Add("kueue_quota_reserved_workloads_total", cq, q.count);
    m.Add("kueue_admitted_workloads_total", cq, q.count);
    if (q.waits.empty()) continue;
    m.Observe("kueue_admission_wait_time_seconds", cq, q.waits);
    m.Observe("kueue_quota_reserved_wait_time_seconds", cq, q.waits);
  }
  for (const auto& p : d.preempted) {
    m.Add("kueue_evicted_workloads_total", {{"cluster_queue", p.cluster_queue}, {"reason", "Preempted"}});
    const auto* preemptor = spec_of(p.preemptor);
    m.Add("kueue_preempted_workloads_total",
          {{"preempting_cluster_queue", preemptor->cluster_queue}, {"reason", admission::ToString(p.reason)}});
  }
  m.Add("kueue_admission_attempts_total", {{"result", "success"}}, static_cast<double>(d.admitted.size()));
  m.Add("kueue_admission_attempts_total", {{"result", "inadmissible"}}, static_cast<double>(d.pending.size()));
  m.Observe("kueue_admission_attempt_duration_seconds", {{"result", d.admitted.empty() ? "inadmissible" : "success"}}, pass_seconds);

  // Gauges: the state after this pass. Those of a ClusterQueue whose counts and spec are as the
  // last pass found them stay as they are (with a thousand queues, making every series again was
  // a large part of a pass); the others are replaced at once, and those of a queue gone dropped.
  static const std::vector<std::string> kGauges = {
      "kueue_pending_workloads", "kueue_cluster_queue_resource_usage", "kueue_cluster_queue_resource_reservation",
      "kueue_cluster_queue_nominal_quota", "kueue_cluster_queue_borrowing_limit", "kueue_cluster_queue_lending_limit",
      "kueue_cluster_queue_status", "kueue_reserving_active_workloads", "kueue_admitted_active_workloads"};
  // A queue whose spec is unchanged keeps its series, and only those that follow its counts are
  // set again, through the slots kept in its memo (at large scale nearly every queue's counts
  // change every pass, and making its dozen label sets again and replacing them in the registry
  // was a sixth of a pass).
  Metrics::GaugeValues gauges;
  std::vector<std::string> owners;
  std::vector<std::pair<Metrics::GaugeSlot, double>> by_slot;
  auto set = [&](const char* gauge, const Labels& labels, double v) { gauges[gauge][labels] = v; };
  // The values of the series that follow a queue's counts, in the order of count_series below.
  auto count_values = [](const api::ClusterQueue& cq, const QueueCounts& c) {
    std::vector<double> v = {static_cast<double>(c.waiting), static_cast<double>(c.inadmissible),
                             static_cast<double>(c.admitted), static_cast<double>(c.admitted)};
    for (const auto& g : cq.spec.resource_groups) {
      for (const auto& f : g.flavors) {
        for (const auto& q : f.resources) {
          const auto u = c.usage.find({std::string_view(f.name), std::string_view(q.name)});
          const double used = u == c.usage.end() ? 0 : static_cast<double>(u->second) / 1000.0;
          v.push_back(used);
          v.push_back(used);
        }
      }
    }
    return v;
  };
  auto count_series = [](const api::ClusterQueue& cq) {
    const std::string& name = cq.metadata.name;
    std::vector<std::pair<const char*, Labels>> series = {
        {"kueue_pending_workloads", {{"cluster_queue", name}, {"status", "active"}}},
        {"kueue_pending_workloads", {{"cluster_queue", name}, {"status", "inadmissible"}}},
        {"kueue_reserving_active_workloads", {{"cluster_queue", name}}},
        {"kueue_admitted_active_workloads", {{"cluster_queue", name}}}};
    for (const auto& g : cq.spec.resource_groups) {
      for (const auto& f : g.flavors) {
        for (const auto& q : f.resources) {
          const Labels l = {{"cluster_queue", name}, {"flavor", f.name}, {"resource", q.name}};
          series.push_back({"kueue_cluster_queue_resource_usage", l});
          series.push_back({"kueue_cluster_queue_resource_reservation", l});
        }
      }
    }
    return series;
  };
  // The queues whose series are made again, each with its count series (to find their slots once
  // the registry holds them).
  std::vector<std::pair<const api::ClusterQueue*, std::vector<std::pair<const char*, Labels>>>> remade;
  std::unordered_set<std::string_view> present;
  for (const auto& cq : state.cluster_queues) {
    const std::string& name = cq.metadata.name;
    present.insert(name);
    const QueueCounts& c = CountsOf(cq_counts, name);
    // (The spec by its generation, which the status does not move; by resourceVersion without one.)
    std::string version = cq.metadata.generation ? "#" + std::to_string(*cq.metadata.generation) : cq.metadata.resource_version;
    auto memo = gauge_memo_.find(name);
    const bool same_spec = memo != gauge_memo_.end() && !version.empty() && memo->second.version == version;
    if (same_spec && memo->second.waiting == c.waiting && memo->second.inadmissible == c.inadmissible &&
        SameCounts(memo->second.counts, c)) {
      continue;
    }
    const std::vector<double> values = count_values(cq, c);
    if (same_spec && memo->second.slots.size() == values.size()) {
      for (size_t i = 0; i < values.size(); ++i) by_slot.emplace_back(memo->second.slots[i], values[i]);
      memo->second.waiting = c.waiting;
      memo->second.inadmissible = c.inadmissible;
      memo->second.counts = MemoOf("", c);
      continue;
    }
    gauge_memo_[name] = GaugeMemo{version, c.waiting, c.inadmissible, MemoOf("", c), {}};
    owners.push_back(name);
    const auto& series = remade.emplace_back(&cq, count_series(cq)).second;
    for (size_t i = 0; i < series.size(); ++i) set(series[i].first, series[i].second, values[i]);
    const bool active = cq.spec.stop_policy == api::StopPolicy::kNone;
    for (const char* st : {"pending", "active", "terminating"}) {
      set("kueue_cluster_queue_status", {{"cluster_queue", name}, {"status", st}},
            (std::string(st) == "active") == active && std::string(st) != "terminating" ? 1 : 0);
    }
    for (const auto& g : cq.spec.resource_groups) {
      for (const auto& f : g.flavors) {
        for (const auto& q : f.resources) {
          const Labels l = {{"cluster_queue", name}, {"flavor", f.name}, {"resource", q.name}};
          set("kueue_cluster_queue_nominal_quota", l, static_cast<double>(q.nominal_quota.milli()) / 1000.0);
          if (q.borrowing_limit) set("kueue_cluster_queue_borrowing_limit", l, static_cast<double>(q.borrowing_limit->milli()) / 1000.0);
          if (q.lending_limit) set("kueue_cluster_queue_lending_limit", l, static_cast<double>(q.lending_limit->milli()) / 1000.0);
        }
      }
    }
  }
  for (auto it = gauge_memo_.begin(); it != gauge_memo_.end();) {
    if (present.count(it->first)) {
      ++it;
      continue;
    }
    owners.push_back(it->first);
    it = gauge_memo_.erase(it);
  }
  if (!by_slot.empty()) m.SetGaugeValues(by_slot);
  if (!owners.empty()) m.ReplaceGaugeSeries(kGauges, "cluster_queue", owners, std::move(gauges));
  // The slots of the series just made (should one be missing, the queue's series are made again
  // at its next change rather than set by slot).
  for (const auto& [cq, series] : remade) {
    std::vector<Metrics::GaugeSlot> slots = m.GaugeSlots(series);
    if (std::find(slots.begin(), slots.end(), nullptr) != slots.end()) slots.clear();
    gauge_memo_[cq->metadata.name].slots = std::move(slots);
  }
}

}  // namespace rota::controller
