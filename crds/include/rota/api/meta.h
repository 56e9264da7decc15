#pragma once

// Kubernetes object metadata and the shared core types rota reads (conditions, label selectors,
// taints, tolerations). Only the fields rota uses are typed; the rest stay in `extra`.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rota/api/codec.h"

namespace rota::api {

struct ObjectMeta {
  std::string name;
  std::string namespace_;
  std::string uid;
  std::string resource_version;
  std::optional<int64_t> generation;
  std::string creation_timestamp;  // RFC 3339, as the apiserver writes it
  std::string deletion_timestamp;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("name", s.name);
    v.Optional("namespace", s.namespace_);
    v.Optional("uid", s.uid);
    v.Optional("resourceVersion", s.resource_version);
    v.Optional("generation", s.generation);
    v.Optional("creationTimestamp", s.creation_timestamp);
    v.Optional("deletionTimestamp", s.deletion_timestamp);
    v.Optional("labels", s.labels);
    v.Optional("annotations", s.annotations);
  }
};

enum class ConditionStatus { kTrue, kFalse, kUnknown };
template <>
struct EnumNames<ConditionStatus> {
  static constexpr std::pair<ConditionStatus, std::string_view> kValues[] = {
      {ConditionStatus::kTrue, "True"}, {ConditionStatus::kFalse, "False"}, {ConditionStatus::kUnknown, "Unknown"}};
};

// metav1.Condition.
struct Condition {
  std::string type;
  ConditionStatus status = ConditionStatus::kUnknown;
  std::string reason;
  std::string message;
  std::string last_transition_time;
  std::optional<int64_t> observed_generation;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Required("type", s.type);
    v.Required("status", s.status);
    v.Required("reason", s.reason);
    v.Required("message", s.message);
    v.Required("lastTransitionTime", s.last_transition_time);
    v.Optional("observedGeneration", s.observed_generation);
  }
};

// The condition of `type`, or nullptr.
const Condition* FindCondition(const std::vector<Condition>& conditions, std::string_view type);

enum class SelectorOperator { kIn, kNotIn, kExists, kDoesNotExist };
template <>
struct EnumNames<SelectorOperator> {
  static constexpr std::pair<SelectorOperator, std::string_view> kValues[] = {
      {SelectorOperator::kIn, "In"},
      {SelectorOperator::kNotIn, "NotIn"},
      {SelectorOperator::kExists, "Exists"},
      {SelectorOperator::kDoesNotExist, "DoesNotExist"}};
};

struct LabelSelectorRequirement {
  std::string key;
  SelectorOperator op = SelectorOperator::kIn;
  std::vector<std::string> values;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Required("key", s.key);
    v.Required("operator", s.op);
    v.Optional("values", s.values);
  }
};

// metav1.LabelSelector. An empty selector matches everything.
struct LabelSelector {
  std::map<std::string, std::string> match_labels;
  std::vector<LabelSelectorRequirement> match_expressions;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("matchLabels", s.match_labels);
    v.Optional("matchExpressions", s.match_expressions);
  }

  bool Matches(const std::map<std::string, std::string>& labels) const;
};

enum class TaintEffect { kNoSchedule, kPreferNoSchedule, kNoExecute };
template <>
struct EnumNames<TaintEffect> {
  static constexpr std::pair<TaintEffect, std::string_view> kValues[] = {
      {TaintEffect::kNoSchedule, "NoSchedule"},
      {TaintEffect::kPreferNoSchedule, "PreferNoSchedule"},
      {TaintEffect::kNoExecute, "NoExecute"}};
};

struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::kNoSchedule;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Required("key", s.key);
    v.Optional("value", s.value);
    v.Required("effect", s.effect);
  }
};

enum class TolerationOperator { kEqual, kExists };
template <>
struct EnumNames<TolerationOperator> {
  static constexpr std::pair<TolerationOperator, std::string_view> kValues[] = {
      {TolerationOperator::kEqual, "Equal"}, {TolerationOperator::kExists, "Exists"}};
};

struct Toleration {
  std::string key;                       // empty with operator Exists: tolerates every taint
  std::optional<TolerationOperator> op;  // absent means Equal
  std::string value;
  std::optional<TaintEffect> effect;  // absent: every effect
  std::optional<int64_t> toleration_seconds;
  Extra extra;  // null unless the object had fields rota does not type

  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v.Optional("key", s.key);
    v.Optional("operator", s.op);
    v.Optional("value", s.value);
    v.Optional("effect", s.effect);
    v.Optional("tolerationSeconds", s.toleration_seconds);
  }

  // Whether this toleration tolerates `taint`, by Kubernetes' rules.
  bool Tolerates(const Taint& taint) const;
};

}  // namespace rota::api
