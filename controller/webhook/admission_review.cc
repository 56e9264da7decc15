#include "admission_review.h"

#include <openssl/evp.h>

namespace rota::webhook {
namespace {

// The deepest nesting of arrays and objects in `text`, outside strings; stops counting past
// `limit`. Linear and allocation-free, so it is safe to run before the parser.
int NestingDepth(std::string_view text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

// A string member of `obj`, or "" when absent; an error when present with another type.
Status StringField(const Json& obj, const char* key, const std::string& path, std::string& out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return Status::Ok();
  if (!it->is_string()) return InvalidArgument(path + "." + key + ": must be a string");
  out = it->get<std::string>();
  return Status::Ok();
}

std::string Base64(const std::string& data) {
  std::string out(4 * ((data.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(data.data()), static_cast<int>(data.size()));
  out.resize(n);
  return out;
}

}  // namespace

Result<AdmissionRequest> ParseAdmissionReview(std::string_view body) {
  if (body.empty()) return InvalidArgument("the request body is empty; expected an AdmissionReview");
  if (NestingDepth(body, kMaxReviewDepth) > kMaxReviewDepth) {
    return InvalidArgument("the AdmissionReview is nested deeper than " + std::to_string(kMaxReviewDepth) + " levels");
  }
  Json review = Json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (review.is_discarded()) return InvalidArgument("the request body is not JSON; expected an AdmissionReview");
  if (!review.is_object()) return InvalidArgument("the AdmissionReview must be a JSON object");
  std::string api_version, kind;
  if (Status s = StringField(review, "apiVersion", "AdmissionReview", api_version); !s.ok()) return s;
  if (Status s = StringField(review, "kind", "AdmissionReview", kind); !s.ok()) return s;
  if (kind != "AdmissionReview") return InvalidArgument("kind is \"" + kind + "\"; expected AdmissionReview");
  if (api_version != "admission.k8s.io/v1") {
    return InvalidArgument("apiVersion is \"" + api_version +
                           "\"; rota serves admission.k8s.io/v1 (set admissionReviewVersions: [v1])");
  }
  auto req = review.find("request");
  if (req == review.end() || !req->is_object())
    return InvalidArgument("AdmissionReview.request: missing or not an object");
  AdmissionRequest r;
  const std::string p = "AdmissionReview.request";
  for (auto [key, out] : {std::pair{"uid", &r.uid},
                          {"name", &r.name},
                          {"namespace", &r.namespace_},
                          {"operation", &r.operation},
                          {"subResource", &r.sub_resource}}) {
    if (Status s = StringField(*req, key, p, *out); !s.ok()) return s;
  }
  if (r.uid.empty()) return InvalidArgument(p + ".uid: is required");
  if (r.operation.empty()) return InvalidArgument(p + ".operation: is required");
  if (auto k = req->find("kind"); k != req->end()) {
    if (!k->is_object()) return InvalidArgument(p + ".kind: must be an object");
    for (auto [key, out] : {std::pair{"group", &r.group}, {"version", &r.version}, {"kind", &r.kind}}) {
      if (Status s = StringField(*k, key, p + ".kind", *out); !s.ok()) return s;
    }
  }
  if (r.kind.empty()) return InvalidArgument(p + ".kind.kind: is required");
  if (auto res = req->find("resource"); res != req->end()) {
    if (!res->is_object()) return InvalidArgument(p + ".resource: must be an object");
    if (Status s = StringField(*res, "resource", p + ".resource", r.resource); !s.ok()) return s;
  }
  if (auto u = req->find("userInfo"); u != req->end() && u->is_object()) {
    if (Status s = StringField(*u, "username", p + ".userInfo", r.username); !s.ok()) return s;
  }
  if (auto d = req->find("dryRun"); d != req->end() && !d->is_null()) {
    if (!d->is_boolean()) return InvalidArgument(p + ".dryRun: must be true or false");
    r.dry_run = d->get<bool>();
  }
  for (auto [key, out] : {std::pair{"object", &r.object}, {"oldObject", &r.old_object}}) {
    auto o = req->find(key);
    if (o == req->end() || o->is_null()) continue;
    if (!o->is_object()) return InvalidArgument(p + "." + key + ": must be an object");
    *out = std::move(*o);
  }
  if ((r.operation == "CREATE" || r.operation == "UPDATE") && r.object.is_null()) {
    return InvalidArgument(p + ".object: is required for " + r.operation);
  }
  if (r.operation == "UPDATE" && r.old_object.is_null())
    return InvalidArgument(p + ".oldObject: is required for UPDATE");
  return r;
}

std::string EncodeAdmissionReview(const std::string& uid, const AdmissionResponse& response) {
  Json res = {{"uid", uid}, {"allowed", response.allowed}};
  if (!response.allowed) {
    res["status"] = {{"code", response.code}, {"message", response.message}};
    if (!response.reason.empty()) res["status"]["reason"] = response.reason;
  }
  if (response.allowed && response.patch.is_array() && !response.patch.empty()) {
    res["patchType"] = "JSONPatch";
    res["patch"] = Base64(response.patch.dump());
  }
  if (!response.warnings.empty()) res["warnings"] = response.warnings;
  return Json{{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"response", res}}.dump(
      -1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace rota::webhook
