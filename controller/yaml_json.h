#pragma once

// YAML documents as JSON values, resolved the way kubectl reads manifests: plain scalars become
// null, booleans, integers or floats when they look like one, everything else (and anything
// quoted) a string.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rota/admission/status.h"

namespace rota::yaml {

// Every document of a multi-document YAML text, in order (empty documents are null).
// Syntax errors name the line and column: `line 3, column 5: ...`; so do an alias inside the node
// it names, and aliases that copy more than 64 MiB in all (64 bytes a value, plus its text). Text
// that is not UTF-8, or holds a control character YAML does not allow, names the line and byte.
Result<std::vector<nlohmann::json>> ParseDocuments(const std::string& text);

}  // namespace rota::yaml
