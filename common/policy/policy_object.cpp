#include "common/policy/policy_object.h"

#include <string_view>

#include "common/labels/derive_labels.h"
#include "common/labels/label_text.h"
#include "common/policy/policy_rules.h"
#include "common/policy/policy_syntax.h"
#include "common/policy/policy_text.h"
#include "common/policy/policy_walker.h"

namespace cn::policy {
namespace {

using nlohmann::json;
using namespace walk;

// RFC 3339 as Go's time.Parse(time.RFC3339, ...) reads it (uppercase T and Z, fractional
// seconds allowed, every field in range, the day inside its month); the agent's decoder fails on
// anything else in metadata's timestamps, and the agent exits.
bool is_rfc3339(std::string_view s) {
  auto digits = [&](std::size_t at, std::size_t n, int& out) {
    if (at + n > s.size()) return false;
    out = 0;
    for (std::size_t i = at; i < at + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      out = out * 10 + (s[i] - '0');
    }
    return true;
  };
  int year = 0;
  int month = 0;
  int day = 0;
  int hour = 0;
  int minute = 0;
  int second = 0;
  if (!digits(0, 4, year) || s.size() < 20 || s[4] != '-' || !digits(5, 2, month) || s[7] != '-' ||
      !digits(8, 2, day) || s[10] != 'T' || !digits(11, 2, hour) || s[13] != ':' ||
      !digits(14, 2, minute) || s[16] != ':' || !digits(17, 2, second)) {
    return false;
  }
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return false;
  if (day < 1 || day > kDays[month - 1] + (month == 2 && leap ? 1 : 0)) return false;
  std::size_t i = 19;
  if (i < s.size() && s[i] == '.') {
    std::size_t start = ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == start) return false;
  }
  if (i < s.size() && s[i] == 'Z') return i + 1 == s.size();
  int oh = 0;
  int om = 0;
  if (i + 6 != s.size() || (s[i] != '+' && s[i] != '-') || !digits(i + 1, 2, oh) ||
      s[i + 3] != ':' || !digits(i + 4, 2, om)) {
    return false;
  }
  return oh <= 23 && om <= 59;
}

// A JSON escape ("\u007f") brings in what the text itself may not hold, and a JSON writer puts
// it back raw, where the agent's YAML reader refuses the whole file. No string may hold it.
void printable_strings(const json& v, const std::string& pointer) {
  if (v.is_string()) {
    if (auto why = unreadable_text(v.get_ref<const std::string&>())) {
      refuse(pointer, "the string holds a " + why->substr(0, why->find(" at byte")) +
                          ", which the agent's YAML reader refuses");
    }
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) printable_strings(v[i], child(pointer, i));
  } else if (v.is_object()) {
    for (const auto& [key, member] : v.items()) {
      if (auto why = unreadable_text(key)) {
        refuse(child(pointer, key), "the key holds a " + why->substr(0, why->find(" at byte")) +
                                        ", which the agent's YAML reader refuses");
      }
      printable_strings(member, child(pointer, key));
    }
  }
}

// The agent adds k8s:io.kubernetes.pod.namespace=<metadata.namespace> to every selector of a
// namespaced policy (pkg/k8s/apis/cilium.io/utils/utils.go, getEndpointSelector), while our
// endpoints carry that label with the value derive_labels() gives it: the namespace itself only
// when it is a valid label value not in the hashed form (common/labels/label_text.cpp,
// sanitize_label_value). Otherwise the policy could select nothing at all.
void namespace_selects_endpoints(const std::string& ns) {
  const std::string carried = labels::sanitize_label_value(ns);
  if (carried == ns) return;
  std::string why;
  if (ns.size() > labels::kMaxLabelText) {
    why = "is " + std::to_string(ns.size()) + " characters, more than a label value's 63";
  } else if (ns.front() == '-' || ns.back() == '-') {
    why = "starts or ends with '-', which a label value may not";
  } else {
    why = "ends in what looks like the labeler's own hash suffix (16 hex digits)";
  }
  refuse("/metadata/namespace",
         "namespace \"" + ns + "\" " + why + ": Cilium injects it into the policy's selectors as " +
             "k8s:" + std::string(labels::kKeyK8sNamespace) + "=" + ns +
             ", but endpoints in it carry the value \"" + carried +
             "\", so the policy would select no endpoint. Use a Nomad namespace of at most 63 "
             "characters that starts and ends with a letter or digit, or a "
             "CiliumClusterwideNetworkPolicy whose selectors match k8s:" +
             std::string(labels::kKeyK8sNamespace) + ": \"" + carried + "\"");
}

