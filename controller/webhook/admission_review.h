#pragma once

// AdmissionReview (admission.k8s.io/v1): what the apiserver POSTs to a webhook, and the review it
// expects back. Parsing never throws and never crashes on hostile input (it is fuzzed): anything
// that is not a well-formed v1 review is an error that says what is wrong.

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "rota/admission/status.h"

namespace rota::webhook {

using Json = nlohmann::json;

struct AdmissionRequest {
  std::string uid;
  std::string group, version, kind;  // request.kind
  std::string resource, sub_resource;
  std::string name, namespace_;
  std::string operation;  // CREATE, UPDATE, DELETE or CONNECT
  std::string username;
  bool dry_run = false;
  Json object;      // null when absent (DELETE)
  Json old_object;  // null when absent (CREATE)
};

struct AdmissionResponse {
  bool allowed = true;
  int code = 200;
  std::string reason;   // a metav1 StatusReason when denied: Invalid, Forbidden
  std::string message;  // shown by kubectl after "admission webhook ... denied the request: "
  Json patch;           // a JSON Patch (RFC 6902) array, or null
  std::vector<std::string> warnings;

  static AdmissionResponse Allow() { return {}; }
  static AdmissionResponse Deny(std::string message, int code = 422, std::string reason = "Invalid") {
    AdmissionResponse r;
    r.allowed = false;
    r.code = code;
    r.reason = std::move(reason);
    r.message = std::move(message);
    return r;
  }
};

// Documents nested deeper than this are refused before they are parsed (Kubernetes objects are a
// few dozen levels deep at most).
inline constexpr int kMaxReviewDepth = 128;

Result<AdmissionRequest> ParseAdmissionReview(std::string_view body);

// The review to send back for `uid`; a patch is base64-encoded with patchType JSONPatch.
std::string EncodeAdmissionReview(const std::string& uid, const AdmissionResponse& response);

}  // namespace rota::webhook
