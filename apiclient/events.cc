#include "rota/apiclient/events.h"

#include "rota/apiclient/thread_name.h"

#include <cstdio>
#include <ctime>

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

}  // namespace

EventRecorder::EventRecorder(Client& client, std::string component, EventLimits limits)
    : client_(client), component_(std::move(component)), limits_(limits),
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
  for (auto& t : senders_) t.join();
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
    if (senders_.empty()) {
      for (int i = 0; i < 2; ++i) senders_.emplace_back([this] {
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
  for (;;) {
    bucket_.Wait();  // a token per event, taken before the event, so that it waits in the queue
    Queued q;
    {
      std::unique_lock<std::mutex> l(queue_mu_);
      queue_cv_.wait(l, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      q = std::move(queue_.front());
      queue_.pop_front();
    }
    Record(q.object, q.type, q.reason, q.message);
  }
}

bool EventRecorder::Record(const ObjectReference& object, const std::string& type,
                           const std::string& reason, const std::string& message) {
  Clock& clock = client_.clock();
  const auto now = clock.Now();
  const std::string stamp = Rfc3339(clock.WallNow());
  const std::string object_key = object.uid.empty() ? object.ns + "/" + object.kind + "/" + object.name : object.uid;
  const auto key = std::make_tuple(object_key, type, reason, message);
  std::unique_lock<std::mutex> l(mu_);
  // Forget what no longer matters (older than the 10-minute window, buckets full again), so that
  // a long-running controller over many short-lived objects does not grow without bound.
  if (now - last_prune_ > std::chrono::minutes(1)) {
    last_prune_ = now;
    seen_.EraseIf([&](const auto&, const Seen& s) { return now - s.last >= std::chrono::minutes(10); });
    buckets_.EraseIf([&](const auto&, const Bucket& b) { return Refilled(b, now) >= limits_.per_object_burst; });
  }
  Seen* seen = seen_.Find(key);
  if (seen && now - seen->last < std::chrono::minutes(10)) {
    Seen& s = *seen;
    s.count += 1;
    s.last = now;
    const std::string name = s.event_name, ns = s.event_namespace;
    const int count = s.count;
    l.unlock();
    PatchOptions o;
    o.keep = Keep::kNothing;  // the reply is not read
    auto r = client_.Patch(resources::kEvents, ns, name, PatchType::kMerge,
                           {{"count", count}, {"lastTimestamp", stamp}}, o);
    return r.ok();
  }
  // Spam filter: a token bucket per object.
  Bucket* found = buckets_.Find(object_key);
  const bool fresh = found == nullptr;
  Bucket& b = fresh ? buckets_.Put(object_key, Bucket{static_cast<double>(limits_.per_object_burst), now}) : *found;
  if (!fresh) {
    b.tokens = Refilled(b, now);
    b.last = now;
  }
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  const std::string ns = object.ns.empty() ? "default" : object.ns;
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".%llx%04llx",
                static_cast<unsigned long long>(clock.WallNow().time_since_epoch().count()),
                static_cast<unsigned long long>(++serial_ & 0xffff));
  const std::string name = object.name + suffix;
  seen_.Put(key, Seen{name, ns, 1, now});
  l.unlock();
  Json event = {{"apiVersion", "v1"},
                {"kind", "Event"},
                {"metadata", {{"name", name}, {"namespace", ns}}},
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
  return client_.Create(resources::kEvents, ns, event, Keep::kNothing).ok();
}

}  // namespace rota::apiclient
