#pragma once

// Admissions and evictions written but not yet seen back through the Workload cache (Kueue's
// cache.AssumeWorkload). A pass overlays them on the cached Workloads, so that it does not count
// a decision twice or undo one, and forgets each once the cache shows it: the cache holds the
// admission we set (or none, for an eviction), or has reached the resourceVersion our write
// returned (someone may have changed the Workload after us: the cache is the truth again). An
// assumption whose write failed is dropped (the next pass decides again), and so is one whose
// Workload a pass no longer finds.
//
// Loop thread only.

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "rota/api/kueue.h"
#include "rota/api/snapshot.h"

namespace rota::controller {

// Whether a cached object at resourceVersion `cached` includes our write that returned `written`.
// Resource versions are etcd revisions in practice; when either is not a number only equality
// tells.
bool SeenVersion(const std::string& cached, const std::string& written);

class AssumedAdmissions {
 public:
  // `admission` is what we wrote: set for an admission, nullopt for an eviction; `write` is the
  // status writer's sequence number of the write.
  void Assume(const std::string& key, std::optional<api::Admission> admission, uint64_t write);
  // The outcome of write number `write` of workload `key`: on success the resourceVersion it
  // returned; on failure the assumption is dropped. An outcome of an older write than the one
  // assumed now is ignored.
  void WriteSucceeded(const std::string& key, uint64_t write, const std::string& resource_version);
  void WriteFailed(const std::string& key, uint64_t write);

  // A pass: BeginPass, then Overlay for each cached workload that MayHold (by its key's hash), then
  // EndPass, which forgets assumptions the pass did not find.
  void BeginPass(uint64_t pass);
  bool MayHold(size_t key_hash) const { return hashes_.count(key_hash) > 0; }
  // The object the pass schedules for the cached `object` with key `key`: the cached object when
  // nothing is assumed of it, or the cache has caught up (the assumption is then forgotten); else
  // a copy with the assumed admission.
  std::shared_ptr<const api::Workload> Overlay(const std::string& key,
                                               const std::shared_ptr<const api::Workload>& object);
  void EndPass();

  // A workload we evicted is not admitted again until the cache shows the eviction: the new
  // admission would replace the eviction not yet sent, or race whoever finishes the eviction (the
  // Job integration, or a plain Workload's owner) and be undone by it. Marks such workloads in
  // the snapshot as waiting for quota.
  void HoldEvicted(api::SnapshotBuilder& builder) const;

  bool Contains(const std::string& key) const { return assumed_.count(key) > 0; }
  // The write number of the admission assumed of `key`, if one is (not an eviction).
  std::optional<uint64_t> AdmissionWrite(const std::string& key) const {
    auto it = assumed_.find(key);
    if (it == assumed_.end() || !it->second.admission) return std::nullopt;
    return it->second.write;
  }
  // Forgets what is assumed of `key` (its write was withdrawn before it was sent).
  void Forget(const std::string& key) { assumed_.erase(key); }
  size_t size() const { return assumed_.size(); }

 private:
  struct Assumed {
    std::optional<api::Admission> admission;
    uint64_t write = 0;           // the status writer's sequence number of our write
    std::string written_version;  // set once that write has succeeded
    uint64_t seen = 0;            // the last pass whose cache still had the workload
  };
  std::unordered_map<std::string, Assumed> assumed_;
  // The assumed keys' hashes, for this pass: the many workloads not assumed are told by their
  // hashes alone, without reading their keys.
  std::unordered_set<size_t> hashes_;
  uint64_t pass_ = 0;
};

}  // namespace rota::controller
