#pragma once

// Webhook certificates without cert-manager (Kueue's internalCertManagement): rota keeps a CA
// and a serving certificate for its webhook Service in a Secret, makes them when the Secret is
// missing, unusable or within 30 days of expiry, and writes the CA into the caBundle of its
// webhook configurations, so the apiserver trusts what it serves. Every replica does this at
// start; when two race, the first Secret written wins and the other replica uses it.

#include <chrono>
#include <string>
#include <vector>

#include "rota/apiclient/client.h"
#include "self_signed.h"

namespace rota::serving {

struct WebhookCertConfig {
  std::string ns = "rota-system";
  std::string secret_name = "rota-webhook-server-cert";
  std::string service_name = "rota-webhook-service";
  std::vector<std::string> mutating = {"rota-mutating-webhook-configuration"};
  std::vector<std::string> validating = {"rota-validating-webhook-configuration"};
  std::chrono::hours renew_before{24 * 30};
};

// The names the serving certificate must carry: <service>.<ns>.svc and .svc.cluster.local.
std::vector<std::string> ServiceDnsNames(const WebhookCertConfig& c);

// The certificate to serve, from the Secret or newly made and stored there, with every webhook
// of the named configurations trusting its CA. Errors name the object that could not be read or
// written (RBAC: get, create, update on the Secret; get, patch on the configurations).
Result<ServingCert> EnsureWebhookCert(apiclient::Client& client, const WebhookCertConfig& config,
                                      std::chrono::system_clock::time_point now);

}  // namespace rota::serving
