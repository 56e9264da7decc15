#include "rota/apiclient/config.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "rota/apiclient/base64.h"

namespace rota::apiclient {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, sep))
    if (!part.empty()) out.push_back(part);
  return out;
}

// A named entry (cluster, user or context) of one kubeconfig file, with the file it came from.
struct Entry {
  YAML::Node node;
  fs::path dir;
  std::string file;
};

// Resolves a path field relative to the kubeconfig's directory.
std::string Resolve(const Entry& e, const std::string& path) {
  if (path.empty() || fs::path(path).is_absolute()) return path;
  return (e.dir / path).string();
}

Result<std::string> DecodeData(const Entry& e, const std::string& field, const YAML::Node& n) {
  std::string decoded;
  if (!Base64Decode(n.as<std::string>(), decoded)) {
    return InvalidArgument(e.file + ": " + field + ": is not valid base64");
  }
  return decoded;
}

// client-go's switch: any value of DISABLE_HTTP2 keeps clients on HTTP/1.1.
bool Http2Allowed() {
  const char* v = std::getenv("DISABLE_HTTP2");
  return v == nullptr || *v == '\0';
}

}  // namespace

Result<RestConfig> LoadKubeconfig(const std::string& paths_arg, const std::string& context_arg) {
  std::string paths = paths_arg;
  if (paths.empty()) {
    const char* env = std::getenv("KUBECONFIG");
    const char* home = std::getenv("HOME");
    paths = env && *env ? env : (home ? std::string(home) + "/.kube/config" : "");
  }
  std::map<std::string, Entry> clusters, users, contexts;
  std::string current;
  bool any = false;
  for (const std::string& file : Split(paths, ':')) {
    if (!fs::exists(file)) continue;  // kubectl skips missing files in KUBECONFIG
    YAML::Node root;
    try {
      root = YAML::LoadFile(file);
    } catch (const YAML::Exception& e) {
      return InvalidArgument(file + ": line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
    any = true;
    const fs::path dir = fs::absolute(file).parent_path();
    try {
      auto collect = [&](const char* list, const char* inner, std::map<std::string, Entry>& into) {
        for (const auto& item : root[list]) {
          const std::string name = item["name"].as<std::string>("");
          if (!name.empty() && !into.count(name)) into[name] = {item[inner], dir, file};
        }
      };
      collect("clusters", "cluster", clusters);
      collect("users", "user", users);
      collect("contexts", "context", contexts);
      if (current.empty() && root["current-context"]) current = root["current-context"].as<std::string>("");
    } catch (const YAML::Exception& e) {
      return InvalidArgument(file + ": " + e.msg);
    }
  }
  if (!any) return InvalidArgument("no kubeconfig found in \"" + paths + "\"");
  const std::string context_name = context_arg.empty() ? current : context_arg;
  if (context_name.empty()) return InvalidArgument(paths + ": current-context is not set and no context was named");
  auto ctx = contexts.find(context_name);
  if (ctx == contexts.end()) return InvalidArgument(paths + ": context \"" + context_name + "\" is not defined");

  RestConfig cfg;
  cfg.http2 = Http2Allowed();
  try {
    const std::string cluster_name = ctx->second.node["cluster"].as<std::string>("");
    const std::string user_name = ctx->second.node["user"].as<std::string>("");
    auto cl = clusters.find(cluster_name);
    if (cl == clusters.end()) {
      return InvalidArgument(ctx->second.file + ": contexts[" + context_name + "].cluster: cluster \"" + cluster_name +
                             "\" is not defined");
    }
    const Entry& c = cl->second;
    const std::string where = c.file + ": clusters[" + cluster_name + "]";
    cfg.server = c.node["server"].as<std::string>("");
    if (cfg.server.empty()) return InvalidArgument(where + ".server: is required");
    // client-go accepts "https://host:6443/" (envtest writes it so); request paths start with "/".
    while (cfg.server.size() > 1 && cfg.server.back() == '/') cfg.server.pop_back();
    cfg.insecure = c.node["insecure-skip-tls-verify"].as<bool>(false);
    cfg.tls_server_name = c.node["tls-server-name"].as<std::string>("");
    cfg.ca_file = Resolve(c, c.node["certificate-authority"].as<std::string>(""));
    if (c.node["certificate-authority-data"]) {
      auto d = DecodeData(c, "clusters[" + cluster_name + "].certificate-authority-data",
                          c.node["certificate-authority-data"]);
      if (!d.ok()) return d.status();
      cfg.ca_data = *d;
    }
    if (cfg.insecure && (!cfg.ca_file.empty() || !cfg.ca_data.empty())) {
      // (As kubectl: trusting a CA and trusting anyone at once is a mistake, not a choice.)
      return InvalidArgument(where + ": certificate-authority and insecure-skip-tls-verify are both set; use one");
    }
    auto us = users.find(user_name);
    if (!user_name.empty() && us != users.end()) {
      const Entry& u = us->second;
      cfg.token = u.node["token"].as<std::string>("");
      cfg.token_file = Resolve(u, u.node["tokenFile"].as<std::string>(""));
      cfg.client_cert_file = Resolve(u, u.node["client-certificate"].as<std::string>(""));
      cfg.client_key_file = Resolve(u, u.node["client-key"].as<std::string>(""));
      for (auto [field, out] : {std::pair{"client-certificate-data", &cfg.client_cert_data},
                                std::pair{"client-key-data", &cfg.client_key_data}}) {
        if (!u.node[field]) continue;
        auto d = DecodeData(u, std::string("users[") + user_name + "]." + field, u.node[field]);
        if (!d.ok()) return d.status();
        *out = *d;
      }
      if (u.node["exec"] || u.node["auth-provider"]) {
        return InvalidArgument(u.file + ": users[" + user_name +
                               "]: exec and auth-provider credentials are not supported; use a "
                               "token, token file or client certificate");
      }
    } else if (!user_name.empty()) {
      return InvalidArgument(ctx->second.file + ": contexts[" + context_name + "].user: user \"" + user_name +
                             "\" is not defined");
    }
  } catch (const YAML::Exception& e) {
    return InvalidArgument(ctx->second.file + ": " + e.msg);
  }
  return cfg;
}

Result<RestConfig> InClusterConfig(const std::string& root) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !port || !*host || !*port) {
    return InvalidArgument("not running in a pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set");
  }
  RestConfig cfg;
  cfg.http2 = Http2Allowed();
  const std::string h = host;
  cfg.server = "https://" + (h.find(':') != std::string::npos ? "[" + h + "]" : h) + ":" + port;
  cfg.token_file = root + "/token";
  cfg.ca_file = root + "/ca.crt";
  if (!fs::exists(cfg.token_file)) return InvalidArgument(cfg.token_file + ": service account token not found");
  return cfg;
}

}  // namespace rota::apiclient
