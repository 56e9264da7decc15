#include "run_config.h"

#include <gtest/gtest.h>

namespace rota::controller {
namespace {

TEST(RunConfigTest, ReadsEverySetting) {
  Result<RunConfig> c = ParseRunConfig(R"(
clientConnection: {qps: 200, burst: 400, http2: true, watchIdleTimeout: 2m}
leaderElection: {enabled: true, leaseName: rota, leaseNamespace: kube-system, leaseDuration: 6s,
                 renewDeadline: 4s, retryPeriod: 500ms}
fairSharing: {enabled: true}
scheduling: {batchPeriod: 250ms, cpuShare: 0.025}
logging: {level: debug, format: json}
metrics: {bindAddress: "127.0.0.1:9090"}
health: {bindAddress: "0"}
webhook: {bindAddress: ":9443", certFile: /certs/tls.crt, keyFile: /certs/tls.key}
)",
                                       "rota.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->qps, 200);
  EXPECT_EQ(c->burst, 400);
  EXPECT_TRUE(c->http2);
  EXPECT_EQ(c->watch_idle_timeout, std::chrono::minutes(2));
  EXPECT_TRUE(c->leader_election);
  EXPECT_EQ(c->lease_namespace, "kube-system");
  EXPECT_EQ(c->lease_duration, std::chrono::seconds(6));
  EXPECT_EQ(c->renew_deadline, std::chrono::seconds(4));
  EXPECT_EQ(c->retry_period, std::chrono::milliseconds(500));
  EXPECT_TRUE(c->fair_sharing);
  EXPECT_EQ(c->batch_period, std::chrono::milliseconds(250));
  EXPECT_DOUBLE_EQ(c->cpu_share, 0.025);
  EXPECT_EQ(c->log_format, "json");
  EXPECT_EQ(c->metrics_address, "127.0.0.1:9090");
  EXPECT_EQ(c->health_address, "0");
  EXPECT_EQ(c->webhook_address, ":9443");
  EXPECT_EQ(c->webhook_cert_file, "/certs/tls.crt");
  EXPECT_EQ(c->webhook_key_file, "/certs/tls.key");
  Result<RunConfig> defaults = ParseRunConfig("", "empty.yaml");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->webhook_address, "0") << "webhooks need a certificate, so they are off unless configured";
  EXPECT_FALSE(defaults->http2) << "HTTP/1.1 unless configured";
  EXPECT_EQ(defaults->watch_idle_timeout, std::chrono::seconds(90)) << "longer than the apiserver's bookmark period";
}

TEST(RunConfigTest, MetricsStayOnThisHostUnlessServedSecurely) {
  Result<RunConfig> plain = ParseRunConfig("", "rota.yaml");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->metrics_address, "127.0.0.1:8080");
  EXPECT_FALSE(plain->metrics_secure);
  Result<RunConfig> secure = ParseRunConfig("metrics: {secureServing: true}", "rota.yaml");
  ASSERT_TRUE(secure.ok()) << secure.status().message();
  EXPECT_TRUE(secure->metrics_secure);
  EXPECT_EQ(secure->metrics_address, ":8443");
  EXPECT_TRUE(secure->metrics_cert_file.empty()) << "no certificate: rota makes its own";
  Result<RunConfig> files = ParseRunConfig(
      "metrics: {secureServing: true, bindAddress: \":9443\", certFile: /c/tls.crt, keyFile: /c/tls.key}", "rota.yaml");
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(files->metrics_address, ":9443");
  EXPECT_EQ(files->metrics_cert_file, "/c/tls.crt");
  EXPECT_EQ(files->metrics_key_file, "/c/tls.key");
}

