#pragma once

// `rota run --config rota.yaml`: the controller's settings. Every key is optional; unknown keys and
// bad values are rejected at start with the key named.
//
//   clientConnection: {qps: 500, burst: 1000,   # every admission is one status write
//                      http2: false,            # HTTP/1.1 unless true (and DISABLE_HTTP2 unset)
//                      watchIdleTimeout: 90s}   # a watch silent this long is reopened; 0s: never
//   leaderElection: {enabled: false, leaseName: rota-controller, leaseNamespace: rota-system,
//                    leaseDuration: 15s, renewDeadline: 10s, retryPeriod: 2s}
//   fairSharing: {enabled: false}
//   scheduling: {batchPeriod: 200ms,   # after a change, how long more changes gather before a pass
//                cpuShare: 0.047619}   # (1/21) of a core, at most, for passes under a stream of changes
//   logging: {level: info, format: text}   # format: text or json
//   metrics: {bindAddress: "127.0.0.1:8080",  # Prometheus /metrics; "0" turns it off
//             secureServing: false,      # true: HTTPS on ":8443" by default, and only for a bearer
//                                        # token allowed `get` on /metrics (TokenReview + SAR)
//             certFile: "", keyFile: ""}  # secureServing's certificate; none: rota makes its own
//   health: {bindAddress: ":8081"}           # /healthz and /readyz; "0" turns it off
//   webhook: {bindAddress: "0", certFile: /tmp/k8s-webhook-server/serving-certs/tls.crt,
//             keyFile: /tmp/k8s-webhook-server/serving-certs/tls.key}   # HTTPS admission webhooks;
//                                            # off ("0") unless given an address such as ":9443"
//   visibility: {bindAddress: "0",       # Kueue's visibility API (an aggregated API server, over
//                certFile: "", keyFile: ""}  # HTTPS), with start-time forecasts; "0" turns it off;
//                                            # no files: rota makes its own certificate
//   internalCertManagement: {enable: false,   # true: rota makes the webhooks' certificate itself,
//                            webhookServiceName: rota-webhook-service,   # keeps it in this Secret
//                            webhookSecretName: rota-webhook-server-cert, # of this namespace and
//                            namespace: rota-system}   # trusts it in its webhook configurations
//   waitForPodsReady: {enable: false, timeout: 5m, backoffBaseSeconds: 60, backoffMaxSeconds: 3600,
//                      backoffLimitCount: 5}   # a gang must be Ready within timeout, or is requeued;
//                                              # backoffLimitCount has no default (no limit)
//   preemption: {minRuntime: 0s}   # a workload admitted less than this long ago is not preempted,
//                                  # unless its ClusterQueue says otherwise (docs/checkpoint.md)
//   checkpoint: {defaultTimeout: 5m, maxTimeout: 30m}   # how long a victim annotated
//                                            # rota.dev/checkpoint has to checkpoint (docs/checkpoint.md)
//   admissionFairSharing: {usageHalfLifeTime: 168h, usageSamplingInterval: 5m,
//                          resourceWeights: {nvidia.com/gpu: 1}}   # Kueue's: within a ClusterQueue
//                          # with admissionScope UsageBasedAdmissionFairSharing, the LocalQueue
//                          # with less recent usage goes first (absent: off)
//   budgets: {syncPeriod: 30s}   # how often Budgets are charged and their status written
//                                # (at most 1m: a restart loses at most that much; docs/budgets.md)

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include "rota/admission/status.h"

