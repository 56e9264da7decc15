#include "self_signed.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

namespace rota::serving {

namespace {

template <typename T, void (*F)(T*)>
struct Free {
  void operator()(T* p) const { F(p); }
};
using Key = std::unique_ptr<EVP_PKEY, Free<EVP_PKEY, EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, Free<X509, X509_free>>;
using Bio = std::unique_ptr<BIO, Free<BIO, BIO_free_all>>;

std::string OpenSslError(const std::string& what) {
  char buf[256] = "unknown error";
  if (unsigned long e = ERR_get_error()) ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  return what + ": " + buf;
}

std::string Pem(int (*write)(BIO*, void*), void* object) {
  Bio bio(BIO_new(BIO_s_mem()));
  if (!bio || write(bio.get(), object) != 1) return "";
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

std::string CertPem(X509* c) {
  return Pem([](BIO* b, void* o) { return PEM_write_bio_X509(b, static_cast<X509*>(o)); }, c);
}

std::string KeyPem(EVP_PKEY* k) {
  return Pem(
      [](BIO* b, void* o) {
        return PEM_write_bio_PrivateKey(b, static_cast<EVP_PKEY*>(o), nullptr, nullptr, 0, nullptr, nullptr);
      },
      k);
}

bool AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (!ext) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// A certificate for `key` named `cn`, valid from an hour before `now` (clocks disagree) for
// `validity`, with a random serial; signed later.
Cert NewCert(EVP_PKEY* key, const std::string& cn, std::chrono::system_clock::time_point now,
             std::chrono::seconds validity) {
  Cert cert(X509_new());
  unsigned char serial[16];
  if (!cert || RAND_bytes(serial, sizeof serial) != 1) return nullptr;
  serial[0] &= 0x7f;  // positive
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  ASN1_INTEGER* sn = BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  const time_t start = std::chrono::system_clock::to_time_t(now - std::chrono::hours(1));
  const time_t end = std::chrono::system_clock::to_time_t(now + validity);
  X509_NAME* name = X509_get_subject_name(cert.get());
  if (!sn || X509_set_version(cert.get(), 2) != 1 || !ASN1_TIME_set(X509_getm_notBefore(cert.get()), start) ||
      !ASN1_TIME_set(X509_getm_notAfter(cert.get()), end) || X509_set_pubkey(cert.get(), key) != 1 ||
      X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1,
                                 0) != 1) {
    return nullptr;
  }
  return cert;
}

std::string SubjectAltNames(const CertRequest& r) {
  std::string san;
  auto add = [&](const std::string& entry) { san += (san.empty() ? "" : ",") + entry; };
  if (!r.common_name.empty()) add("DNS:" + r.common_name);
  for (const auto& d : r.dns_names)
    if (d != r.common_name) add("DNS:" + d);
  if (r.loopback) {
    add("IP:127.0.0.1");
    add("IP:::1");
  }
  return san;
}

}  // namespace

namespace {

Cert ParseCert(const std::string& pem) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  return Cert(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr);
}

Key ParseKey(const std::string& pem) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  return Key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr);
}

// A new CA for `cn`, valid ten years.
Status MakeCa(const std::string& cn, std::chrono::system_clock::time_point now, Key& key, Cert& ca) {
  key.reset(EVP_EC_gen("P-256"));
  if (!key) return Status(StatusCode::kInternal, OpenSslError("generating an EC key"));
  ca = NewCert(key.get(), "rota-ca@" + cn, now, std::chrono::hours(24 * 3650));
  if (!ca || X509_set_issuer_name(ca.get(), X509_get_subject_name(ca.get())) != 1 ||
      !AddExtension(ca.get(), ca.get(), NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
      !AddExtension(ca.get(), ca.get(), NID_key_usage, "critical,keyCertSign,cRLSign") ||
      !AddExtension(ca.get(), ca.get(), NID_subject_key_identifier, "hash") ||
      X509_sign(ca.get(), key.get(), EVP_sha256()) <= 0) {
    return Status(StatusCode::kInternal, OpenSslError("making the CA certificate"));
  }
  return Status::Ok();
}

}  // namespace

