#pragma once

// Informers, as client-go's: a reflector lists a resource, then watches from the list's
// resourceVersion, re-listing on 410 Gone and backing off (800 ms doubling to 30 s, reset after
// 2 min of health) on other failures; a typed store keyed by "namespace/name" keeps the decoded
// objects — compact types of the caller's choosing, not whole JSON documents; handlers hear of
// adds, updates and deletes.
//
// Threads: Start() runs the reflector on a thread of its own; handlers are called on it, one at
// a time. Get/List/HasSynced may be called from any thread.

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "rota/admission/status.h"
#include "rota/apiclient/client.h"

namespace rota::apiclient {

// "namespace/name", or "name" for a cluster-scoped object.
std::string ObjectKey(const Json& object);

struct InformerOptions {
  std::string label_selector;
  std::string field_selector;
  int64_t page_size = 500;
  // What the cache keeps of each object: a controller reads no managedFields, and they are often
  // the larger part of an object (kAll keeps them).
  Keep keep = Keep::kAllButManagedFields;
  // Of the watch (WatchOptions::settle): how long events may wait to be read in one batch.
  std::chrono::milliseconds settle{0};
  // Watch timeouts are drawn from [min, 2*min) so that many informers do not reconnect together.
  std::chrono::seconds min_watch_timeout{300};
  std::chrono::milliseconds backoff_base{800};
  std::chrono::milliseconds backoff_cap{30000};
  std::chrono::seconds backoff_reset_after{120};
  // Undecodable objects are left out of the store and reported here (e.g. to a log).
  std::function<void(const std::string& message)> on_error;
};

// The untyped list-watch loop. The typed Informer<T> below keeps the store.
class Reflector {
 public:
  Reflector(Client& client, Resource resource, std::string ns, InformerOptions options);
  virtual ~Reflector();
  void Start();
  // Stops the watch and joins the thread. Idempotent.
  void Stop();
  // Asks the thread to stop without waiting (a watch notices within about a second); call this
  // on every informer first, then Stop() on each, to stop many at once.
  void RequestStop();
  bool HasSynced() const { return synced_.load(); }
  // How many times it has listed (the first list included): a test's view of re-lists.
  int64_t lists() const { return lists_.load(); }
  const std::string& last_resource_version() const { return last_rv_; }
  const Resource& resource() const { return resource_; }

 protected:
  // Called on the reflector's thread. A list arrives as BeginList, one ListPage per page (decode
  // and drop the JSON), then EndList, which replaces the store.
  virtual void BeginList() = 0;
  virtual void ListPage(std::vector<Json>&& items) = 0;
  virtual void EndList() = 0;
  virtual void Apply(const std::string& type, Json&& object) = 0;
  void Report(const std::string& message) {
    if (options_.on_error) options_.on_error(message);
  }

 private:
  void Run();
  void Sleep(std::chrono::milliseconds d);

  Client& client_;
  Resource resource_;
  std::string ns_;
  InformerOptions options_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> synced_{false};
  std::atomic<int64_t> lists_{0};
  std::string last_rv_;
  std::mutex sleep_mu_;
  std::condition_variable sleep_cv_;
  std::thread thread_;
};

template <typename T>
class Informer : public Reflector {
 public:
  // Turns one object's JSON into T. It may take parts of the document (move them out): the
  // informer drops the document right after.
  using Decoder = std::function<Result<T>(Json&)>;
  struct Handlers {
    std::function<void(const T&)> on_add;
    std::function<void(const T& old_object, const T& new_object)> on_update;
    std::function<void(const T&)> on_delete;
  };

  // Like Decoder, for a decoder that may hand out one shared object for many keys (objects of
  // which the cache keeps nothing that tells them apart).
  using SharedDecoder = std::function<Result<std::shared_ptr<const T>>(Json&)>;
  Informer(Client& client, Resource resource, std::string ns, Decoder decode, Handlers handlers = {},
           InformerOptions options = {})
      : Informer(client, std::move(resource), std::move(ns), Owning(std::move(decode)), std::move(handlers),
                 std::move(options)) {}
  Informer(Client& client, Resource resource, std::string ns, SharedDecoder decode, Handlers handlers = {},
           InformerOptions options = {})
      : Reflector(client, std::move(resource), std::move(ns), std::move(options)),
        decode_(std::move(decode)),
        handlers_(std::move(handlers)) {}
  ~Informer() override { Stop(); }

  std::shared_ptr<const T> Get(const std::string& key) const {
    std::shared_lock l(mu_);
    auto it = store_.find(key);
    return it == store_.end() ? nullptr : it->second.object;
  }
  std::vector<std::shared_ptr<const T>> List() const {
    std::shared_lock l(mu_);
    std::vector<std::shared_ptr<const T>> out;
    out.reserve(store_.size());
    for (const auto& [k, v] : store_) out.push_back(v.object);
    return out;
  }
  // Calls fn(key, object) for every object, with the store's own key (no copy of it), under the
  // store's read lock: fn must be quick and must not call back into this informer.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    std::shared_lock l(mu_);
    for (const auto& [k, v] : store_) fn(k, v.object);
  }
  size_t Size() const {
    std::shared_lock l(mu_);
    return store_.size();
  }

