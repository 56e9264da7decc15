#pragma once

// Webhook certificates without cert-manager (Kueue's internalCertManagement): rota keeps a CA
// (ca.crt, ca.key) and a serving certificate for its webhook Service (tls.crt, tls.key) in a
// Secret, makes a new serving certificate when the Secret's is missing, unusable or within 30
// days of expiry (signed by the same CA while it has 30 days left, so nothing that trusts the CA
// needs to change), and writes the CA into the caBundle of its webhook configurations, so the
// apiserver trusts what it serves. Every replica does this at start and then every hour; when
// two race, the first Secret written wins and the other replica uses it.

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
// written (RBAC: get, create, update on the Secret; get, patch on the configurations); the code
// is kNotFound when a webhook configuration does not exist (yet: it may be applied after rota).
Result<ServingCert> EnsureWebhookCert(apiclient::Client& client, const WebhookCertConfig& config,
                                      std::chrono::system_clock::time_point now);

}  // namespace rota::serving