Result<ServingCert> MakeServingCert(const CertRequest& r) {
  if (r.common_name.empty() && r.dns_names.empty() && !r.loopback) {
    return InvalidArgument("a serving certificate needs a DNS name or the loopback addresses");
  }
  const std::string cn = r.common_name.empty() ? (r.dns_names.empty() ? "localhost" : r.dns_names[0]) : r.common_name;
  Key ca_key, key(EVP_EC_gen("P-256"));
  Cert ca;
  if (!r.ca_cert_pem.empty()) {
    ca = ParseCert(r.ca_cert_pem);
    ca_key = ParseKey(r.ca_key_pem);
    if (!ca || !ca_key || X509_check_private_key(ca.get(), ca_key.get()) != 1) {
      return InvalidArgument(OpenSslError("the CA certificate and key given do not go together"));
    }
  } else if (Status s = MakeCa(cn, r.now, ca_key, ca); !s.ok()) {
    return s;
  }
  Cert leaf = key ? NewCert(key.get(), cn, r.now, r.validity) : nullptr;
  if (!leaf || X509_set_issuer_name(leaf.get(), X509_get_subject_name(ca.get())) != 1 ||
      !AddExtension(leaf.get(), ca.get(), NID_basic_constraints, "critical,CA:FALSE") ||
      !AddExtension(leaf.get(), ca.get(), NID_key_usage, "critical,digitalSignature") ||
      !AddExtension(leaf.get(), ca.get(), NID_ext_key_usage, r.client ? "clientAuth" : "serverAuth") ||
      !AddExtension(leaf.get(), ca.get(), NID_authority_key_identifier, "keyid:always") ||
      !AddExtension(leaf.get(), ca.get(), NID_subject_alt_name, SubjectAltNames(r)) ||
      X509_sign(leaf.get(), ca_key.get(), EVP_sha256()) <= 0) {
    return Status(StatusCode::kInternal, OpenSslError("making the serving certificate"));
  }
  ServingCert out{CertPem(ca.get()), CertPem(leaf.get()), KeyPem(key.get()), r.now + r.validity, KeyPem(ca_key.get())};
  if (out.ca_pem.empty() || out.cert_pem.empty() || out.key_pem.empty() || out.ca_key_pem.empty())
    return Status(StatusCode::kInternal, OpenSslError("writing PEM"));
  return out;
}

Result<std::chrono::system_clock::time_point> CertNotAfter(const std::string& cert_pem) {
  Cert cert = ParseCert(cert_pem);
  if (!cert) return InvalidArgument(OpenSslError("not a PEM certificate"));
  struct tm tm {};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(cert.get()), &tm) != 1) return InvalidArgument("unreadable notAfter");
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

Status VerifyServingCert(const std::string& ca_pem, const std::string& cert_pem, const std::string& dns_name,
                         std::chrono::system_clock::time_point now) {
  Cert ca = ParseCert(ca_pem), cert = ParseCert(cert_pem);
  if (!ca || !cert) return InvalidArgument(OpenSslError("not a PEM certificate"));
  std::unique_ptr<X509_STORE, Free<X509_STORE, X509_STORE_free>> store(X509_STORE_new());
  std::unique_ptr<X509_STORE_CTX, Free<X509_STORE_CTX, X509_STORE_CTX_free>> ctx(X509_STORE_CTX_new());
  if (!store || !ctx || X509_STORE_add_cert(store.get(), ca.get()) != 1 ||
      X509_STORE_CTX_init(ctx.get(), store.get(), cert.get(), nullptr) != 1) {
    return Status(StatusCode::kInternal, OpenSslError("setting up verification"));
  }
  X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(ctx.get());
  X509_VERIFY_PARAM_set_time(param, std::chrono::system_clock::to_time_t(now));
  X509_VERIFY_PARAM_set1_host(param, dns_name.c_str(), dns_name.size());
  X509_VERIFY_PARAM_set_purpose(param, X509_PURPOSE_SSL_SERVER);
  if (X509_verify_cert(ctx.get()) != 1) {
    return InvalidArgument(std::string("certificate does not verify: ") +
                           X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx.get())));
  }
  return Status::Ok();
}

}  // namespace rota::serving
