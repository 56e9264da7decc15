#include "visibility/front_proxy.h"

#include <algorithm>
#include <cctype>

namespace rota::visibility {
namespace {

// A JSON list of strings in a ConfigMap value ("" or absent: none).
Result<std::vector<std::string>> StringList(const apiclient::Json& data, const std::string& key) {
  if (!data.contains(key) || !data[key].is_string() || data[key].get<std::string>().empty())
    return std::vector<std::string>{};
  auto parsed = apiclient::Json::parse(data[key].get<std::string>(), nullptr, false);
  if (!parsed.is_array())
    return InvalidArgument("ConfigMap kube-system/extension-apiserver-authentication: data." + key +
                           ": not a JSON list of strings");
  std::vector<std::string> out;
  for (const auto& v : parsed)
    if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

Result<FrontProxyConfig> ParseFrontProxyConfig(const apiclient::Json& data) {
  FrontProxyConfig c;
  if (!data.is_object() || !data.contains("requestheader-client-ca-file") ||
      !data["requestheader-client-ca-file"].is_string())
    return InvalidArgument(
        "ConfigMap kube-system/extension-apiserver-authentication has no data.requestheader-client-ca-file: the "
        "apiserver does not proxy to aggregated API servers (--requestheader-client-ca-file)");
  c.client_ca_pem = data["requestheader-client-ca-file"].get<std::string>();
  for (auto [key, out] : {std::pair{"requestheader-allowed-names", &c.allowed_names},
                          std::pair{"requestheader-username-headers", &c.username_headers},
                          std::pair{"requestheader-group-headers", &c.group_headers},
                          std::pair{"requestheader-extra-headers-prefix", &c.extra_prefixes},
                          std::pair{"requestheader-uid-headers", &c.uid_headers}}) {
    auto list = StringList(data, key);
    if (!list.ok()) return list.status();
    *out = std::move(*list);
  }
  return c;
}

Result<FrontProxyConfig> LoadFrontProxyConfig(apiclient::Client& client) {
  auto cm = client.Get(apiclient::resources::kConfigMaps, "kube-system", "extension-apiserver-authentication");
  if (!cm.ok())
    return InvalidArgument("cannot read ConfigMap kube-system/extension-apiserver-authentication: " +
                           cm.error().ToString());
  return ParseFrontProxyConfig(cm->contains("data") ? (*cm)["data"] : apiclient::Json::object());
}

std::optional<serving::User> FrontProxyUser(const FrontProxyConfig& config, const controller::HttpsRequest& request) {
  if (request.client_cn.empty()) return std::nullopt;
  if (!config.allowed_names.empty() && std::find(config.allowed_names.begin(), config.allowed_names.end(),
                                                 request.client_cn) == config.allowed_names.end())
    return std::nullopt;
  serving::User user;
  for (const std::string& h : config.username_headers) {
    auto it = request.headers.find(Lower(h));
    if (it != request.headers.end() && !it->second.empty()) {
      user.name = it->second;
      break;
    }
  }
  if (user.name.empty()) return std::nullopt;
  for (const std::string& h : config.uid_headers) {
    auto it = request.headers.find(Lower(h));
    if (it != request.headers.end() && !it->second.empty()) {
      user.uid = it->second;
      break;
    }
  }
  for (const std::string& h : config.group_headers) {
    auto [from, to] = request.headers.equal_range(Lower(h));
    for (auto it = from; it != to; ++it) user.groups.push_back(it->second);
  }
  for (const std::string& prefix : config.extra_prefixes) {
    const std::string p = Lower(prefix);
    for (const auto& [name, value] : request.headers)
      if (name.size() > p.size() && name.compare(0, p.size(), p) == 0)
        user.extra[name.substr(p.size())].push_back(value);
  }
  return user;
}

}  // namespace rota::visibility
