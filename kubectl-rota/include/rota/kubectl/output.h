#pragma once

// -o json and -o yaml. Every command prints one document of apiVersion rota.dev/v1alpha1: a list
// (kind QueueSummaryList, PreemptionList, UsageList) with its entries in "items", or one object
// (kind WorkloadExplanation). docs/kubectl-rota.md lists the fields.

#include <ostream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rota/kubectl/cli.h"

namespace rota::kubectl {

inline constexpr std::string_view kOutputApiVersion = "rota.dev/v1alpha1";

// {"apiVersion": "rota.dev/v1alpha1", "kind": kind, "items": items}
nlohmann::json ListDocument(std::string_view kind, nlohmann::json items);

// `doc` as YAML: strings that YAML would read as another type ("8", "true", "null") are quoted,
// so that the YAML reads back as the same JSON.
std::string ToYaml(const nlohmann::json& doc);

// Writes `doc` as JSON (indented four spaces, as kubectl does) or YAML, per `format` (kJson or
// kYaml).
void WriteDocument(const nlohmann::json& doc, Output format, std::ostream& out);

inline bool Structured(Output o) { return o == Output::kJson || o == Output::kYaml; }

}  // namespace rota::kubectl
