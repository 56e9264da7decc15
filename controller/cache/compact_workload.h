#pragma once

// How the cluster cache keeps Workloads: only what scheduling, status and the Job integration
// read, so that a cache of tens of thousands of Workloads stays small.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "rota/api/codec.h"
#include "rota/api/kueue.h"

namespace rota::controller {

// A Workload as the cache keeps it. Pod templates keep only their scheduling fields (containers'
// names, resources and restart policies, overhead, nodeSelector, tolerations, affinity), and equal
// ones are one shared copy (`templates`: the Workloads of one Job template or sweep have the
// same); metadata keeps identity, times and owner references only, and unknown fields are
// dropped. A finished Workload keeps no templates, no admission and no condition but Finished. A
// cached Workload is never written back whole, so nothing is lost. Takes the parts it keeps out
// of `compact` (the informer's copy of the document, dropped after).
Result<api::Workload> DecodeCompactWorkload(api::Json& compact, api::JsonInterner& templates);

// The cache's decoder: DecodeCompactWorkload, except that every finished Workload without an
// owner (a benchmark's or a pipeline's, never garbage-collected, piling up) is one shared object
// that says only that it is finished. Nothing reads more of such a Workload: it holds no quota,
// gets no status, and no Job follows it.
Result<std::shared_ptr<const api::Workload>> DecodeCachedWorkload(api::Json& document, api::JsonInterner& templates);

// A finished run, as the document says before the cache trims it: which ClusterQueue, which
// priority class, and how long from the reservation of its quota to its end.
struct FinishedRun {
  std::string uid, cluster_queue, priority_class;
  int64_t seconds = 0;
  std::string key;                             // namespace/name
  int64_t finished_at = 0;                     // Unix seconds
  std::map<std::string, int64_t> usage_milli;  // its admitted resources, summed over pod sets
};
// Of a Workload document with Finished=True after QuotaReserved=True and an admission; nullopt
// for any other.
std::optional<FinishedRun> FinishedRunOf(const api::Json& document);

// Whether the Workload has condition Finished=True.
bool IsFinished(const api::Workload& w);

// The Job that owns a Workload (an owner reference of kind Job, batch/v1), as "namespace/name",
// or "" for none.
std::string OwnerJob(const api::Workload& wl);

}  // namespace rota::controller
