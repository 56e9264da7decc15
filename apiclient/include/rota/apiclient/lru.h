#pragma once

// A map that holds at most `capacity` entries and forgets the least recently used one to make
// room (client-go's event correlator bounds its caches the same way), so that a long-running
// controller over many short-lived objects does not grow without bound. Not thread-safe.

#include <cstddef>
#include <list>
#include <map>
#include <utility>

namespace rota::apiclient {

template <typename K, typename V>
class LruMap {
 public:
  explicit LruMap(size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  // The value of `key` (now the most recently used), or nullptr.
  V* Find(const K& key) {
    auto it = map_.find(key);
    if (it == map_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second.second);
    return &it->second.first;
  }
  // Sets `key` to `value` (now the most recently used), forgetting the least recently used entry
  // when that makes one too many.
  V& Put(const K& key, V value) {
    if (V* v = Find(key)) return *v = std::move(value);
    auto [it, inserted] = map_.emplace(key, std::make_pair(std::move(value), order_.end()));
    order_.push_front(&it->first);
    it->second.second = order_.begin();
    if (map_.size() > capacity_) {
      map_.erase(*order_.back());
      order_.pop_back();
    }
    return it->second.first;
  }
  // Forgets every entry for which pred(key, value) is true.
  template <typename Pred>
  void EraseIf(Pred pred) {
    for (auto it = map_.begin(); it != map_.end();) {
      if (pred(it->first, it->second.first)) {
        order_.erase(it->second.second);
        it = map_.erase(it);
      } else {
        ++it;
      }
    }
  }
  size_t size() const { return map_.size(); }

 private:
  size_t capacity_;
  std::list<const K*> order_;  // most recently used first; points at map_'s keys (stable)
  std::map<K, std::pair<V, typename std::list<const K*>::iterator>> map_;
};

}  // namespace rota::apiclient
