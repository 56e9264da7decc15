#include "run_config.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <map>
#include <set>
#include <string_view>

#include "rota/api/checkpoint.h"

namespace rota::controller {
namespace {

// The longest duration a setting takes: longer ones are surely mistakes, and bounding them keeps
// their milliseconds far from overflow.
constexpr std::chrono::milliseconds kMaxDuration = std::chrono::hours(24 * 30);

enum class DurationError { kNone, kSyntax, kTooLong };

// A Go-style duration (500ms, 2s, 1m) of at most kMaxDuration, into `out`. (Matched by hand, not
// with std::regex, which recurses once a character: a long value would overflow the stack.)
DurationError ParseDuration(const std::string& s, std::chrono::milliseconds& out) {
  const size_t digits = s.find_first_not_of("0123456789");  // ([0-9]+)(ms|s|m)
  if (digits == 0 || digits == std::string::npos) return DurationError::kSyntax;
  const std::string_view suffix = std::string_view(s).substr(digits);
  const long long unit = suffix == "ms" ? 1 : suffix == "s" ? 1000 : suffix == "m" ? 60000 : 0;
  if (unit == 0) return DurationError::kSyntax;
  unsigned long long n = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + digits, n);
  if (ec != std::errc() || end != s.data() + digits ||
      n > static_cast<unsigned long long>(kMaxDuration.count() / unit)) {
    return DurationError::kTooLong;
  }
  out = std::chrono::milliseconds(static_cast<long long>(n) * unit);
  return DurationError::kNone;
}

// host:port, :port or 0, as `0|[0-9a-fA-F.:]*:[0-9]{1,5}` (by hand, as durations are).
bool IsAddress(const std::string& a) {
  if (a == "0") return true;
  const size_t colon = a.rfind(':');
  if (colon == std::string::npos) return false;
  const std::string_view host = std::string_view(a).substr(0, colon), port = std::string_view(a).substr(colon + 1);
  return !port.empty() && port.size() <= 5 && port.find_first_not_of("0123456789") == std::string_view::npos &&
         host.find_first_not_of("0123456789abcdefABCDEF.:") == std::string_view::npos;
}

// A name the apiserver takes for a Secret, Service or namespace: lower-case letters, digits, '-'
// and '.', beginning and ending with a letter or digit (DNS-1123), at most 63 characters.
bool IsObjectName(const std::string& n) {
  auto alnum = [](char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'); };
  if (n.empty() || n.size() > 63 || !alnum(n.front()) || !alnum(n.back())) return false;
  for (char ch : n)
    if (!alnum(ch) && ch != '-' && ch != '.') return false;
  return true;
}

// One setting's value, with the setting's `path` ("rota.yaml: section.key") for errors.
struct Setting {
  const std::string& key;
  const YAML::Node& value;
  const std::string& path;

  Status Bool(bool& out) const {
    try {
      out = value.as<bool>();
      return Status::Ok();
    } catch (const YAML::Exception&) {
      return InvalidArgument(path + ": must be true or false");
    }
  }
  Status Duration(std::chrono::milliseconds& out, const char* example) const {
    const std::string text = value.as<std::string>();
    switch (ParseDuration(text, out)) {
      case DurationError::kNone:
        return Status::Ok();
      case DurationError::kTooLong:
        return InvalidArgument(path + ": \"" + text + "\" is longer than 30 days");
      case DurationError::kSyntax:
        break;
    }
    return InvalidArgument(path + ": \"" + text + "\" is not a duration such as " + example);
  }
  // The value as a number of type T, or -1 when it is not one.
  template <typename T>
  T Number() const {
    try {
      return value.as<T>();
    } catch (const YAML::Exception&) {
      return -1;
    }
  }
};

Status ApplyClientConnection(RunConfig& c, const Setting& s) {
  if (s.key == "qps") {
    c.qps = s.Number<double>();
    return c.qps > 0 ? Status::Ok() : InvalidArgument(s.path + ": must be a positive number");
  }
  if (s.key == "burst") {
    c.burst = s.Number<int>();
    return c.burst > 0 ? Status::Ok() : InvalidArgument(s.path + ": must be a positive integer");
  }
  if (s.key == "watchIdleTimeout") {
    if (Status d = s.Duration(c.watch_idle_timeout, "90s, or 0s for none"); !d.ok()) return d;
    const auto t = c.watch_idle_timeout;
    return t.count() == 0 || t >= std::chrono::seconds(1) ? Status::Ok()
                                                          : InvalidArgument(s.path + ": must be 0s or at least 1s");
  }
  return s.Bool(c.http2);
}

Status ApplyLeaderElection(RunConfig& c, const Setting& s) {
  if (s.key == "enabled") return s.Bool(c.leader_election);
  if (s.key == "leaseDuration") {
    if (Status st = s.Duration(c.lease_duration, "15s"); !st.ok()) return st;
    if (c.lease_duration.count() % 1000 == 0 && c.lease_duration.count() > 0) return Status::Ok();
    return InvalidArgument(s.path + ": must be a whole number of seconds, at least 1s");
  }
  if (s.key == "renewDeadline") return s.Duration(c.renew_deadline, "10s");
  if (s.key == "retryPeriod") return s.Duration(c.retry_period, "2s");
  std::string& out = s.key == "leaseName" ? c.lease_name : c.lease_namespace;
  out = s.value.as<std::string>();
  return out.empty() ? InvalidArgument(s.path + ": must not be empty") : Status::Ok();
}

Status ApplyScheduling(RunConfig& c, const Setting& s) {
  if (s.key == "cpuShare") {
    c.cpu_share = s.Number<double>();
    if (c.cpu_share > 0 && c.cpu_share <= 1) return Status::Ok();
    return InvalidArgument(s.path + ": must be a number above 0 and at most 1");
  }
  return s.Duration(c.batch_period, "100ms or 2s");
}

Status ApplyLogging(RunConfig& c, const Setting& s) {
  if (s.key == "level") {
    c.log_level = s.value.as<std::string>();
    static const std::set<std::string> kLevels = {"trace", "debug", "info", "warn", "error"};
    if (!kLevels.count(c.log_level)) return InvalidArgument(s.path + ": use one of trace, debug, info, warn, error");
    return Status::Ok();
  }
  c.log_format = s.value.as<std::string>();
  if (c.log_format != "text" && c.log_format != "json") return InvalidArgument(s.path + ": use text or json");
  return Status::Ok();
}

Status ApplyWaitForPodsReady(RunConfig& c, const Setting& s) {
  if (s.key == "enable") return s.Bool(c.wait_for_pods_ready);
  if (s.key == "timeout") return s.Duration(c.pods_ready_timeout, "30s or 5m");
  const int n = s.Number<int>();
  if (n < (s.key == "backoffLimitCount" ? 0 : 1)) return InvalidArgument(s.path + ": must be a positive integer");
  if (s.key == "backoffBaseSeconds")
    c.backoff_base_seconds = n;
  else if (s.key == "backoffMaxSeconds")
    c.backoff_max_seconds = n;
  else
    c.backoff_limit = n;
  return Status::Ok();
}

Status ApplyCheckpoint(RunConfig& c, const Setting& s) {
  auto millis = api::ParseGoDuration(s.value.as<std::string>());
  if (!millis.ok()) return millis.status().WithContext(s.path);
  if (s.key == "minRuntime") {
    c.preemption_min_runtime = std::chrono::milliseconds(*millis);
    return Status::Ok();
  }
  if (*millis <= 0) return InvalidArgument(s.path + ": must be longer than 0");
  (s.key == "defaultTimeout" ? c.checkpoint_default_timeout : c.checkpoint_max_timeout) =
      std::chrono::milliseconds(*millis);
  return Status::Ok();
}

Status ApplyBudgets(RunConfig& c, const Setting& s) {
  auto millis = api::ParseGoDuration(s.value.as<std::string>());
  if (!millis.ok()) return millis.status().WithContext(s.path);
  if (*millis < 1000 || *millis > 60'000) return InvalidArgument(s.path + ": must be from 1s to 1m");
  c.budget_sync_period = std::chrono::milliseconds(*millis);
  return Status::Ok();
}

Status ApplyAdmissionFairSharing(RunConfig& c, const Setting& s) {
  AdmissionFairSharingSettings& afs =
      c.admission_fair_sharing ? *c.admission_fair_sharing : c.admission_fair_sharing.emplace();
  if (s.key == "resourceWeights") {
    if (!s.value.IsMap()) return InvalidArgument(s.path + ": must be a map of resource names to weights");
    for (const auto& kv : s.value) {
      const std::string resource = kv.first.as<std::string>();
      double weight = -1;
      try {
        weight = kv.second.as<double>();
      } catch (const YAML::Exception&) {
      }
      if (!(weight >= 0)) return InvalidArgument(s.path + "." + resource + ": must be a number of at least 0");
      afs.resource_weights[resource] = weight;
    }
    return Status::Ok();
  }
  auto millis = api::ParseGoDuration(s.value.as<std::string>());
  if (!millis.ok()) return millis.status().WithContext(s.path);
  if (s.key == "usageSamplingInterval" && *millis < 1000) return InvalidArgument(s.path + ": must be at least 1s");
  (s.key == "usageHalfLifeTime" ? afs.half_life : afs.sampling_interval) = std::chrono::milliseconds(*millis);
  return Status::Ok();
}

// metrics, health and webhook: an address, or (webhook) a certificate file.
Status ApplyServer(RunConfig& c, const std::string& section, const Setting& s) {
  if (section == "metrics" && s.key == "secureServing") return s.Bool(c.metrics_secure);
  if (section == "metrics" && s.key != "bindAddress") {
    std::string& out = s.key == "certFile" ? c.metrics_cert_file : c.metrics_key_file;
    out = s.value.as<std::string>();
    return out.empty() ? InvalidArgument(s.path + ": must name a PEM file") : Status::Ok();
  }
  if ((section == "webhook" || section == "visibility") && s.key != "bindAddress") {
    std::string& out = section == "visibility" ? (s.key == "certFile" ? c.visibility_cert_file : c.visibility_key_file)
                       : s.key == "certFile"   ? c.webhook_cert_file
                                               : c.webhook_key_file;
    out = s.value.as<std::string>();
    return out.empty() ? InvalidArgument(s.path + ": must name a PEM file") : Status::Ok();
  }
  std::string& out = section == "metrics"      ? c.metrics_address
                     : section == "health"     ? c.health_address
                     : section == "visibility" ? c.visibility_address
                                               : c.webhook_address;
  out = s.value.as<std::string>();
  if (!IsAddress(out)) return InvalidArgument(s.path + ": \"" + out + "\" is not host:port, :port or 0");
  return Status::Ok();
}

Status ApplyCertManagement(RunConfig& c, const Setting& s) {
  if (s.key == "enable") return s.Bool(c.internal_cert_management);
  std::string& out = s.key == "namespace"            ? c.cert_namespace
                     : s.key == "webhookServiceName" ? c.webhook_service_name
                                                     : c.webhook_secret_name;
  out = s.value.as<std::string>();
  if (!IsObjectName(out)) return InvalidArgument(s.path + ": \"" + out + "\" is not a DNS-1123 name");
  return Status::Ok();
}

Status Apply(RunConfig& c, const std::string& section, const Setting& s) {
  if (section == "clientConnection") return ApplyClientConnection(c, s);
  if (section == "leaderElection") return ApplyLeaderElection(c, s);
  if (section == "fairSharing") return s.Bool(c.fair_sharing);
  if (section == "scheduling") return ApplyScheduling(c, s);
  if (section == "logging") return ApplyLogging(c, s);
  if (section == "waitForPodsReady") return ApplyWaitForPodsReady(c, s);
  if (section == "checkpoint" || section == "preemption") return ApplyCheckpoint(c, s);
  if (section == "internalCertManagement") return ApplyCertManagement(c, s);
  if (section == "budgets") return ApplyBudgets(c, s);
  if (section == "admissionFairSharing") return ApplyAdmissionFairSharing(c, s);
  return ApplyServer(c, section, s);
}

// Section -> its keys.
const std::map<std::string, std::set<std::string>>& KnownSettings() {
  static const std::map<std::string, std::set<std::string>> kKeys = {
      {"clientConnection", {"qps", "burst", "http2", "watchIdleTimeout"}},
      {"leaderElection", {"enabled", "leaseName", "leaseNamespace", "leaseDuration", "renewDeadline", "retryPeriod"}},
      {"fairSharing", {"enabled"}},
      {"scheduling", {"batchPeriod", "cpuShare"}},
      {"logging", {"level", "format"}},
      {"metrics", {"bindAddress", "secureServing", "certFile", "keyFile"}},
      {"health", {"bindAddress"}},
      {"webhook", {"bindAddress", "certFile", "keyFile"}},
      {"visibility", {"bindAddress", "certFile", "keyFile"}},
      {"waitForPodsReady", {"enable", "timeout", "backoffBaseSeconds", "backoffMaxSeconds", "backoffLimitCount"}},
      {"checkpoint", {"defaultTimeout", "maxTimeout"}},
      {"preemption", {"minRuntime"}},
      {"budgets", {"syncPeriod"}},
      {"admissionFairSharing", {"usageHalfLifeTime", "usageSamplingInterval", "resourceWeights"}},
      {"internalCertManagement", {"enable", "namespace", "webhookServiceName", "webhookSecretName"}},
  };
  return kKeys;
}

Status ApplyAll(RunConfig& c, const YAML::Node& root, const std::string& source) {
  for (const auto& section : root) {
    const std::string name = section.first.as<std::string>();
    auto allowed = KnownSettings().find(name);
    if (allowed == KnownSettings().end()) {
      return InvalidArgument(source + ": " + name +
                             ": unknown setting (known: clientConnection, leaderElection, fairSharing, scheduling, "
                             "logging, metrics, health, webhook, visibility, waitForPodsReady, checkpoint, "
                             "preemption, budgets, admissionFairSharing, internalCertManagement)");
    }
    if (!section.second.IsMap()) return InvalidArgument(source + ": " + name + ": must be a map");
    for (const auto& kv : section.second) {
      const std::string key = kv.first.as<std::string>();
      const std::string path = source + ": " + name + "." + key;
      if (!allowed->second.count(key)) return InvalidArgument(path + ": unknown setting");
      if (Status s = Apply(c, name, Setting{key, kv.second, path}); !s.ok()) return s;
    }
  }
  return Status::Ok();
}

// client-go's rule: a leader must give up before a follower may take over, and retry in between.
Status CheckLeaseTimes(const RunConfig& c, const std::string& source) {
  if (c.renew_deadline >= c.lease_duration)
    return InvalidArgument(source + ": leaderElection.renewDeadline must be shorter than leaseDuration");
  if (c.retry_period.count() <= 0 || c.retry_period >= c.renew_deadline)
    return InvalidArgument(source + ": leaderElection.retryPeriod must be above 0 and shorter than renewDeadline");
  return Status::Ok();
}

}  // namespace

Result<RunConfig> ParseRunConfig(const std::string& text, const std::string& source) {
  RunConfig c;
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(source + ": line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  if (root.IsNull()) return c;
  if (!root.IsMap()) return InvalidArgument(source + ": must be a map of settings");
  try {
    if (Status s = ApplyAll(c, root, source); !s.ok()) return s;
    // (An empty section turns admission fair sharing on with its defaults.)
    if (root["admissionFairSharing"] && !c.admission_fair_sharing) c.admission_fair_sharing.emplace();
    if (Status s = CheckLeaseTimes(c, source); !s.ok()) return s;
    if (c.metrics_cert_file.empty() != c.metrics_key_file.empty())
      return InvalidArgument(source + ": metrics.certFile and metrics.keyFile go together");
    if (!c.metrics_secure && !c.metrics_cert_file.empty())
      return InvalidArgument(source + ": metrics.certFile is for secureServing: true");
    if (c.metrics_secure && !root["metrics"]["bindAddress"]) c.metrics_address = ":8443";
    if (c.checkpoint_default_timeout > c.checkpoint_max_timeout)
      return InvalidArgument(source + ": checkpoint.defaultTimeout must not be longer than maxTimeout");
  } catch (const YAML::Exception& e) {
    return InvalidArgument(source + ": " + e.msg);
  }
  return c;
}

}  // namespace rota::controller