  // A view: the objects for which `filter` holds, kept with the store (under its lock, as each
  // change is applied) in one dense array. Walking it reads memory in order and skips the rest,
  // where walking the store visits every scattered node; a controller that looks at a few of
  // many objects each pass (the unfinished workloads among all) walks the view instead. Set it
  // before Start; the filter runs on the watch thread and must be quick.
  struct ViewEntry {
    const std::string* key;  // the store's own key
    size_t key_hash;         // std::hash<std::string> of *key, to look up without reading it
    std::shared_ptr<const T> object;
  };
  void SetView(std::function<bool(const T&)> filter) {
    std::unique_lock l(mu_);
    view_filter_ = std::move(filter);
    RebuildView();
  }
  // Calls fn(const ViewEntry&) for every object in the view, in no particular order, under the
  // store's read lock (as ForEach).
  template <typename Fn>
  void ForEachInView(Fn&& fn) const {
    std::shared_lock l(mu_);
    for (const ViewEntry& e : view_) fn(e);
  }
  size_t ViewSize() const {
    std::shared_lock l(mu_);
    return view_.size();
  }

 protected:
  static constexpr size_t kNotInView = static_cast<size_t>(-1);
  struct Entry {
    std::shared_ptr<const T> object;
    std::string resource_version;
    size_t view_pos = kNotInView;  // its place in view_
  };

  void BeginList() override { listing_.clear(); }
  void ListPage(std::vector<Json>&& items) override {
    for (Json& item : items) {
      const std::string key = ObjectKey(item);
      std::string version = ResourceVersion(item);
      auto decoded = Decode(item, key);
      if (decoded) listing_.emplace(key, Entry{std::move(decoded), std::move(version)});
      item = Json();  // free the document as soon as it is decoded
    }
  }
  void EndList() override {
    std::unordered_map<std::string, Entry> fresh;
    fresh.swap(listing_);
    std::unordered_map<std::string, Entry> old;
    {
      std::unique_lock l(mu_);
      old.swap(store_);
      store_ = fresh;
      RebuildView();
    }
    // Tell the handlers what changed between the old store and the new list; an object whose
    // resourceVersion did not change did not change (no repeated events after a re-list).
    for (const auto& [key, entry] : fresh) {
      auto it = old.find(key);
      if (it == old.end()) {
        if (handlers_.on_add) handlers_.on_add(*entry.object);
      } else if (it->second.resource_version != entry.resource_version && handlers_.on_update) {
        handlers_.on_update(*it->second.object, *entry.object);
      }
    }
    for (const auto& [key, entry] : old) {
      if (!fresh.count(key) && handlers_.on_delete) handlers_.on_delete(*entry.object);
    }
  }

  void Apply(const std::string& type, Json&& object) override {
    const std::string key = ObjectKey(object);
    if (type == "DELETED") {
      std::shared_ptr<const T> gone;
      {
        std::unique_lock l(mu_);
        auto it = store_.find(key);
        if (it == store_.end()) return;
        gone = it->second.object;
        ViewErase(it->second);
        store_.erase(it);
      }
      if (handlers_.on_delete) handlers_.on_delete(*gone);
      return;
    }
    std::string version = ResourceVersion(object);
    auto decoded = Decode(object, key);
    if (!decoded) return;
    std::shared_ptr<const T> old;
    {
      std::unique_lock l(mu_);
      auto [it, added] = store_.try_emplace(key);
      Entry& slot = it->second;
      old = slot.object;
      slot.object = decoded;
      slot.resource_version = std::move(version);
      ViewPut(it->first, slot);
    }
    if (!old) {
      if (handlers_.on_add) handlers_.on_add(*decoded);
    } else if (handlers_.on_update) {
      handlers_.on_update(*old, *decoded);
    }
  }

 private:
  static std::string ResourceVersion(const Json& object) {
    return object.contains("metadata") ? object["metadata"].value("resourceVersion", "") : "";
  }
  static SharedDecoder Owning(Decoder decode) {
    return [decode = std::move(decode)](Json& object) -> Result<std::shared_ptr<const T>> {
      Result<T> r = decode(object);
      if (!r.ok()) return r.status();
      return std::make_shared<const T>(std::move(r).value());
    };
  }
  std::shared_ptr<const T> Decode(Json& object, const std::string& key) {
    Result<std::shared_ptr<const T>> r = decode_(object);
    if (!r.ok()) {
      Report(resource().plural + " " + key + ": " + r.status().message());
      return nullptr;
    }
    return std::move(r).value();
  }

  // The view's upkeep, under mu_ held for writing.
  void ViewPut(const std::string& key, Entry& e) {
    if (!view_filter_) return;
    if (!view_filter_(*e.object)) {
      ViewErase(e);
    } else if (e.view_pos == kNotInView) {
      e.view_pos = view_.size();
      view_.push_back(ViewEntry{&key, std::hash<std::string>{}(key), e.object});
    } else {
      view_[e.view_pos].object = e.object;
    }
  }
  void ViewErase(Entry& e) {
    if (e.view_pos == kNotInView) return;
    const size_t pos = e.view_pos, last = view_.size() - 1;
    e.view_pos = kNotInView;
    if (pos != last) {  // the last entry fills the gap
      view_[pos] = std::move(view_[last]);
      store_.find(*view_[pos].key)->second.view_pos = pos;
    }
    view_.pop_back();
  }
  void RebuildView() {
    view_.clear();
    for (auto& [key, e] : store_) {
      e.view_pos = kNotInView;
      ViewPut(key, e);
    }
  }

  SharedDecoder decode_;
  Handlers handlers_;
  mutable std::shared_mutex mu_;
  std::unordered_map<std::string, Entry> store_;
  std::function<bool(const T&)> view_filter_;
  std::vector<ViewEntry> view_;                     // an entry e of the store in the view is view_[e.view_pos]
  std::unordered_map<std::string, Entry> listing_;  // a list in progress (reflector thread only)
};

}  // namespace rota::apiclient
