#pragma once

// Certificates rota makes for itself, for serving without cert-manager: a private CA and a
// serving certificate it signs (ECDSA P-256, SHA-256), all PEM. The apiserver and Prometheus
// trust the CA; the serving certificate names the DNS names (and 127.0.0.1, ::1 when asked).

#include <chrono>
#include <string>
#include <vector>

#include "rota/admission/status.h"

namespace rota::serving {

struct ServingCert {
  std::string ca_pem;                               // the CA certificate: what a client trusts (a webhook's caBundle)
  std::string cert_pem;                             // the serving certificate
  std::string key_pem;                              // its private key (PKCS#8)
  std::chrono::system_clock::time_point not_after;  // of the serving certificate
  std::string ca_key_pem;                           // the CA's key, to sign the next serving certificate with it
};

struct CertRequest {
  std::string common_name;             // e.g. "rota-webhook-service.rota-system.svc"
  std::vector<std::string> dns_names;  // subjectAltName DNS entries (the common name too)
  bool loopback = false;               // add IP 127.0.0.1 and ::1
  std::chrono::system_clock::time_point now;
  std::chrono::hours validity{24 * 365};  // of the serving certificate; a new CA lives 10 years
  // An existing CA to sign with (so that clients trusting it need no change); none: a new one.
  std::string ca_cert_pem, ca_key_pem;
  bool client = false;  // a client certificate (clientAuth) rather than a serving one
};

Result<ServingCert> MakeServingCert(const CertRequest& request);

// When the PEM certificate expires; an error if it is not a certificate.
Result<std::chrono::system_clock::time_point> CertNotAfter(const std::string& cert_pem);

// Whether `cert_pem` verifies against `ca_pem` for `dns_name` at `now` (for tests and for
// deciding whether a stored certificate can still be used).
Status VerifyServingCert(const std::string& ca_pem, const std::string& cert_pem, const std::string& dns_name,
                         std::chrono::system_clock::time_point now);

}  // namespace rota::serving