TEST(RunConfigTest, InternalCertManagementNamesItsSecretAndService) {
  Result<RunConfig> c = ParseRunConfig(
      "internalCertManagement: {enable: true, namespace: ops, webhookServiceName: q-webhooks, webhookSecretName: "
      "q-cert}",
      "rota.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE(c->internal_cert_management);
  EXPECT_EQ(c->cert_namespace, "ops");
  EXPECT_EQ(c->webhook_service_name, "q-webhooks");
  EXPECT_EQ(c->webhook_secret_name, "q-cert");
  EXPECT_FALSE(ParseRunConfig("", "rota.yaml")->internal_cert_management);
}

TEST(RunConfigTest, RejectsUnknownKeysAndBadValuesNamingTheKey) {
  struct Case {
    const char* text;
    const char* message;
  };
  for (const Case& c : {
           Case{"tracing: {port: 8080}",
                "rota.yaml: tracing: unknown setting (known: clientConnection, leaderElection, fairSharing, "
                "scheduling, logging, metrics, health, webhook, visibility, waitForPodsReady, checkpoint, "
                "preemption, budgets, admissionFairSharing, internalCertManagement)"},
           Case{"budgets: {syncPeriod: 5m}", "rota.yaml: budgets.syncPeriod: must be from 1s to 1m"},
           Case{"admissionFairSharing: {resourceWeights: {cpu: -1}}",
                "rota.yaml: admissionFairSharing.resourceWeights.cpu: must be a number of at least 0"},
           Case{"admissionFairSharing: {usageSamplingInterval: 10ms}",
                "rota.yaml: admissionFairSharing.usageSamplingInterval: must be at least 1s"},
           Case{"visibility: {bindAddress: nowhere}",
                "rota.yaml: visibility.bindAddress: \"nowhere\" is not host:port, :port or 0"},
           Case{"visibility: {certFile: \"\"}", "rota.yaml: visibility.certFile: must name a PEM file"},
           Case{"metrics: {bindAddress: here}",
                "rota.yaml: metrics.bindAddress: \"here\" is not host:port, :port or 0"},
           Case{"webhook: {bindAddress: \"9443\"}",
                "rota.yaml: webhook.bindAddress: \"9443\" is not host:port, :port or 0"},
           Case{"webhook: {certFile: \"\"}", "rota.yaml: webhook.certFile: must name a PEM file"},
           Case{"internalCertManagement: {webhookSecretName: My_Secret}",
                "rota.yaml: internalCertManagement.webhookSecretName: \"My_Secret\" is not a DNS-1123 name"},
           Case{"metrics: {secureServing: yes please}", "rota.yaml: metrics.secureServing: must be true or false"},
           Case{"metrics: {secureServing: true, certFile: /c/tls.crt}",
                "rota.yaml: metrics.certFile and metrics.keyFile go together"},
           Case{"metrics: {certFile: /c/tls.crt, keyFile: /c/tls.key}",
                "rota.yaml: metrics.certFile is for secureServing: true"},
           Case{"clientConnection: {qps: 10, qsp: 5}", "rota.yaml: clientConnection.qsp: unknown setting"},
           Case{"clientConnection: {qps: -1}", "rota.yaml: clientConnection.qps: must be a positive number"},
           Case{"clientConnection: {burst: many}", "rota.yaml: clientConnection.burst: must be a positive integer"},
           Case{"clientConnection: {http2: maybe}", "rota.yaml: clientConnection.http2: must be true or false"},
           Case{"clientConnection: {watchIdleTimeout: 500ms}",
                "rota.yaml: clientConnection.watchIdleTimeout: must be 0s or at least 1s"},
           Case{
               "clientConnection: {watchIdleTimeout: never}",
               "rota.yaml: clientConnection.watchIdleTimeout: \"never\" is not a duration such as 90s, or 0s for none"},
           Case{"leaderElection: {enabled: maybe}", "rota.yaml: leaderElection.enabled: must be true or false"},
           Case{"leaderElection: {leaseDuration: 1500ms}",
                "rota.yaml: leaderElection.leaseDuration: must be a whole number of seconds, at least 1s"},
           Case{"leaderElection: {leaseDuration: 10s}",
                "rota.yaml: leaderElection.renewDeadline must be shorter than leaseDuration"},
           Case{"leaderElection: {renewDeadline: 2s}",
                "rota.yaml: leaderElection.retryPeriod must be above 0 and shorter than renewDeadline"},
           Case{"leaderElection: {retryPeriod: often}",
                "rota.yaml: leaderElection.retryPeriod: \"often\" is not a duration such as 2s"},
           Case{"scheduling: {batchPeriod: soon}",
                "rota.yaml: scheduling.batchPeriod: \"soon\" is not a duration such as 100ms or 2s"},
           Case{"scheduling: {cpuShare: 0}", "rota.yaml: scheduling.cpuShare: must be a number above 0 and at most 1"},
           Case{"scheduling: {cpuShare: half}",
                "rota.yaml: scheduling.cpuShare: must be a number above 0 and at most 1"},
           Case{"logging: {format: xml}", "rota.yaml: logging.format: use text or json"},
           Case{"logging: {level: loud}", "rota.yaml: logging.level: use one of trace, debug, info, warn, error"},
           Case{"- a\n- b", "rota.yaml: must be a map of settings"},
           // Durations too long to mean anything, some beyond what the milliseconds can hold.
           Case{"scheduling: {batchPeriod: 99999999999999999999ms}",
                "rota.yaml: scheduling.batchPeriod: \"99999999999999999999ms\" is longer than 30 days"},
           Case{"waitForPodsReady: {timeout: 999999999999999m}",
                "rota.yaml: waitForPodsReady.timeout: \"999999999999999m\" is longer than 30 days"},
           Case{"waitForPodsReady: {timeout: 43201m}",
                "rota.yaml: waitForPodsReady.timeout: \"43201m\" is longer than 30 days"},
           Case{"checkpoint: {defaultTimeout: later}",
                "rota.yaml: checkpoint.defaultTimeout: \"later\" is not a duration such as 90s, 10m or 1h30m: a number "
                "is missing"},
           Case{"checkpoint: {maxTimeout: 0}", "rota.yaml: checkpoint.maxTimeout: must be longer than 0"},
           Case{"checkpoint: {defaultTimeout: 1h}",
                "rota.yaml: checkpoint.defaultTimeout must not be longer than maxTimeout"},
           Case{"preemption: {minRuntime: -1s}",
                "rota.yaml: preemption.minRuntime: \"-1s\" is not a duration such as 90s, 10m or 1h30m: a number is "
                "missing"},
       }) {
    Result<RunConfig> r = ParseRunConfig(c.text, "rota.yaml");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().message(), c.message);
  }
}

