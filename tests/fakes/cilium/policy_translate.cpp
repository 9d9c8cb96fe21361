#include "tests/fakes/cilium/policy_translate.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <regex>
#include <set>

namespace cn::fakes::cilium {

using nlohmann::json;

namespace {

// ---- YAML -> JSON ----

json plain_scalar(const std::string& s) {
  static const std::set<std::string> kTrue = {"y",    "Y",    "yes", "Yes", "YES", "true",
                                              "True", "TRUE", "on",  "On",  "ON"};
  static const std::set<std::string> kFalse = {"n",     "N",     "no",  "No",  "NO", "false",
                                               "False", "FALSE", "off", "Off", "OFF"};
  if (kTrue.contains(s)) return true;
  if (kFalse.contains(s)) return false;
  static const std::regex kInt("^[-+]?(0|[1-9][0-9_]*)$");
  static const std::regex kHex("^0x[0-9a-fA-F_]+$");
  static const std::regex kFloat("^[-+]?(\\.[0-9]+|[0-9][0-9_]*(\\.[0-9_]*)?)([eE][-+]?[0-9]+)?$");
  std::string digits;
  for (char c : s) {
    if (c != '_') digits += c;
  }
  try {
    if (std::regex_match(s, kInt)) return std::stoll(digits);
    if (std::regex_match(s, kHex)) return std::stoll(digits.substr(2), nullptr, 16);
    if (std::regex_match(s, kFloat)) return std::stod(digits);
  } catch (const std::out_of_range&) {
    return std::stod(digits);
  }
  return s;
}

Result<json> node_to_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return json(nullptr);
    case YAML::NodeType::Scalar:
      // Quoted scalars carry the non-specific tag "!", explicit tags their own: both stay text.
      if (node.Tag() != "?") return json(node.Scalar());
      return plain_scalar(node.Scalar());
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const auto& item : node) {
        auto v = node_to_json(item);
        if (!v) return v;
        out.push_back(std::move(*v));
      }
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) return fail("error converting YAML to JSON: non-scalar key");
        auto v = node_to_json(kv.second);
        if (!v) return v;
        out[kv.first.Scalar()] = std::move(*v);
      }
      return out;
    }
  }
  return json(nullptr);
}

// ---- decode checks (Go's json.Unmarshal into the CRD types) ----

using Checker = std::function<Status(const json&, const std::string&)>;

std::string json_type(const json& j) {
  if (j.is_string()) return "string";
  if (j.is_number()) return "number";
  if (j.is_boolean()) return "bool";
  if (j.is_array()) return "array";
  return "object";
}

Status type_error(const json& j, const std::string& path, const std::string& go_type) {
  return fail("json: cannot unmarshal " + json_type(j) + " into Go struct field " + path +
              " of type " + go_type);
}

Checker string_t() {
  return [](const json& j, const std::string& p) -> Status {
    if (j.is_null() || j.is_string()) return {};
    return type_error(j, p, "string");
  };
}

Checker bool_t() {
  return [](const json& j, const std::string& p) -> Status {
    if (j.is_null() || j.is_boolean()) return {};
    return type_error(j, p, "bool");
  };
}

Checker int32_t_() {
  return [](const json& j, const std::string& p) -> Status {
    if (j.is_null()) return {};
    if (j.is_number_integer() && j.get<long long>() >= std::numeric_limits<std::int32_t>::min() &&
        j.get<long long>() <= std::numeric_limits<std::int32_t>::max()) {
      return {};
    }
    return type_error(j, p, "int32");
  };
}

Checker any_t() {
  return [](const json&, const std::string&) -> Status { return {}; };
}

Checker string_map_t() {
  return [](const json& j, const std::string& p) -> Status {
    if (j.is_null()) return {};
    if (!j.is_object()) return type_error(j, p, "map[string]string");
    for (const auto& [k, v] : j.items()) {
      if (!v.is_null() && !v.is_string()) return type_error(v, p + "." + k, "string");
    }
    return {};
  };
}

Checker array_of(Checker item, std::string go_type) {
  return [item, go_type](const json& j, const std::string& p) -> Status {
    if (j.is_null()) return {};
    if (!j.is_array()) return type_error(j, p, go_type);
    for (const auto& e : j) {
      if (auto st = item(e, p); !st) return st;
    }
    return {};
  };
}

Checker object_of(std::vector<std::pair<std::string, Checker>> fields, std::string go_type) {
  return [fields = std::move(fields), go_type](const json& j, const std::string& p) -> Status {
    if (j.is_null()) return {};
    if (!j.is_object()) return type_error(j, p, go_type);
    for (const auto& [name, check] : fields) {
      auto it = j.find(name);
      if (it == j.end()) continue;
      if (auto st = check(*it, p + "." + name); !st) return st;
    }
    return {};
  };
}

