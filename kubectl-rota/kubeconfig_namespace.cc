#include "rota/kubectl/kubeconfig_namespace.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

namespace rota::kubectl {
namespace {

std::string DefaultPaths() {
  const char* env = std::getenv("KUBECONFIG");
  if (env && *env) return env;
  const char* home = std::getenv("HOME");
  return home ? std::string(home) + "/.kube/config" : "";
}

// The contexts' namespaces by name, and the current context, merged over the files.
struct Merged {
  std::string current;
  std::map<std::string, std::string> namespaces;
};

void MergeFile(const std::string& file, Merged& m) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(file);
    if (m.current.empty() && root["current-context"]) m.current = root["current-context"].as<std::string>("");
    for (const auto& item : root["contexts"]) {
      const std::string name = item["name"].as<std::string>("");
      if (!name.empty() && !m.namespaces.count(name))
        m.namespaces[name] = item["context"]["namespace"].as<std::string>("");
    }
  } catch (const YAML::Exception&) {
    // (LoadKubeconfig reports a broken file; the namespace just falls back.)
  }
}

}  // namespace

std::string ContextNamespace(const std::string& paths, const std::string& context) {
  Merged m;
  std::stringstream list(paths.empty() ? DefaultPaths() : paths);
  std::string file;
  while (std::getline(list, file, ':'))
    if (!file.empty() && std::filesystem::exists(file)) MergeFile(file, m);
  auto it = m.namespaces.find(context.empty() ? m.current : context);
  return it == m.namespaces.end() || it->second.empty() ? "default" : it->second;
}

}  // namespace rota::kubectl
