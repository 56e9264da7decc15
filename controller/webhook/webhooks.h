#pragma once

// rota's admission webhooks, as pure functions of a request and a read-only view of the cluster:
//
//   POST /mutate-batch-v1-job                          Job: default spec.suspend to true when
//                                                      the Job is queued, so no pod starts
//                                                      before rota admits it
//   POST /validate-batch-v1-job                        Job: queue label syntax, immutable while
//                                                      admitted; priority class exists; min
//                                                      parallelism annotation
//   POST /validate-kueue-x-k8s-io-v1beta2-workload     Workload: counts, requests vs limits,
//                                                      totals, immutable while holding quota
//   POST /validate-kueue-x-k8s-io-v1beta2-cohort       Cohort: parentName makes no cycle
//   POST /validate-kueue-x-k8s-io-v1beta2-localqueue   LocalQueue: clusterQueue immutable
//   POST /validate-kueue-x-k8s-io-v1beta2-resourceflavor  ResourceFlavor: label/taint syntax
//   POST /validate-rota-dev-v1alpha1-budget            Budget: one scope, one window, limits,
//                                                      weights, warnAt, time zone exists
//                                                      (budget::ValidateBudget)
//
// Every denial names the object, the field and the rule. The checks the CRD schemas and their
// CEL rules already make are not repeated unless a clearer message helps.

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "admission_review.h"

namespace rota::webhook {

// A ClusterView that cannot tell (the apiserver did not answer): the request is refused with the
// reason (ServeWebhook answers 503), rather than decided on a guess.
struct LookupFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What the rules need to know about the cluster (backed by rota's informer caches). Each method
// throws LookupFailed when it cannot tell.
class ClusterView {
 public:
  virtual ~ClusterView() = default;
  virtual bool LocalQueueExists(const std::string& ns, const std::string& name) const = 0;
  virtual bool PriorityClassExists(const std::string& name) const = 0;
  // The parentName of Cohort `name` ("" for a root); nullopt when no such Cohort object exists.
  virtual std::optional<std::string> CohortParent(const std::string& name) const = 0;
};

struct Route {
  std::string path;
  AdmissionResponse (*handle)(const AdmissionRequest&, const ClusterView&);
};

// Every webhook path rota serves.
const std::vector<Route>& Routes();

AdmissionResponse MutateJob(const AdmissionRequest& req, const ClusterView& view);
AdmissionResponse ValidateJob(const AdmissionRequest& req, const ClusterView& view);
AdmissionResponse ValidateWorkload(const AdmissionRequest& req, const ClusterView& view);
AdmissionResponse ValidateCohort(const AdmissionRequest& req, const ClusterView& view);
AdmissionResponse ValidateLocalQueue(const AdmissionRequest& req, const ClusterView& view);
AdmissionResponse ValidateResourceFlavor(const AdmissionRequest& req, const ClusterView& view);
AdmissionResponse ValidateBudget(const AdmissionRequest& req, const ClusterView& view);

// Kubernetes name and label syntax (apimachinery's validation rules); "" when valid, else why not.
std::string CheckDns1123Subdomain(std::string_view value);
std::string CheckQualifiedName(std::string_view value);
std::string CheckLabelValue(std::string_view value);

}  // namespace rota::webhook
