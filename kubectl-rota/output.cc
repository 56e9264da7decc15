#include "rota/kubectl/output.h"

#include <yaml-cpp/yaml.h>

#include <regex>

#include "yaml_json.h"

namespace rota::kubectl {
namespace {

using Json = nlohmann::json;

// YAML 1.1 readers (PyYAML, go-yaml v2) also read these as booleans, and dates and times as
// timestamps; kubectl quotes them too.
bool Yaml11Special(const std::string& text) {
  static const std::regex kSpecial("^(y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF|[0-9]{4}-[0-9]{1,2}-[0-9].*)$");
  return std::regex_match(text, kSpecial);
}

// Whether `text` written plain would read back as something other than this string (a number, a
// boolean, null, a map, a timestamp...), by the reader rota's YAML front end shares with kubectl,
// or by a YAML 1.1 reader.
bool NeedsQuotes(const std::string& text) {
  if (text.empty() || Yaml11Special(text)) return true;
  auto docs = yaml::ParseDocuments(text);
  return !docs.ok() || docs->size() != 1 || docs->front() != Json(text);
}

void EmitString(YAML::Emitter& e, const std::string& text) {
  if (NeedsQuotes(text)) e << YAML::DoubleQuoted;
  e << text;
}

void Emit(YAML::Emitter& e, const Json& j) {
  switch (j.type()) {
    case Json::value_t::object:
      e << YAML::BeginMap;
      for (const auto& [key, value] : j.items()) {
        e << YAML::Key;
        EmitString(e, key);
        e << YAML::Value;
        Emit(e, value);
      }
      e << YAML::EndMap;
      break;
    case Json::value_t::array:
      e << YAML::BeginSeq;
      for (const Json& item : j) Emit(e, item);
      e << YAML::EndSeq;
      break;
    case Json::value_t::string:
      EmitString(e, j.get<std::string>());
      break;
    case Json::value_t::null:
      e << YAML::Null;
      break;
    default:  // numbers and booleans as JSON writes them, which YAML reads the same
      e << j.dump();
      break;
  }
}

}  // namespace

Json ListDocument(std::string_view kind, Json items) {
  return {{"apiVersion", kOutputApiVersion}, {"kind", kind}, {"items", std::move(items)}};
}

std::string ToYaml(const Json& doc) {
  YAML::Emitter e;
  e.SetNullFormat(YAML::LowerNull);
  Emit(e, doc);
  return std::string(e.c_str()) + "\n";
}

void WriteDocument(const Json& doc, Output format, std::ostream& out) {
  if (format == Output::kYaml) {
    out << ToYaml(doc);
  } else {
    out << doc.dump(4) << "\n";
  }
}

}  // namespace rota::kubectl
