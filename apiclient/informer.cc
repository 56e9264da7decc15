#include "rota/apiclient/informer.h"

#include <random>

#include "rota/apiclient/thread_name.h"

namespace rota::apiclient {

namespace {
// How often the apiserver sends a watch a bookmark (its cacher's defaultBookmarkFrequency).
constexpr std::chrono::seconds kBookmarkPeriod{60};
}  // namespace

std::string ObjectKey(const Json& object) {
  if (!object.is_object() || !object.contains("metadata")) return "";
  const Json& m = object["metadata"];
  const std::string ns = m.value("namespace", "");
  const std::string name = m.value("name", "");
  return ns.empty() ? name : ns + "/" + name;
}

Reflector::Reflector(Client& client, Resource resource, std::string ns, InformerOptions options)
    : client_(client), resource_(std::move(resource)), ns_(std::move(ns)), options_(std::move(options)) {}

Reflector::~Reflector() { Stop(); }

void Reflector::Start() {
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] {
    NameThisThread("watch/" + resource_.plural);
    Run();
  });
}

void Reflector::RequestStop() {
  stop_ = true;
  std::lock_guard<std::mutex> l(sleep_mu_);
  sleep_cv_.notify_all();
}

void Reflector::Stop() {
  RequestStop();
  if (thread_.joinable()) thread_.join();
}

void Reflector::Sleep(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> l(sleep_mu_);
  const auto deadline = client_.clock().Now() + d;
  while (!stop_ && client_.clock().Now() < deadline) client_.clock().WaitUntil(sleep_cv_, l, deadline);
}

void Reflector::Run() {
  Backoff backoff(options_.backoff_base, options_.backoff_cap, 1.0, std::random_device{}());
  std::mt19937 rng(std::random_device{}());
  Clock& clock = client_.clock();
  while (!stop_) {
    ListOptions lo;
    lo.label_selector = options_.label_selector;
    lo.field_selector = options_.field_selector;
    lo.limit = options_.page_size;
    lo.keep = options_.keep;
    ++lists_;
    BeginList();
    auto list = client_.ListPages(resource_, ns_, lo, [&](std::vector<Json>&& items) { ListPage(std::move(items)); });
    if (!list.ok()) {
      Report("list " + resource_.plural + ": " + list.error().ToString());
      Sleep(backoff.Next());
      continue;
    }
    std::string rv = *list;
    EndList();
    last_rv_ = rv;
    synced_ = true;

    auto healthy_since = clock.Now();
    while (!stop_) {
      WatchOptions wo;
      wo.resource_version = rv;
      wo.label_selector = options_.label_selector;
      wo.field_selector = options_.field_selector;
      wo.keep = options_.keep;
      wo.settle = options_.settle;
      const auto min = options_.min_watch_timeout.count();
      wo.timeout_seconds = static_cast<int>(min + std::uniform_int_distribution<long>(0, min > 0 ? min - 1 : 0)(rng));
      // The version of the last event applied: a watch that breaks resumes from there, not from
      // where it began (the apiserver would send again what the store already has, and the
      // handlers would see objects go back to older versions until it caught up).
      std::string seen;
      bool bookmarked = false;  // whether this watch has had a bookmark
      auto watched = client_.Watch(
          resource_, ns_, wo,
          [&](WatchEvent& e) {
            if (auto m = e.object.find("metadata"); m != e.object.end() && m->is_object())
              seen = m->value("resourceVersion", seen);
            if (e.type != "BOOKMARK")
              Apply(e.type, std::move(e.object));
            else
              bookmarked = true;
            return true;
          },
          &stop_);
      if (!seen.empty()) rv = last_rv_ = seen;
      if (watched.ok()) {
        if (!watched->resource_version.empty()) rv = watched->resource_version;
        last_rv_ = rv;
        // Silence is normal for a resource the apiserver has sent no bookmark for (it sends them
        // only once it has seen a change of that resource). Longer than the bookmark period
        // after one, it means a dead path.
        const auto idle_timeout = client_.config().watch_idle_timeout;
        if (watched->idle && bookmarked && idle_timeout > kBookmarkPeriod)
          Report("watch " + resource_.plural + ": nothing received for " +
                 std::to_string(std::chrono::duration_cast<std::chrono::seconds>(idle_timeout).count()) +
                 " s, not even a bookmark; reopening it from resourceVersion " + rv);
        if (clock.Now() - healthy_since > options_.backoff_reset_after) backoff.Reset();
        continue;  // the server ended the watch: resume from where it was
      }
      if (watched.error().retry == Retry::kRelist) {  // 410 Gone: list again at once
        Report("watch " + resource_.plural + ": " + watched.error().ToString() + "; listing again");
        break;
      }
      Report("watch " + resource_.plural + ": " + watched.error().ToString());
      if (clock.Now() - healthy_since > options_.backoff_reset_after) backoff.Reset();
      Sleep(backoff.Next());
      healthy_since = clock.Now();
    }
  }
}

}  // namespace rota::apiclient