Checker selector_t() {
  return object_of(
      {{"matchLabels", string_map_t()},
       {"matchExpressions", array_of(object_of({{"key", string_t()},
                                                {"operator", string_t()},
                                                {"values", array_of(string_t(), "[]string")}},
                                               "v1.LabelSelectorRequirement"),
                                     "[]v1.LabelSelectorRequirement")}},
      "api.EndpointSelector");
}

Checker port_rule_t() {
  return object_of(
      {{"ports",
        array_of(
            object_of({{"port", string_t()}, {"endPort", int32_t_()}, {"protocol", string_t()}},
                      "api.PortProtocol"),
            "[]api.PortProtocol")},
       {"rules", object_of({}, "api.L7Rules")},
       {"serverNames", array_of(string_t(), "[]string")}},
      "api.PortRule");
}

Checker cidr_set_t() {
  return object_of({{"cidr", string_t()},
                    {"cidrGroupRef", string_t()},
                    {"except", array_of(string_t(), "[]api.CIDR")}},
                   "api.CIDRRule");
}

Checker common_peer_fields(bool ingress, bool deny) {
  const std::string dir = ingress ? "from" : "to";
  std::vector<std::pair<std::string, Checker>> f = {
      {dir + "Endpoints", array_of(selector_t(), "[]api.EndpointSelector")},
      {dir + "Requires", array_of(selector_t(), "[]api.EndpointSelector")},
      {dir + "Nodes", array_of(selector_t(), "[]api.EndpointSelector")},
      {dir + "CIDR", array_of(string_t(), "api.CIDRSlice")},
      {dir + "CIDRSet", array_of(cidr_set_t(), "api.CIDRRuleSlice")},
      {dir + "Entities", array_of(string_t(), "api.EntitySlice")},
      {dir + "Groups", array_of(object_of({}, "api.Groups"), "[]api.Groups")},
      {"toPorts", array_of(port_rule_t(), "api.PortRules")},
      {"icmps",
       array_of(object_of({{"fields", array_of(object_of({{"family", string_t()}}, "api.ICMPField"),
                                               "[]api.ICMPField")}},
                          "api.ICMPRule"),
                "api.ICMPRules")},
  };
  if (!deny)
    f.emplace_back("authentication", object_of({{"mode", string_t()}}, "api.Authentication"));
  if (!ingress && !deny) {
    f.emplace_back("toFQDNs",
                   array_of(object_of({{"matchName", string_t()}, {"matchPattern", string_t()}},
                                      "api.FQDNSelector"),
                            "api.FQDNSelectorSlice"));
    f.emplace_back("toServices", array_of(object_of({}, "api.Service"), "[]api.Service"));
  }
  return object_of(std::move(f), ingress ? (deny ? "api.IngressDenyRule" : "api.IngressRule")
                                         : (deny ? "api.EgressDenyRule" : "api.EgressRule"));
}

Checker rule_t() {
  return object_of(
      {{"endpointSelector", selector_t()},
       {"nodeSelector", selector_t()},
       {"ingress", array_of(common_peer_fields(true, false), "[]api.IngressRule")},
       {"ingressDeny", array_of(common_peer_fields(true, true), "[]api.IngressDenyRule")},
       {"egress", array_of(common_peer_fields(false, false), "[]api.EgressRule")},
       {"egressDeny", array_of(common_peer_fields(false, true), "[]api.EgressDenyRule")},
       {"labels",
        array_of(object_of({{"key", string_t()}, {"value", string_t()}, {"source", string_t()}},
                           "labels.Label"),
                 "labels.LabelArray")},
       {"description", string_t()},
       {"enableDefaultDeny",
        object_of({{"ingress", bool_t()}, {"egress", bool_t()}}, "api.DefaultDenyConfig")},
       {"log", object_of({{"value", string_t()}}, "api.LogConfig")}},
      "api.Rule");
}

Checker policy_t() {
  return object_of({{"apiVersion", string_t()},
                    {"kind", string_t()},
                    {"metadata", object_of({{"name", string_t()},
                                            {"namespace", string_t()},
                                            {"uid", string_t()},
                                            {"labels", string_map_t()},
                                            {"annotations", string_map_t()}},
                                           "v1.ObjectMeta")},
                    {"spec", rule_t()},
                    {"specs", array_of(rule_t(), "api.Rules")},
                    {"status", any_t()}},
                   "v2.CiliumNetworkPolicy");
}

// ---- parse + injection ----

constexpr const char* kNamespaceKey = "io.kubernetes.pod.namespace";
constexpr const char* kClusterKey = "io.cilium.k8s.policy.cluster";
constexpr const char* kNamespaceLabelsPrefix = "io.cilium.k8s.namespace.labels";

