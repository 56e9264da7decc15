#include "run_config.h"

#include <yaml-cpp/yaml.h>

#include <map>
#include <regex>
#include <set>

namespace rota::controller {
namespace {

// A Go-style duration: 500ms, 2s, 1m.
bool ParseDuration(const std::string& s, std::chrono::milliseconds& out) {
  static const std::regex kDuration(R"(([0-9]+)(ms|s|m))");
  std::smatch m;
  if (!std::regex_match(s, m, kDuration)) return false;
  const long long n = std::stoll(m[1]);
  out = m[2] == "ms" ? std::chrono::milliseconds(n) : m[2] == "s" ? std::chrono::seconds(n) : std::chrono::minutes(n);
  return true;
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
  // section -> allowed keys
  const std::map<std::string, std::set<std::string>> kKeys = {
      {"clientConnection", {"qps", "burst", "http2"}},
      {"leaderElection", {"enabled", "leaseName", "leaseNamespace"}},
      {"fairSharing", {"enabled"}},
      {"scheduling", {"batchPeriod", "cpuShare"}},
      {"logging", {"level", "format"}},
      {"metrics", {"bindAddress"}},
      {"health", {"bindAddress"}},
      {"webhook", {"bindAddress", "certFile", "keyFile"}},
      {"waitForPodsReady", {"enable", "timeout", "backoffBaseSeconds", "backoffMaxSeconds", "backoffLimitCount"}},
  };
  try {
    for (const auto& section : root) {
      const std::string name = section.first.as<std::string>();
      auto allowed = kKeys.find(name);
      if (allowed == kKeys.end()) {
        return InvalidArgument(source + ": " + name + ": unknown setting (known: clientConnection, "
                               "leaderElection, fairSharing, scheduling, logging, metrics, health, webhook, waitForPodsReady)");
      }
      if (!section.second.IsMap()) return InvalidArgument(source + ": " + name + ": must be a map");
      for (const auto& kv : section.second) {
        const std::string key = kv.first.as<std::string>();
        const std::string path = source + ": " + name + "." + key;
        if (!allowed->second.count(key)) return InvalidArgument(path + ": unknown setting");
        const YAML::Node& v = kv.second;
        auto as_bool = [&](bool& out) -> Status {
          try {
            out = v.as<bool>();
            return Status::Ok();
          } catch (const YAML::Exception&) {
            return InvalidArgument(path + ": must be true or false");
          }
        };
        Status s;
        if (name == "clientConnection" && key == "qps") {
          try { c.qps = v.as<double>(); } catch (const YAML::Exception&) { c.qps = -1; }
          if (!(c.qps > 0)) s = InvalidArgument(path + ": must be a positive number");
        } else if (name == "clientConnection" && key == "burst") {
          try { c.burst = v.as<int>(); } catch (const YAML::Exception&) { c.burst = -1; }
          if (c.burst <= 0) s = InvalidArgument(path + ": must be a positive integer");
        } else if (name == "clientConnection" && key == "http2") {
          s = as_bool(c.http2);
        } else if (name == "leaderElection" && key == "enabled") {
          s = as_bool(c.leader_election);
        } else if (name == "leaderElection") {
          (key == "leaseName" ? c.lease_name : c.lease_namespace) = v.as<std::string>();
          if ((key == "leaseName" ? c.lease_name : c.lease_namespace).empty()) s = InvalidArgument(path + ": must not be empty");
        } else if (name == "fairSharing") {
          s = as_bool(c.fair_sharing);
        } else if (name == "scheduling" && key == "cpuShare") {
          try { c.cpu_share = v.as<double>(); } catch (const YAML::Exception&) { c.cpu_share = -1; }
          if (!(c.cpu_share > 0 && c.cpu_share <= 1)) s = InvalidArgument(path + ": must be a number above 0 and at most 1");
        } else if (name == "scheduling") {
          if (!ParseDuration(v.as<std::string>(), c.batch_period)) {
            s = InvalidArgument(path + ": \"" + v.as<std::string>() + "\" is not a duration such as 100ms or 2s");
          }
        } else if (name == "logging" && key == "level") {
          c.log_level = v.as<std::string>();
          static const std::set<std::string> kLevels = {"trace", "debug", "info", "warn", "error"};
          if (!kLevels.count(c.log_level)) s = InvalidArgument(path + ": use one of trace, debug, info, warn, error");
        } else if (name == "waitForPodsReady") {
          if (key == "enable") {
            s = as_bool(c.wait_for_pods_ready);
          } else if (key == "timeout") {
            if (!ParseDuration(v.as<std::string>(), c.pods_ready_timeout)) {
              s = InvalidArgument(path + ": \"" + v.as<std::string>() + "\" is not a duration such as 30s or 5m");
            }
          } else {
            int n = -1;
            try { n = v.as<int>(); } catch (const YAML::Exception&) {}
            if (n < (key == "backoffLimitCount" ? 0 : 1)) s = InvalidArgument(path + ": must be a positive integer");
            else if (key == "backoffBaseSeconds") c.backoff_base_seconds = n;
            else if (key == "backoffMaxSeconds") c.backoff_max_seconds = n;
            else c.backoff_limit = n;
          }
        } else if (name == "webhook" && key != "bindAddress") {
          std::string& out = key == "certFile" ? c.webhook_cert_file : c.webhook_key_file;
          out = v.as<std::string>();
          if (out.empty()) s = InvalidArgument(path + ": must name a PEM file");
        } else if (name == "metrics" || name == "health" || name == "webhook") {
          std::string& out = name == "metrics" ? c.metrics_address : name == "health" ? c.health_address : c.webhook_address;
          out = v.as<std::string>();
          static const std::regex kAddress(R"(0|[0-9a-fA-F.:]*:[0-9]{1,5})");
          if (!std::regex_match(out, kAddress)) s = InvalidArgument(path + ": \"" + out + "\" is not host:port, :port or 0");
        } else if (name == "logging" && key == "format") {
          c.log_format = v.as<std::string>();
          if (c.log_format != "text" && c.log_format != "json") s = InvalidArgument(path + ": use text or json");
        }
        if (!s.ok()) return s;
      }
    }
  } catch (const YAML::Exception& e) {
    return InvalidArgument(source + ": " + e.msg);
  }
  return c;
}

}  // namespace rota::controller
