#include "rota/apiclient/base64.h"

#include <openssl/evp.h>

#include <vector>

namespace rota::apiclient {

bool Base64Decode(const std::string& in, std::string& out) {
  std::string clean;
  for (char c : in)
    if (c != '\n' && c != '\r' && c != ' ' && c != '\t') clean.push_back(c);
  if (clean.size() % 4 != 0) return false;
  std::vector<unsigned char> buf(clean.size() / 4 * 3 + 1);
  const int n =
      EVP_DecodeBlock(buf.data(), reinterpret_cast<const unsigned char*>(clean.data()), static_cast<int>(clean.size()));
  if (n < 0) return false;
  size_t len = static_cast<size_t>(n);
  // EVP_DecodeBlock counts padding as zero bytes; drop them.
  if (!clean.empty() && clean.back() == '=') --len;
  if (clean.size() > 1 && clean[clean.size() - 2] == '=') --len;
  out.assign(reinterpret_cast<char*>(buf.data()), len);
  return true;
}

std::string Base64Encode(const std::string& in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

}  // namespace rota::apiclient