// Ingress/Egress(Deny)Rule.Validate and their common rules (cilium/cilium
// pkg/policy/api/rule_validation.go): the checks that depend on an agent option, in its order:
// the common rule's from/toNodes error comes back before the L7 and ICMP checks run.
bool part_has_l7_rules(const json& part) {
  auto ports = part.find("toPorts");
  if (ports == part.end() || !ports->is_array()) return false;
  for (const auto& pr : *ports) {
    if (!pr.is_object()) continue;
    auto rules = pr.find("rules");
    if (rules == pr.end() || !rules->is_object()) continue;
    for (auto key : {"http", "kafka", "dns", "l7"}) {
      auto it = rules->find(key);
      if (it != rules->end() && it->is_array() && !it->empty()) return true;
    }
  }
  return false;
}

bool part_has_nonempty(const json& part, const char* key) {
  auto it = part.find(key);
  return it != part.end() && it->is_array() && !it->empty();
}

Status check_option_dependent(const json& part, bool ingress, bool deny,
                              const RuleValidationFlags& flags) {
  if (part_has_nonempty(part, ingress ? "fromNodes" : "toNodes") &&
      !flags.enable_node_selector_labels) {
    return fail(
        "FromNodes/ToNodes rules can only be applied when the \"enable-node-selector-labels\" "
        "flag is set");
  }
  if (!deny && part_has_l7_rules(part) && !flags.enable_l7_proxy) {
    return fail("L7 policy is not supported since L7 proxy is not enabled");
  }
  if (part_has_nonempty(part, "icmps") && !flags.enable_icmp_rules) {
    return fail("ICMP rules can only be applied when the \"enable-icmp-rules\" flag is set");
  }
  return {};
}

struct ParseContext {
  std::string ns;
  std::string cluster;
  bool matches_init = false;
  RuleValidationFlags flags;
};

// utils.go getEndpointSelector.
EndpointSelector peer_selector(EndpointSelector es, const ParseContext& ctx, bool endpoints) {
  if (endpoints && es.has_key_prefix("reserved:")) return es;
  const std::string k8s_ns = std::string("k8s:") + kNamespaceKey;
  if (!es.has_key(k8s_ns) && !es.has_key(std::string("any:") + kNamespaceKey)) {
    if (ctx.ns.empty()) {
      if (!ctx.matches_init) es.add_exists(k8s_ns);
    } else if (!es.has_key_prefix(std::string("k8s:") + kNamespaceLabelsPrefix) &&
               !es.has_key_prefix(std::string("any:") + kNamespaceLabelsPrefix)) {
      es.add_match(k8s_ns, ctx.ns);
    }
  }
  if (!ctx.cluster.empty() && !es.has_key(std::string("k8s:") + kClusterKey) &&
      !es.has_key(std::string("any:") + kClusterKey)) {
    es.add_match(std::string("k8s:") + kClusterKey, ctx.cluster);
  }
  return es;
}

Status check_ports(const json& rule_part) {
  static const std::set<std::string> kProtocols = {"",       "TCP",  "UDP",  "SCTP", "ICMP",
                                                   "ICMPv6", "VRRP", "IGMP", "ANY"};
  static const std::regex kNamedPort("^[a-z0-9]([a-z0-9-]{0,13}[a-z0-9])?$");
  for (const auto& pr : rule_part.value("toPorts", json::array())) {
    if (!pr.is_object()) continue;
    for (const auto& pp : pr.value("ports", json::array())) {
      if (!pp.is_object()) continue;
      const std::string port = decoded_string(pp, "port");
      const std::string proto = decoded_string(pp, "protocol");
      if (!kProtocols.contains(proto)) return fail("invalid protocol \"" + proto + "\"");
      if (port.empty()) continue;
      bool digits =
          std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (digits) {
        if (port.size() > 5 || std::stol(port) > 65535) {
          return fail("Unable to parse port: port \"" + port + "\" is out of range");
        }
      } else if (!std::regex_match(port, kNamedPort)) {
        return fail("Unable to parse port: invalid port name \"" + port + "\"");
      }
    }
  }
  return {};
}

Result<std::vector<EndpointSelector>> translate_peers(json& part, const char* field,
                                                      const ParseContext& ctx, bool endpoints) {
  std::vector<EndpointSelector> out;
  auto it = part.find(field);
  if (it == part.end() || !it->is_array()) return out;
  for (auto& sel : *it) {
    auto es = EndpointSelector::from_json(sel);
    if (!es) return std::unexpected(es.error());
    EndpointSelector injected = peer_selector(*es, ctx, endpoints);
    sel = injected.to_json();
    out.push_back(std::move(injected));
  }
  return out;
}

