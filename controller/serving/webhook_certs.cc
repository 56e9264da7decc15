#include "webhook_certs.h"

#include "rota/apiclient/base64.h"

namespace rota::serving {

namespace {

using apiclient::Json;
const apiclient::Resource kSecrets = apiclient::Resource::Core("secrets");
const apiclient::Resource kMutating{"admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", false};
const apiclient::Resource kValidating{"admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", false};

std::string Field(const Json& secret, const char* key) {
  std::string out;
  const Json* data = secret.contains("data") ? &secret["data"] : nullptr;
  if (!data || !data->contains(key) || !(*data)[key].is_string()) return "";
  return apiclient::Base64Decode((*data)[key].get<std::string>(), out) ? out : "";
}

// The pair the Secret holds, if it is still good for `renew_before` for every DNS name.
std::optional<ServingCert> Usable(const Json& secret, const WebhookCertConfig& c,
                                  std::chrono::system_clock::time_point now) {
  ServingCert cert{
      Field(secret, "ca.crt"), Field(secret, "tls.crt"), Field(secret, "tls.key"), {}, Field(secret, "ca.key")};
  if (cert.ca_pem.empty() || cert.cert_pem.empty() || cert.key_pem.empty() || cert.ca_key_pem.empty())
    return std::nullopt;
  for (const auto& name : ServiceDnsNames(c))
    if (!VerifyServingCert(cert.ca_pem, cert.cert_pem, name, now + c.renew_before).ok()) return std::nullopt;
  auto not_after = CertNotAfter(cert.cert_pem);
  if (!not_after.ok()) return std::nullopt;
  cert.not_after = *not_after;
  return cert;
}

// The next certificate: signed by the Secret's CA while that CA has `renew_before` left (webhook
// configurations and other replicas keep trusting it), else by a new CA.
Result<ServingCert> Next(const Json* secret, const WebhookCertConfig& c, std::chrono::system_clock::time_point now) {
  const auto names = ServiceDnsNames(c);
  CertRequest request{names[0], names, false, now};
  if (secret) {
    request.ca_cert_pem = Field(*secret, "ca.crt");
    request.ca_key_pem = Field(*secret, "ca.key");
    auto ca_end = CertNotAfter(request.ca_cert_pem);
    if (!ca_end.ok() || *ca_end < now + c.renew_before || request.ca_key_pem.empty()) {
      request.ca_cert_pem.clear();
      request.ca_key_pem.clear();
    }
  }
  auto made = MakeServingCert(request);
  if (!made.ok() && !request.ca_cert_pem.empty()) {  // (a CA pair that does not match: start again)
    request.ca_cert_pem.clear();
    request.ca_key_pem.clear();
    made = MakeServingCert(request);
  }
  return made;
}

Json SecretData(const ServingCert& cert) {
  return {{"ca.crt", apiclient::Base64Encode(cert.ca_pem)},
          {"ca.key", apiclient::Base64Encode(cert.ca_key_pem)},
          {"tls.crt", apiclient::Base64Encode(cert.cert_pem)},
          {"tls.key", apiclient::Base64Encode(cert.key_pem)}};
}

// Stores `cert` in the Secret: an update of `current` (its resourceVersion guards against a race;
// its type stays, as a Secret's type cannot change), or a new Secret when there is none.
apiclient::ApiResult<Json> Write(apiclient::Client& client, const WebhookCertConfig& c, const Json* current,
                                 const ServingCert& cert) {
  if (current) {
    Json secret = *current;
    secret["data"] = SecretData(cert);
    return client.Update(kSecrets, c.ns, secret);
  }
  Json secret = {{"apiVersion", "v1"},
                 {"kind", "Secret"},
                 {"metadata", {{"name", c.secret_name}, {"namespace", c.ns}}},
                 {"type", "kubernetes.io/tls"},
                 {"data", SecretData(cert)}};
  return client.Create(kSecrets, c.ns, secret);
}

// Reads the Secret, and replaces it when it cannot be used; a lost race re-reads it.
Result<ServingCert> EnsureSecret(apiclient::Client& client, const WebhookCertConfig& c,
                                 std::chrono::system_clock::time_point now) {
  const std::string what = "Secret " + c.ns + "/" + c.secret_name;
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto got = client.Get(kSecrets, c.ns, c.secret_name);
    if (!got.ok() && !got.error().IsNotFound()) return InvalidArgument(what + ": " + got.error().ToString());
    if (got.ok())
      if (auto cert = Usable(*got, c, now)) return *cert;
    auto made = Next(got.ok() ? &*got : nullptr, c, now);
    if (!made.ok()) return made.status();
    auto written = Write(client, c, got.ok() ? &*got : nullptr, *made);
    if (written.ok()) return *made;
    if (!written.error().IsConflict()) return InvalidArgument(what + ": " + written.error().ToString());
  }
  return InvalidArgument(what + ": kept changing while rota wrote it");
}

// Sets caBundle on every webhook of one configuration (a JSON patch, one op per webhook).
Status Trust(apiclient::Client& client, const apiclient::Resource& kind, const std::string& name,
             const std::string& ca_bundle) {
  const std::string what =
      (kind.plural == kMutating.plural ? "MutatingWebhookConfiguration " : "ValidatingWebhookConfiguration ") + name;
  auto got = client.Get(kind, "", name);
  if (!got.ok() && got.error().IsNotFound()) return Status(StatusCode::kNotFound, what + " does not exist (yet)");
  if (!got.ok()) return InvalidArgument(what + ": " + got.error().ToString());
  Json ops = Json::array();
  const Json& hooks = got->value("webhooks", Json::array());
  for (size_t i = 0; i < hooks.size(); ++i) {
    if (hooks[i].contains("clientConfig") && hooks[i]["clientConfig"].value("caBundle", "") == ca_bundle) continue;
    Json op = {
        {"op", "add"}, {"path", "/webhooks/" + std::to_string(i) + "/clientConfig/caBundle"}, {"value", ca_bundle}};
    ops.push_back(std::move(op));
  }
  if (ops.empty()) return Status::Ok();
  // (A test op first: a configuration changed since the read is refused, not half-patched.)
  Json test = {{"op", "test"},
               {"path", "/metadata/resourceVersion"},
               {"value", (*got)["metadata"].value("resourceVersion", "")}};
  ops.insert(ops.begin(), std::move(test));
  auto patched = client.Patch(kind, "", name, apiclient::PatchType::kJson, ops);
  if (!patched.ok()) return InvalidArgument(what + ": " + patched.error().ToString());
  return Status::Ok();
}

}  // namespace

std::vector<std::string> ServiceDnsNames(const WebhookCertConfig& c) {
  const std::string svc = c.service_name + "." + c.ns + ".svc";
  return {svc, svc + ".cluster.local"};
}

Result<ServingCert> EnsureWebhookCert(apiclient::Client& client, const WebhookCertConfig& config,
                                      std::chrono::system_clock::time_point now) {
  auto cert = EnsureSecret(client, config, now);
  if (!cert.ok()) return cert;
  const std::string bundle = apiclient::Base64Encode(cert->ca_pem);
  for (const auto& name : config.mutating)
    if (Status s = Trust(client, kMutating, name, bundle); !s.ok()) return s;
  for (const auto& name : config.validating)
    if (Status s = Trust(client, kValidating, name, bundle); !s.ok()) return s;
  return cert;
}

}  // namespace rota::serving