TEST(RunConfigTest, BudgetsAndAdmissionFairSharing) {
  auto c = ParseRunConfig("budgets: {syncPeriod: 10s}\n", "rota.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->budget_sync_period, std::chrono::seconds(10));
  EXPECT_FALSE(c->admission_fair_sharing.has_value());
  c = ParseRunConfig(
      "admissionFairSharing: {usageHalfLifeTime: 168h, usageSamplingInterval: 1m, resourceWeights: {cpu: 0.5}}\n",
      "rota.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_TRUE(c->admission_fair_sharing.has_value());
  EXPECT_EQ(c->admission_fair_sharing->half_life, std::chrono::hours(168));
  EXPECT_EQ(c->admission_fair_sharing->sampling_interval, std::chrono::minutes(1));
  EXPECT_EQ(c->admission_fair_sharing->resource_weights, (std::map<std::string, double>{{"cpu", 0.5}}));
  // An empty section turns it on with Kueue's defaults.
  c = ParseRunConfig("admissionFairSharing: {}\n", "rota.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_TRUE(c->admission_fair_sharing.has_value());
  EXPECT_EQ(c->admission_fair_sharing->sampling_interval, std::chrono::minutes(5));
}

TEST(RunConfigTest, CheckpointAndPreemptionSettings) {
  Result<RunConfig> c =
      ParseRunConfig("checkpoint: {defaultTimeout: 10m, maxTimeout: 1h30m}\npreemption: {minRuntime: 90s}", "r");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->checkpoint_default_timeout, std::chrono::minutes(10));
  EXPECT_EQ(c->checkpoint_max_timeout, std::chrono::minutes(90));
  EXPECT_EQ(c->preemption_min_runtime, std::chrono::seconds(90));
  c = ParseRunConfig("", "r");
  EXPECT_EQ(c->checkpoint_default_timeout, std::chrono::minutes(5));
  EXPECT_EQ(c->checkpoint_max_timeout, std::chrono::minutes(30));
  EXPECT_EQ(c->preemption_min_runtime, std::chrono::seconds(0));
}

TEST(RunConfigTest, DurationsUpTo30Days) {
  Result<RunConfig> c = ParseRunConfig("waitForPodsReady: {timeout: 43200m}\nscheduling: {batchPeriod: 2592000s}", "r");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->pods_ready_timeout, std::chrono::hours(24 * 30));
  EXPECT_EQ(c->batch_period, std::chrono::hours(24 * 30));
}

// Long values are checked without a recursion a character deep (std::regex's overflowed the stack).
TEST(RunConfigTest, LongValuesAreErrorsNotACrash) {
  const std::string digits(100'000, '1');
  Result<RunConfig> r = ParseRunConfig("scheduling: {batchPeriod: " + digits + "ms}", "rota.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "rota.yaml: scheduling.batchPeriod: \"" + digits + "ms\" is longer than 30 days");
  r = ParseRunConfig("metrics: {bindAddress: \"" + std::string(100'000, ':') + "\"}", "rota.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("is not host:port, :port or 0"), std::string::npos);
  r = ParseRunConfig("metrics: {bindAddress: \"" + digits + ":80\"}", "rota.yaml");
  ASSERT_TRUE(r.ok()) << r.status().message();
}

}  // namespace
}  // namespace rota::controller
