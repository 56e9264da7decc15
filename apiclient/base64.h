#pragma once

// Base64 decoding for kubeconfig *-data fields (OpenSSL's EVP decoder).

#include <string>

namespace rota::apiclient {

// Decodes standard base64 (whitespace ignored); false when `in` is not valid base64.
bool Base64Decode(const std::string& in, std::string& out);

}  // namespace rota::apiclient