namespace rota::controller {

// Kueue's admission fair sharing: usage halves every `half_life`, is sampled and written to the
// LocalQueues' status every `sampling_interval`; resources count by weight (absent: 1).
struct AdmissionFairSharingSettings {
  std::chrono::milliseconds half_life{0};
  std::chrono::milliseconds sampling_interval{std::chrono::minutes(5)};
  std::map<std::string, double> resource_weights;
};

struct RunConfig {
  // Every admission, eviction and first pending reason is one status write; rota leaves overload
  // protection to the apiserver's API Priority and Fairness rather than a low client-side cap.
  double qps = 500;
  int burst = 1000;
  // HTTP/2 to the apiserver. Off by default: with the writes multiplexed over pipelines it costs
  // the same CPU as HTTP/1.1, and HTTP/1.1 was the cheaper one before (docs/performance.md).
  bool http2 = false;
  // A watch that receives nothing for this long (the apiserver sends a bookmark about once a
  // minute) is presumed dead and reopened from where it was; 0 turns this off.
  std::chrono::milliseconds watch_idle_timeout{std::chrono::seconds(90)};
  bool leader_election = false;
  std::string lease_name = "rota-controller";
  std::string lease_namespace = "rota-system";
  // As client-go's: a follower takes over a lease not renewed for `lease_duration` (whole
  // seconds: the Lease stores seconds); the leader steps down (and exits) when it could not renew
  // for `renew_deadline`; both try every `retry_period`.
  std::chrono::milliseconds lease_duration{15000};
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
  bool fair_sharing = false;
  // How long the scheduler waits after a change for more changes before a pass. A longer period
  // means fewer passes, each deciding more at once, and less churn: a short one preempts
  // workloads that the pass before had only just admitted (docs/performance.md measures it).
  std::chrono::milliseconds batch_period{200};
  // The share of a core the scheduling loop may use while changes keep coming: after a pass it
  // waits (1 / share - 1) times that pass's CPU time, when that is longer than the batch period
  // (see BatchWait). A deep backlog makes a pass cost milliseconds; a lower share then means
  // fewer passes, each deciding more at once, and admissions later by up to the longer wait.
  double cpu_share = 1.0 / 21;
  std::string log_level = "info";   // trace, debug, info, warn, error
  std::string log_format = "text";  // text or json
  // host:port, ":port" for every interface, "0" for none. Plain HTTP stays on this host unless
  // told otherwise; secure serving listens on every interface.
  std::string metrics_address = "127.0.0.1:8080";
  bool metrics_secure = false;
  std::string metrics_cert_file, metrics_key_file;
  std::string health_address = ":8081";
  // Admission webhooks over HTTPS; the certificate files are re-read when they change.
  std::string webhook_address = "0";
  std::string webhook_cert_file = "/tmp/k8s-webhook-server/serving-certs/tls.crt";
  std::string webhook_key_file = "/tmp/k8s-webhook-server/serving-certs/tls.key";
  // Kueue's visibility API as an aggregated API server over HTTPS ("0": off); without
  // certificate files, a self-signed certificate (the APIService then needs its CA).
  std::string visibility_address = "0";
  std::string visibility_cert_file, visibility_key_file;
  // Webhook certificates without cert-manager (serving/webhook_certs.h).
  bool internal_cert_management = false;
  std::string cert_namespace = "rota-system";
  std::string webhook_service_name = "rota-webhook-service";
  std::string webhook_secret_name = "rota-webhook-server-cert";
  // Gang readiness: an admitted Job whose pods are not all Ready (or Succeeded) within `timeout`
  // is evicted (PodsReadyTimeout) and requeued after base * 2^(n-1) seconds, capped; after
  // `backoff_limit` evictions (if set) it is deactivated.
  bool wait_for_pods_ready = false;
  std::chrono::milliseconds pods_ready_timeout{std::chrono::minutes(5)};
  int backoff_base_seconds = 60;
  int backoff_max_seconds = 3600;
  std::optional<int> backoff_limit;
  // The checkpoint handshake: the wait for a victim's checkpoint when its Job names no
  // rota.dev/checkpoint-timeout, and the longest one it may name.
  std::chrono::milliseconds checkpoint_default_timeout{std::chrono::minutes(5)};
  std::chrono::milliseconds checkpoint_max_timeout{std::chrono::minutes(30)};
  // Minimum runtime of every ClusterQueue without rota.dev/preempt-min-runtime or
  // rota.dev/reclaim-min-runtime: 0, Kueue's behaviour, preempts whatever was admitted last.
  std::chrono::milliseconds preemption_min_runtime{0};
  // How often the budget controller charges Budgets and writes their status (1s to 1m).
  std::chrono::milliseconds budget_sync_period{std::chrono::seconds(30)};
  // Kueue's admission fair sharing (absent: off).
  std::optional<AdmissionFairSharingSettings> admission_fair_sharing;
};

// Parses a config file's text; `source` names it in errors (`rota.yaml: scheduling.batchPeriod:
// "soon" is not a duration such as 100ms or 2s`).
Result<RunConfig> ParseRunConfig(const std::string& text, const std::string& source);

}  // namespace rota::controller
