#include "self_signed.h"

#include <gtest/gtest.h>

namespace rota::serving {
namespace {

using std::chrono::hours;
const auto kNow = std::chrono::system_clock::from_time_t(1'800'000'000);

TEST(SelfSignedTest, TheServingCertificateVerifiesAgainstItsCaForItsNamesAndTime) {
  auto made = MakeServingCert(
      {"rota-webhook-service.rota-system.svc", {"rota-webhook-service.rota-system"}, true, kNow, hours(24)});
  ASSERT_TRUE(made.ok()) << made.status().message();
  EXPECT_NE(made->ca_pem, made->cert_pem);
  EXPECT_NE(made->key_pem.find("PRIVATE KEY"), std::string::npos);
  EXPECT_TRUE(VerifyServingCert(made->ca_pem, made->cert_pem, "rota-webhook-service.rota-system.svc", kNow).ok());
  EXPECT_TRUE(VerifyServingCert(made->ca_pem, made->cert_pem, "rota-webhook-service.rota-system", kNow).ok());
  EXPECT_FALSE(VerifyServingCert(made->ca_pem, made->cert_pem, "evil.example.com", kNow).ok());
  EXPECT_FALSE(
      VerifyServingCert(made->ca_pem, made->cert_pem, "rota-webhook-service.rota-system.svc", kNow + hours(25)).ok());
  auto not_after = CertNotAfter(made->cert_pem);
  ASSERT_TRUE(not_after.ok());
  EXPECT_EQ(*not_after, kNow + hours(24));
}

TEST(SelfSignedTest, AnotherCaDoesNotVouchForIt) {
  auto a = MakeServingCert({"a.svc", {}, false, kNow});
  auto b = MakeServingCert({"a.svc", {}, false, kNow});
  ASSERT_TRUE(a.ok() && b.ok());
  Status s = VerifyServingCert(b->ca_pem, a->cert_pem, "a.svc", kNow);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("does not verify"), std::string::npos) << s.message();
}

TEST(SelfSignedTest, TheNextCertificateCanBeSignedByTheSameCa) {
  auto first = MakeServingCert({"a.svc", {}, false, kNow, hours(24)});
  ASSERT_TRUE(first.ok());
  CertRequest next{"a.svc", {}, false, kNow + hours(20), hours(24), first->ca_pem, first->ca_key_pem};
  auto second = MakeServingCert(next);
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ(second->ca_pem, first->ca_pem) << "whoever trusts the CA trusts the next certificate";
  EXPECT_NE(second->cert_pem, first->cert_pem);
  EXPECT_TRUE(VerifyServingCert(first->ca_pem, second->cert_pem, "a.svc", kNow + hours(30)).ok());
  EXPECT_FALSE(VerifyServingCert(first->ca_pem, first->cert_pem, "a.svc", kNow + hours(30)).ok());

  auto other = MakeServingCert({"b.svc", {}, false, kNow});
  ASSERT_TRUE(other.ok());
  next.ca_key_pem = other->ca_key_pem;  // a key of another CA
  auto mismatched = MakeServingCert(next);
  ASSERT_FALSE(mismatched.ok());
  EXPECT_NE(mismatched.status().message().find("do not go together"), std::string::npos);
}

TEST(SelfSignedTest, ACertificateNeedsAName) {
  auto made = MakeServingCert({"", {}, false, kNow});
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.status().message().find("DNS name"), std::string::npos);
  EXPECT_FALSE(CertNotAfter("not a certificate").ok());
}

}  // namespace
}  // namespace rota::serving
