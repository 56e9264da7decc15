#include "rota/apiclient/events.h"

#include "rota/apiclient/thread_name.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <functional>
#include <initializer_list>
#include <string_view>

namespace rota::apiclient {
namespace {

std::string Rfc3339(std::chrono::system_clock::time_point t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// A hash of the texts, each length-prefixed so that no two lists of texts run together alike.
uint64_t HashOf(std::initializer_list<std::string_view> parts) {
  std::string joined;
  for (std::string_view p : parts) {
    const uint64_t n = p.size();
    joined.append(reinterpret_cast<const char*>(&n), sizeof n).append(p);
  }
  return std::hash<std::string>{}(joined);
}

// A count's patch, whose reply is not read.
PatchOptions CountPatch() {
  PatchOptions o;
  o.keep = Keep::kNothing;
  return o;
}

}  // namespace

EventRecorder::EventRecorder(Client& client, std::string component, EventLimits limits)
    : client_(client),
      component_(std::move(component)),
      limits_(limits),
      bucket_(client.clock(), limits.qps, limits.burst),
      seen_(limits.max_remembered),
      buckets_(limits.max_remembered) {}

EventRecorder::~EventRecorder() {
  {
    std::lock_guard<std::mutex> l(queue_mu_);
    stopping_ = true;
    queue_.clear();
  }
  queue_cv_.notify_all();
  stop_cv_.notify_all();
  if (pipeline_) pipeline_->Wake();
  if (sender_.joinable()) sender_.join();
}

double EventRecorder::Refilled(const Bucket& b, Clock::TimePoint now) const {
  const double refill = std::chrono::duration<double>(now - b.last).count() /
                        std::chrono::duration<double>(limits_.per_object_refill).count();
  return std::min<double>(limits_.per_object_burst, b.tokens + refill);
}

bool EventRecorder::Post(const ObjectReference& object, const std::string& type, const std::string& reason,
                         const std::string& message) {
  {
    std::lock_guard<std::mutex> l(queue_mu_);
    if (stopping_) return false;
    if (queue_.size() >= limits_.max_queued) {
      ++dropped_;
      return false;
    }
    queue_.push_back({object, type, reason, message});
    if (!sender_.joinable()) {
      pipeline_ = client_.NewPipeline();
      sender_ = std::thread([this] {
        NameThisThread("events");
        Send();
      });
    }
  }
  queue_cv_.notify_one();
  return true;
}

uint64_t EventRecorder::dropped() const {
  std::lock_guard<std::mutex> l(queue_mu_);
  return dropped_;
}

void EventRecorder::Send() {
  // A round takes the queued events whose tokens are due within kRound (at most kMaxInFlight
  // written at once), waits for the last one's token, and starts them all; while they are in
  // flight, the next round gathers.
  constexpr auto kRound = std::chrono::milliseconds(100);
  constexpr size_t kMaxInFlight = 16;
  Clock& clock = client_.clock();
  uint64_t next_id = 0;
  // Events being created, by id and by "namespace/name": a later count of one waits for its
  // creation (a PATCH sent beside the POST could reach the apiserver first and find nothing),
  // the newest count only.
  std::map<uint64_t, std::string> creating;
  std::map<std::string, Write> counts_waiting;
  auto count = [&](const Write& w) {
    pipeline_->Patch(++next_id, resources::kEvents, w.ns, w.name, PatchType::kMerge, w.body, CountPatch());
  };
  for (;;) {
    std::vector<Queued> round;
    Clock::Duration due{0};
    {
      std::unique_lock<std::mutex> l(queue_mu_);
      if (pipeline_->in_flight() == 0) queue_cv_.wait(l, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      while (!queue_.empty() && pipeline_->in_flight() + round.size() < kMaxInFlight) {
        due = bucket_.Reserve();  // a token per event, taken before the event, so that it waits in the queue
        round.push_back(std::move(queue_.front()));
        queue_.pop_front();
        if (due >= kRound) break;
      }
    }
    if (due > Clock::Duration::zero()) {
      // The round waits for its tokens, but the recorder's destruction does not wait for them
      // (at a low `qps` that would be 1/qps per token).
      std::unique_lock<std::mutex> l(queue_mu_);
      const Clock::TimePoint until = clock.Now() + due;
      while (!stopping_ && clock.Now() < until) clock.WaitUntil(stop_cv_, l, until);
      if (stopping_) return;
    }
    for (const Queued& q : round) {
      Write w = Decide(q.object, q.type, q.reason, q.message);
      if (w.kind == Write::Kind::kCreate) {
        pipeline_->Create(++next_id, resources::kEvents, w.ns, w.body, Keep::kNothing);
        creating.emplace(next_id, w.ns + "/" + w.name);
      } else if (w.kind == Write::Kind::kCount) {
        const std::string event = w.ns + "/" + w.name;
        const bool waits =
            std::any_of(creating.begin(), creating.end(), [&](const auto& c) { return c.second == event; });
        if (waits)
          counts_waiting[event] = std::move(w);
        else
          count(w);
      }
    }
    if (pipeline_->in_flight() == 0) continue;
    // Outcomes are not read otherwise: a failed Event is not written again (client-go's
    // broadcaster gives up after a few tries too; the object's status says the same).
    for (auto& [id, result] : pipeline_->Poll(round.empty() ? kRound : std::chrono::milliseconds(0))) {
      auto c = creating.find(id);
      if (c == creating.end()) continue;
      if (auto waiting = counts_waiting.extract(c->second)) count(waiting.mapped());
      creating.erase(c);
    }
  }
}

bool EventRecorder::Record(const ObjectReference& object, const std::string& type, const std::string& reason,
                           const std::string& message) {
  Write w = Decide(object, type, reason, message);
  switch (w.kind) {
    case Write::Kind::kNone:
      return false;
    case Write::Kind::kCreate:
      return client_.Create(resources::kEvents, w.ns, w.body, Keep::kNothing).ok();
    case Write::Kind::kCount:
      return client_.Patch(resources::kEvents, w.ns, w.name, PatchType::kMerge, w.body, CountPatch()).ok();
  }
  return false;
}

EventRecorder::Write EventRecorder::Decide(const ObjectReference& object, const std::string& type,
                                           const std::string& reason, const std::string& message) {
  Clock& clock = client_.clock();
  const auto now = clock.Now();
  const std::string stamp = Rfc3339(clock.WallNow());
  const uint64_t object_key = object.uid.empty() ? HashOf({object.ns, object.kind, object.name}) : HashOf({object.uid});
  const uint64_t key = HashOf({object.uid, object.ns, object.kind, object.name, type, reason, message});
  std::unique_lock<std::mutex> l(mu_);
  // Forget what no longer matters (older than the 10-minute window, buckets full again), so that
  // a long-running controller over many short-lived objects does not grow without bound.
  if (now - last_prune_ > std::chrono::minutes(1)) {
    last_prune_ = now;
    seen_.EraseIf([&](const auto&, const Seen& s) { return now - s.last >= std::chrono::minutes(10); });
    buckets_.EraseIf([&](const auto&, const Bucket& b) { return Refilled(b, now) >= limits_.per_object_burst; });
  }
  Write w;
  Seen* seen = seen_.Find(key);
  if (seen && now - seen->last < std::chrono::minutes(10)) {
    Seen& s = *seen;
    s.count += 1;
    s.last = now;
    w.kind = Write::Kind::kCount;
    w.name = s.event_name;
    w.ns = s.event_namespace;
    w.body = {{"count", s.count}, {"lastTimestamp", stamp}};
    return w;
  }
  // Spam filter: a token bucket per object.
  Bucket* found = buckets_.Find(object_key);
  const bool fresh = found == nullptr;
  Bucket& b = fresh ? buckets_.Put(object_key, Bucket{static_cast<double>(limits_.per_object_burst), now}) : *found;
  if (!fresh) {
    b.tokens = Refilled(b, now);
    b.last = now;
  }
  if (b.tokens < 1) return w;
  b.tokens -= 1;
  w.ns = object.ns.empty() ? "default" : object.ns;
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".%llx%04llx",
                static_cast<unsigned long long>(clock.WallNow().time_since_epoch().count()),
                static_cast<unsigned long long>(++serial_ & 0xffff));
  w.name = object.name + suffix;
  seen_.Put(key, Seen{w.name, w.ns, 1, now});
  l.unlock();
  w.kind = Write::Kind::kCreate;
  w.body = {{"apiVersion", "v1"},
            {"kind", "Event"},
            {"metadata", {{"name", w.name}, {"namespace", w.ns}}},
            {"involvedObject",
             {{"apiVersion", object.api_version},
              {"kind", object.kind},
              {"namespace", object.ns},
              {"name", object.name},
              {"uid", object.uid}}},
            {"type", type},
            {"reason", reason},
            {"message", message},
            {"source", {{"component", component_}}},
            {"reportingComponent", component_},
            {"count", 1},
            {"firstTimestamp", stamp},
            {"lastTimestamp", stamp}};
  return w;
}

}  // namespace rota::apiclient
