#pragma once

// Base64 for the apiserver's byte fields: kubeconfig *-data, Secret data, caBundle (OpenSSL's EVP
// encoder and decoder).

#include <string>

namespace rota::apiclient {

// Decodes standard base64 (whitespace ignored); false when `in` is not valid base64.
bool Base64Decode(const std::string& in, std::string& out);
// Encodes as standard base64 with padding, on one line.
std::string Base64Encode(const std::string& in);

}  // namespace rota::apiclient