Result<TranslatedRule> translate_rule(const json& in, const ParseContext& base, bool namespaced) {
  const std::string what = namespaced ? "CiliumNetworkPolicy" : "CiliumClusterwideNetworkPolicy";
  TranslatedRule out;
  out.rule = in;
  const bool has_es = in.contains("endpointSelector") && !in.at("endpointSelector").is_null();
  const bool has_ns = in.contains("nodeSelector") && !in.at("nodeSelector").is_null();
  if (has_es == has_ns) {
    return fail("Invalid " + what + " spec: rule must have " +
                (has_es ? std::string("only one of") : std::string("one of")) +
                " EndpointSelector or NodeSelector");
  }
  if (namespaced && has_ns) return fail("Invalid " + what + " spec: rule cannot have NodeSelector");
  ParseContext ctx = base;
  if (has_es) {
    auto subject = EndpointSelector::from_json(in.at("endpointSelector"));
    if (!subject) return std::unexpected(subject.error());
    out.subject = *subject;
    if (namespaced) out.subject.add_match(std::string("k8s:") + kNamespaceKey, ctx.ns);
    ctx.matches_init = subject->has_key("reserved:init");
    out.rule["endpointSelector"] = out.subject.to_json();
  } else {
    auto nodes = EndpointSelector::from_json(in.at("nodeSelector"));
    if (!nodes) return std::unexpected(nodes.error());
    out.subject = *nodes;
    out.node_subject = true;
  }
  struct Section {
    const char* name;
    bool ingress;
    bool deny;
  };
  for (const Section sec : {Section{"ingress", true, false}, Section{"ingressDeny", true, true},
                            Section{"egress", false, false}, Section{"egressDeny", false, true}}) {
    auto it = out.rule.find(sec.name);
    if (it == out.rule.end() || !it->is_array()) continue;
    for (auto& part : *it) {
      if (!part.is_object()) continue;
      if (auto st = check_ports(part); !st) {
        return fail("Invalid " + what + " spec: " + st.error().message);
      }
      if (auto st = check_option_dependent(part, sec.ingress, sec.deny, ctx.flags); !st) {
        return fail("Invalid " + what + " spec: " + st.error().message);
      }
      auto peers = translate_peers(part, sec.ingress ? "fromEndpoints" : "toEndpoints", ctx, true);
      if (!peers) return std::unexpected(peers.error());
      out.peers.insert(out.peers.end(), peers->begin(), peers->end());
      auto required =
          translate_peers(part, sec.ingress ? "fromRequires" : "toRequires", ctx, false);
      if (!required) return std::unexpected(required.error());
    }
  }
  return out;
}

}  // namespace

Result<json> yaml_to_json(std::string_view text) {
  try {
    YAML::Node node = YAML::Load(std::string(text));
    return node_to_json(node);
  } catch (const YAML::Exception& e) {
    return fail(std::string("error converting YAML to JSON: ") + e.what());
  }
}

Status check_decodes(const json& doc) {
  if (doc.is_null()) return {};
  if (!doc.is_object()) {
    return fail("json: cannot unmarshal " + json_type(doc) +
                " into Go value of type v2.CiliumNetworkPolicy");
  }
  return policy_t()(doc, "CiliumNetworkPolicy");
}

Result<TranslatedPolicy> parse_policy(const json& doc, const InjectionOptions& options) try {
  TranslatedPolicy out;
  const json meta = doc.is_object() ? doc.value("metadata", json::object()) : json::object();
  if (meta.is_object()) {
    out.name = decoded_string(meta, "name");
    out.namespace_ = decoded_string(meta, "namespace");
  }
  const bool namespaced = !out.namespace_.empty();
  const std::string what = namespaced ? "CiliumNetworkPolicy" : "CiliumClusterwideNetworkPolicy";
  if (out.name.empty()) return fail(what + " must have name");
  std::vector<json> rules;
  if (doc.contains("spec") && !doc.at("spec").is_null()) rules.push_back(doc.at("spec"));
  if (doc.contains("specs") && doc.at("specs").is_array()) {
    for (const auto& r : doc.at("specs")) rules.push_back(r);
  }
  if (rules.empty()) return fail("Invalid " + what + " spec(s): empty policy");
  ParseContext ctx{out.namespace_, options.cluster_name, false, options.flags};
  for (const auto& r : rules) {
    if (r.is_null()) continue;
    auto translated = translate_rule(r, ctx, namespaced);
    if (!translated) return std::unexpected(translated.error());
    out.rules.push_back(std::move(*translated));
  }
  return out;
} catch (const json::exception& e) {
  // The type check ran before; this only guards the watcher thread against a shape it missed.
  return fail(std::string("Invalid policy: ") + e.what());
}

bool is_dns1123_subdomain(std::string_view name) {
  static const std::regex kSubdomain(
      "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$");
  return !name.empty() && name.size() <= 253 &&
         std::regex_match(name.begin(), name.end(), kSubdomain);
}

}  // namespace cn::fakes::cilium