// metadata decodes into Kubernetes' ObjectMeta: every typed member must have its type, or the
// agent cannot decode the file at all.
void metadata(const json& doc, bool namespaced) {
  const json* meta = member(doc, "metadata");
  if (!meta) refuse("/metadata", "required");
  loose_object(
      *meta, "/metadata",
      {"name", "namespace", "labels", "annotations", "generateName", "uid", "resourceVersion",
       "selfLink", "generation", "creationTimestamp", "deletionTimestamp",
       "deletionGracePeriodSeconds", "finalizers", "ownerReferences", "managedFields"});
  for (const auto* key : {"generateName", "uid", "resourceVersion", "selfLink"}) {
    if (const json* v = member(*meta, key)) string(*v, child("/metadata", key));
  }
  for (const auto* key : {"labels", "annotations"}) {
    if (const json* v = member(*meta, key)) string_map(*v, child("/metadata", key));
  }
  for (const auto* key : {"generation", "deletionGracePeriodSeconds"}) {
    if (const json* v = member(*meta, key))
      integer(*v, child("/metadata", key), INT64_MIN, INT64_MAX);
  }
  for (const auto* key : {"creationTimestamp", "deletionTimestamp"}) {
    if (const json* v = member(*meta, key)) {
      if (!is_rfc3339(string(*v, child("/metadata", key)))) {
        refuse(child("/metadata", key), "is not an RFC 3339 time");
      }
    }
  }
  if (const json* v = member(*meta, "finalizers")) string_array(*v, "/metadata/finalizers");
  for (const auto* key : {"ownerReferences", "managedFields"}) {
    if (const json* v = member(*meta, key)) {
      array(*v, child("/metadata", key));
      for (std::size_t i = 0; i < v->size(); ++i) {
        if (!(*v)[i].is_object()) refuse(child(child("/metadata", key), i), "must be an object");
      }
    }
  }
  const json* name = member(*meta, "name");
  if (!name || string(*name, "/metadata/name").empty()) refuse("/metadata/name", "required");
  const json* ns = member(*meta, "namespace");
  const std::string empty;
  const std::string& ns_text = ns ? string(*ns, "/metadata/namespace") : empty;
  if (namespaced) {
    if (ns_text.empty()) {
      refuse("/metadata/namespace", "required for a CiliumNetworkPolicy (the Nomad namespace)");
    }
    if (!is_nomad_namespace(ns_text)) {
      refuse("/metadata/namespace",
             "\"" + ns_text + "\" is not a Nomad namespace name (1-128 of [a-zA-Z0-9-])");
    }
    namespace_selects_endpoints(ns_text);
  } else if (!ns_text.empty()) {
    // The agent reads every file as a CiliumNetworkPolicy: a namespace would make it one.
    refuse("/metadata/namespace", "a CiliumClusterwideNetworkPolicy has no namespace");
  }
}

}  // namespace

Status validate_policy_object(const json& doc) {
  try {
    if (!doc.is_object()) refuse("", "the document must be one object, not " + type_name(doc));
    printable_strings(doc, "");
    object(doc, "", "policy");
    const json* api = member(doc, "apiVersion");
    if (!api) refuse("/apiVersion", "required");
    if (string(*api, "/apiVersion") != kApiVersion) {
      refuse("/apiVersion",
             "\"" + api->get<std::string>() + "\" is not " + std::string(kApiVersion));
    }
    const json* kind = member(doc, "kind");
    if (!kind) refuse("/kind", "required");
    bool namespaced =
        one_of(*kind, "/kind", {kKindNamespaced, kKindClusterwide}) == kKindNamespaced;
    metadata(doc, namespaced);
    const json* spec = member(doc, "spec");
    const json* specs = member(doc, "specs");
    if (!spec && (!specs || (specs->is_array() && specs->empty()))) {
      refuse("", "a policy needs spec or a non-empty specs");
    }
    if (spec) check_rule(*spec, "/spec", namespaced);
    if (specs) {
      array(*specs, "/specs");
      for (std::size_t i = 0; i < specs->size(); ++i)
        check_rule((*specs)[i], child("/specs", i), namespaced);
    }
    // `status` is the API server's and the distributor drops it (policy_object_from_item);
    // its members are not checked.
    if (const json* status = member(doc, "status")) loose_object(*status, "/status", {});
    return {};
  } catch (const Violation& v) {
    return fail(ErrorKind::invalid, (v.pointer.empty() ? "/" : v.pointer) + ": " + v.reason);
  }
}

}  // namespace cn::policy
