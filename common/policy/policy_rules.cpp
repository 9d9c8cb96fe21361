#include "common/policy/policy_rules.h"

#include <cctype>
#include <string_view>
#include <vector>

#include "common/policy/policy_regex.h"
#include "common/policy/policy_syntax.h"
#include "common/policy/policy_walker.h"
#include "common/util/ip_prefix.h"

// Sources (cilium/cilium, releases 1.16.0 to 1.19.4, docs/policies.md has the table):
//   schema:    pkg/k8s/apis/cilium.io/client/crds/v2/ciliumnetworkpolicies.yaml
//   semantics: pkg/policy/api/rule_validation.go (Rule.Sanitize and the sanitize methods below
//              it), pkg/policy/api/selector.go (EndpointSelector.Sanitize).
// Where releases differ, the stricter rule is taken, so that one file loads on all of them.
namespace cn::policy {
namespace {

using nlohmann::json;
using namespace walk;

constexpr std::size_t kMaxPorts = 40;       // rule_validation.go maxPorts, CRD maxItems
constexpr std::size_t kMaxIcmpFields = 40;  // rule_validation.go maxICMPFields, CRD maxItems

std::size_t count(const json& obj, std::string_view key) {
  const json* v = member(obj, key);
  return v && v->is_array() ? v->size() : 0;
}

void label_selector(const json& v, const std::string& p) {
  object(v, p, "selector");
  if (const json* labels = member(v, "matchLabels")) {
    std::string lp = child(p, "matchLabels");
    loose_object(*labels, lp, {});
    for (const auto& [key, value] : labels->items()) {
      std::string kp = child(lp, key);
      const std::string& text = string(value, kp);
      if (auto why = selector_key_problem(key)) refuse(kp, *why);
      if (auto why = label_value_problem(text)) refuse(kp, *why);
    }
  }
  if (const json* exprs = member(v, "matchExpressions")) {
    std::string ep = child(p, "matchExpressions");
    array(*exprs, ep);
    for (std::size_t i = 0; i < exprs->size(); ++i) {
      const json& e = (*exprs)[i];
      std::string xp = child(ep, i);
      object(e, xp, "selectorRequirement");
      const json* key = member(e, "key");
      if (!key) refuse(child(xp, "key"), "required");
      const std::string& k = string(*key, child(xp, "key"));
      if (auto why = selector_key_problem(k)) refuse(child(xp, "key"), *why);
      const json* op = member(e, "operator");
      if (!op) refuse(child(xp, "operator"), "required");
      const std::string& o =
          one_of(*op, child(xp, "operator"), {"In", "NotIn", "Exists", "DoesNotExist"});
      std::size_t n = 0;
      if (const json* values = member(e, "values")) {
        std::string vp = child(xp, "values");
        string_array(*values, vp);
        n = values->size();
        for (std::size_t j = 0; j < n; ++j) {
          if (auto why = label_value_problem((*values)[j].get_ref<const std::string&>())) {
            refuse(child(vp, j), *why);
          }
        }
      }
      // Kubernetes ValidateLabelSelectorRequirement, which the agent runs on every selector.
      if ((o == "In" || o == "NotIn") && n == 0) {
        refuse(child(xp, "values"), "must be non-empty when operator is " + o);
      }
      if ((o == "Exists" || o == "DoesNotExist") && n > 0) {
        refuse(child(xp, "values"), "must be empty when operator is " + o);
      }
    }
  }
}

void selector_list(const json& obj, std::string_view key, const std::string& p) {
  const json* list = member(obj, key);
  if (!list) return;
  std::string lp = child(p, key);
  array(*list, lp);
  for (std::size_t i = 0; i < list->size(); ++i) label_selector((*list)[i], child(lp, i));
}

void requires_list(const json& obj, std::string_view key, const std::string& p) {
  const json* list = member(obj, key);
  if (!list) return;
  array(*list, child(p, key));
  // Deprecated, and refused by the 1.19 schema (maxItems 0).
  if (!list->empty()) refuse(child(p, key), "is no longer supported (Cilium 1.19 refuses it)");
}

void cidr_list(const json& obj, std::string_view key, const std::string& p) {
  const json* list = member(obj, key);
  if (!list) return;
  std::string lp = child(p, key);
  string_array(*list, lp);
  for (std::size_t i = 0; i < list->size(); ++i) {
    const auto& s = (*list)[i].get_ref<const std::string&>();
    // CIDR.sanitize: a prefix, or a bare address.
    if (!parse_ip_prefix(s) && !parse_ip_address(s)) {
      refuse(child(lp, i), "\"" + s + "\" is not an IPv4 or IPv6 CIDR or address");
    }
  }
}

void cidr_rule_list(const json& obj, std::string_view key, const std::string& p) {
  const json* list = member(obj, key);
  if (!list) return;
  std::string lp = child(p, key);
  array(*list, lp);
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json& r = (*list)[i];
    std::string rp = child(lp, i);
    object(r, rp, "cidrRule");
    if (raw_member(r, "cidrGroupSelector")) {  // even null: a 1.17+ agent reads it as a selector
      refuse(child(rp, "cidrGroupSelector"),
             "needs Cilium 1.17 or later; a 1.16 agent would drop it and refuse the rule");
    }
    const json* cidr = member(r, "cidr");
    const json* ref = member(r, "cidrGroupRef");
    if (cidr && ref) refuse(rp, "only one of cidr and cidrGroupRef may be set");
    if (!cidr && !ref) refuse(rp, "one of cidr and cidrGroupRef is required");
    if (ref) {
      const std::string& name = string(*ref, child(rp, "cidrGroupRef"));
      if (!is_dns1123_subdomain(name)) {
        refuse(child(rp, "cidrGroupRef"), "\"" + name + "\" is not a DNS-1123 subdomain");
      }
      continue;
    }
    const std::string& text = string(*cidr, child(rp, "cidr"));
    auto prefix = parse_ip_prefix(text);
    if (!prefix) refuse(child(rp, "cidr"), "\"" + text + "\" is not an IPv4 or IPv6 CIDR");
    if (const json* except = member(r, "except")) {
      std::string xp = child(rp, "except");
      string_array(*except, xp);
      for (std::size_t j = 0; j < except->size(); ++j) {
        const auto& e = (*except)[j].get_ref<const std::string&>();
        auto inner = parse_ip_prefix(e);
        if (!inner) refuse(child(xp, j), "\"" + e + "\" is not an IPv4 or IPv6 CIDR");
        if (!prefix_contains(*prefix, *inner)) {
          std::string why = "\"" + e;
          why += "\" is not inside ";
          why += text;
          refuse(child(xp, j), why);
        }
      }
    }
  }
}

void entity_list(const json& obj, std::string_view key, const std::string& p) {
  const json* list = member(obj, key);
  if (!list) return;
  std::string lp = child(p, key);
  array(*list, lp);
  for (std::size_t i = 0; i < list->size(); ++i) {
    one_of((*list)[i], child(lp, i),
           {"all", "world", "cluster", "host", "init", "ingress", "unmanaged", "remote-node",
            "health", "none", "kube-apiserver"});
  }
}

void group_list(const json& obj, std::string_view key, const std::string& p) {
  const json* list = member(obj, key);
  if (!list) return;
  std::string lp = child(p, key);
  array(*list, lp);
  for (std::size_t i = 0; i < list->size(); ++i) {
    std::string gp = child(lp, i);
    object((*list)[i], gp, "groups");
    if (const json* aws = member((*list)[i], "aws")) {
      std::string ap = child(gp, "aws");
      object(*aws, ap, "awsGroup");
      if (const json* v = member(*aws, "labels")) string_map(*v, child(ap, "labels"));
      if (const json* v = member(*aws, "region")) string(*v, child(ap, "region"));
      if (const json* v = member(*aws, "securityGroupsIds")) {
        string_array(*v, child(ap, "securityGroupsIds"));
      }
      if (const json* v = member(*aws, "securityGroupsNames")) {
        string_array(*v, child(ap, "securityGroupsNames"));
      }
    }
  }
}

// toServices is refused whole, on every supported release, because nothing resolves it on an
// agent without Kubernetes (the only kind this project runs). cilium/cilium turns it into
// ToCIDRSet (and, in newer releases, ToEndpoints) peers in pkg/policy/k8s/service.go
// (policyWatcher.resolveToServices, called from cilium_network_policy.go for the watcher's own
// CNPs/CCNPs) and nowhere else, and that watcher's cell returns before starting when there is no
// Kubernetes client (pkg/policy/k8s/cell.go, startK8sPolicyWatcher; the client is off with
// --enable-k8s=false, pkg/k8s/client/config.go). Policy files (pkg/policy/directory/watcher.go,
// addToPolicyEngine) and the REST PUT /policy handler hand their rules to the repository
// untranslated, so the services of --lb-state-file or REST PUT /service are never consulted.
// An untranslated toServices is no peer, and pkg/policy/api/egress.go
// (EgressCommonRule.AllowsWildcarding) keeps the rule from widening to every peer: an allow rule
// allows nothing yet turns on default deny for its subjects' egress, a deny rule denies nothing.
// An empty list names no service, as an absent one, and passes.
void services_refused(const json& obj, const std::string& p, bool deny) {
  const json* list = member(obj, "toServices");
  if (!list) return;
  std::string lp = child(p, "toServices");
  array(*list, lp);
  if (list->empty()) return;
  refuse(lp, std::string("selects nothing on an agent without Kubernetes: Cilium turns toServices "
                         "into peers only in its Kubernetes policy watcher "
                         "(pkg/policy/k8s/service.go), which pkg/policy/k8s/cell.go starts only "
                         "with a Kubernetes client; rules from policy files or the REST API are "
                         "never translated, whatever services --lb-state-file or REST "
                         "PUT /service define, so this rule would ") +
                 (deny ? "deny nothing"
                       : "allow nothing and still put the endpoint's egress in default deny") +
                 ". Name the peers with toEndpoints or toCIDRSet instead");
}

// toFQDNs and DNS rules: the CRD's patterns, at most 255 characters, exactly one of the two.
void fqdn_selector(const json& v, const std::string& p) {
  object(v, p, "fqdnSelector");
  const json* name = member(v, "matchName");
  const json* pattern = member(v, "matchPattern");
  if ((name != nullptr) == (pattern != nullptr)) {
    refuse(p, "exactly one of matchName and matchPattern is required");
  }
  bool is_pattern = pattern != nullptr;
  std::string vp = child(p, is_pattern ? "matchPattern" : "matchName");
  const std::string& s = string(is_pattern ? *pattern : *name, vp);
  if (s.empty() || s.size() > 255) refuse(vp, "must be 1-255 characters");
  // ^([-a-zA-Z0-9_]+[.]?)+$ (with '*' for patterns): no empty label, no "..".
  bool previous_dot = true;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || (is_pattern && c == '*');
    if (c == '.') {
      if (previous_dot) refuse(vp, "\"" + s + "\" has an empty DNS label");
      previous_dot = true;
    } else if (!ok) {
      refuse(vp,
             "\"" + s + "\" may only hold [-a-zA-Z0-9_" + (is_pattern ? "*" : "") + "] and dots");
    } else {
      previous_dot = false;
    }
  }
  if (is_pattern) {
    // pkg/fqdn/matchpattern (Validate, ToRegexp): the agent turns the pattern into an anchored
    // Go regexp ('*' = any run of DNS characters, '.' literal) and refuses what fails to
    // compile. The characters allowed above always give one that compiles; this keeps the
    // check honest if that character rule is ever widened.
    std::string re = "^";
    for (char c : s)
      re += c == '*' ? std::string("[-a-zA-Z0-9_]*") : c == '.' ? "[.]" : std::string(1, c);
    re += "$";
    if (auto why = go_regexp_problem(re)) refuse(vp, "\"" + s + "\" does not compile: " + *why);
  }
}

void fqdn_list(const json& obj, const std::string& p) {
  const json* list = member(obj, "toFQDNs");
  if (!list) return;
  std::string lp = child(p, "toFQDNs");
  array(*list, lp);
  for (std::size_t i = 0; i < list->size(); ++i) fqdn_selector((*list)[i], child(lp, i));
}

// icmp.go: a type name must be one of its family's (IPv4 when no family is given); the agent's
// decoder fails on any other name, and an agent that cannot decode a file exits.
constexpr std::string_view kIcmpv4Names[] = {"EchoReply",
                                             "DestinationUnreachable",
                                             "Redirect",
                                             "Echo",
                                             "EchoRequest",
                                             "RouterAdvertisement",
                                             "RouterSelection",
                                             "TimeExceeded",
                                             "ParameterProblem",
                                             "Timestamp",
                                             "TimestampReply",
                                             "Photuris",
                                             "ExtendedEchoRequest",
                                             "ExtendedEchoReply"};
constexpr std::string_view kIcmpv6Names[] = {"DestinationUnreachable",
                                             "PacketTooBig",
                                             "TimeExceeded",
                                             "ParameterProblem",
                                             "EchoRequest",
                                             "EchoReply",
                                             "MulticastListenerQuery",
                                             "MulticastListenerReport",
                                             "MulticastListenerDone",
                                             "RouterSolicitation",
                                             "RouterAdvertisement",
                                             "NeighborSolicitation",
                                             "NeighborAdvertisement",
                                             "RedirectMessage",
                                             "RouterRenumbering",
                                             "ICMPNodeInformationQuery",
                                             "ICMPNodeInformationResponse",
                                             "InverseNeighborDiscoverySolicitation",
                                             "InverseNeighborDiscoveryAdvertisement",
                                             "HomeAgentAddressDiscoveryRequest",
                                             "HomeAgentAddressDiscoveryReply",
                                             "MobilePrefixSolicitation",
                                             "MobilePrefixAdvertisement",
                                             "DuplicateAddressRequestCodeSuffix",
                                             "DuplicateAddressConfirmationCodeSuffix",
                                             "ExtendedEchoRequest",
                                             "ExtendedEchoReply"};

void icmp_type(const json& type, const std::string& p, bool v6) {
  if (type.is_number_integer()) {
    integer(type, p, 0, 255);
    return;
  }
  if (!type.is_string()) refuse(p, "must be an integer or a string, not " + type_name(type));
  const auto& s = type.get_ref<const std::string&>();
  auto number = parse_port_number(s);
  if (number && *number <= 255) return;
  bool known = false;
  if (v6) {
    for (auto n : kIcmpv6Names) known = known || s == n;
  } else {
    for (auto n : kIcmpv4Names) known = known || s == n;
  }
  if (!known) {
    refuse(p, "\"" + s + "\" is not an " + (v6 ? "ICMPv6" : "ICMPv4") +
                  " type (0-255 or a type name of that family)");
  }
}

void icmp_list(const json& obj, const std::string& p) {
  const json* list = member(obj, "icmps");
  if (!list) return;
  std::string lp = child(p, "icmps");
  array(*list, lp);
  for (std::size_t i = 0; i < list->size(); ++i) {
    std::string ip = child(lp, i);
    object((*list)[i], ip, "icmpRule");
    const json* fields = member((*list)[i], "fields");
    if (!fields) continue;
    std::string fp = child(ip, "fields");
    array(*fields, fp, kMaxIcmpFields);
    for (std::size_t j = 0; j < fields->size(); ++j) {
      const json& f = (*fields)[j];
      std::string ep = child(fp, j);
      object(f, ep, "icmpField");
      bool v6 = false;
      if (const json* family = member(f, "family")) {
        v6 = one_of(*family, child(ep, "family"), {"IPv4", "IPv6"}) == "IPv6";
      }
      // A missing type makes the agent's decoder dereference nothing (icmp.go).
      const json* type = member(f, "type");
      if (!type) refuse(child(ep, "type"), "required");
      icmp_type(*type, child(ep, "type"), v6);
    }
  }
}

struct PortSummary {
  bool has_zero = false;
  bool has_range = false;
  bool all_tcp = true;
  std::size_t count = 0;
};

PortSummary port_list(const json& port_rule, const std::string& p) {
  PortSummary summary;
  const json* ports = member(port_rule, "ports");
  if (!ports) return summary;
  std::string lp = child(p, "ports");
  array(*ports, lp, kMaxPorts);
  summary.count = ports->size();
  for (std::size_t i = 0; i < ports->size(); ++i) {
    const json& pp = (*ports)[i];
    std::string ep = child(lp, i);
    object(pp, ep, "portProtocol");
    std::string protocol = "ANY";
    if (const json* proto = member(pp, "protocol")) {
      // VRRP and IGMP exist from 1.19 only; an older agent refuses the rule.
      protocol = one_of(*proto, child(ep, "protocol"), {"TCP", "UDP", "SCTP", "ANY"});
    }
    if (protocol != "TCP") summary.all_tcp = false;
    const json* port = member(pp, "port");
    // Required up to 1.18 (schema and sanitize); 1.19 allows it empty only for VRRP/IGMP.
    if (!port) refuse(child(ep, "port"), "required");
    const std::string& text = string(*port, child(ep, "port"));
    std::optional<std::uint32_t> number;
    if (!is_port_name(text)) {
      number = parse_port_number(text);
      if (!number)
        refuse(child(ep, "port"), "\"" + text + "\" is not a port (0-65535) or a port name");
      if (*number == 0) summary.has_zero = true;
    }
    if (const json* end = member(pp, "endPort")) {
      auto last = integer(*end, child(ep, "endPort"), 0, 65535);
      if (last != 0) {
        if (!number) refuse(child(ep, "endPort"), "a port range needs a numeric port");
        if (last < *number) {
          refuse(child(ep, "endPort"), std::to_string(last) + " is below port " + text);
        }
        if (last > *number) summary.has_range = true;
      }
    }
  }
  return summary;
}

void tls_context(const json& v, const std::string& p) {
  object(v, p, "tlsContext");
  for (const auto* key : {"certificate", "privateKey", "trustedCA"}) {
    if (const json* s = member(v, key)) string(*s, child(p, key));
  }
  const json* secret = member(v, "secret");
  if (!secret) refuse(child(p, "secret"), "required");
  std::string sp = child(p, "secret");
  object(*secret, sp, "secret");
  const json* name = member(*secret, "name");
  if (!name) refuse(child(sp, "name"), "required");
  string(*name, child(sp, "name"));
  if (const json* ns = member(*secret, "namespace")) string(*ns, child(sp, "namespace"));
}

void min_length_string(const json& v, const std::string& p) {
  if (string(v, p).empty()) refuse(p, "must not be empty");
}

void header_match(const json& m, const std::string& xp) {
  object(m, xp, "headerMatch");
  if (const json* mm = member(m, "mismatch")) {
    one_of(*mm, child(xp, "mismatch"), {"LOG", "ADD", "DELETE", "REPLACE"});
  }
  const json* name = member(m, "name");
  if (!name) refuse(child(xp, "name"), "required");
  min_length_string(*name, child(xp, "name"));
  if (const json* v = member(m, "value")) string(*v, child(xp, "value"));
  if (const json* secret = member(m, "secret")) {
    std::string sp = child(xp, "secret");
    object(*secret, sp, "secret");
    const json* sn = member(*secret, "name");
    if (!sn) refuse(child(sp, "name"), "required");
    string(*sn, child(sp, "name"));
    if (const json* ns = member(*secret, "namespace")) string(*ns, child(sp, "namespace"));
  }
}

void http_rule(const json& h, const std::string& ep) {
  object(h, ep, "httpRule");
  if (const json* s = member(h, "host")) string(*s, child(ep, "host"));
  // pkg/policy/api/http.go PortRuleHTTP.Sanitize compiles path and method with Go's regexp and
  // refuses the rule on an error; host, headers and headerMatches it does not compile.
  for (const auto* key : {"method", "path"}) {
    if (const json* s = member(h, key)) {
      const std::string& text = string(*s, child(ep, key));
      if (text.empty()) continue;
      if (auto why = go_regexp_problem(text)) {
        refuse(child(ep, key), "\"" + text +
                                   "\" is not a regular expression the agent compiles (Go "
                                   "regexp, RE2 syntax): " +
                                   *why);
      }
    }
  }
  if (const json* headers = member(h, "headers")) string_array(*headers, child(ep, "headers"));
  if (const json* matches = member(h, "headerMatches")) {
    std::string mp = child(ep, "headerMatches");
    array(*matches, mp);
    for (std::size_t j = 0; j < matches->size(); ++j) header_match((*matches)[j], child(mp, j));
  }
}

// The names of pkg/policy/api/kafka/kafka.go APIKeyMap (the Kafka protocol's API keys 0-33),
// which Sanitize looks apiKey up in, case-insensitively.
constexpr std::string_view kKafkaApiKeys[] = {"produce",
                                              "fetch",
                                              "offsets",
                                              "metadata",
                                              "leaderandisr",
                                              "stopreplica",
                                              "updatemetadata",
                                              "controlledshutdown",
                                              "offsetcommit",
                                              "offsetfetch",
                                              "findcoordinator",
                                              "joingroup",
                                              "heartbeat",
                                              "leavegroup",
                                              "syncgroup",
                                              "describegroups",
                                              "listgroups",
                                              "saslhandshake",
                                              "apiversions",
                                              "createtopics",
                                              "deletetopics",
                                              "deleterecords",
                                              "initproducerid",
                                              "offsetforleaderepoch",
                                              "addpartitionstotxn",
                                              "addoffsetstotxn",
                                              "endtxn",
                                              "writetxnmarkers",
                                              "txnoffsetcommit",
                                              "describeacls",
                                              "createacls",
                                              "deleteacls",
                                              "describeconfigs",
                                              "alterconfigs"};

bool kafka_topic_char(char c) {
  // kafka.go TopicValidChar is ^[a-zA-Z0-9\\._\\-]+$ in a Go raw string: the doubled
  // backslashes put a backslash itself into the class, so the agent admits it.
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-' || c == '\\';
}

// pkg/policy/api/kafka/kafka.go PortRule.Sanitize, which the agent runs on every Kafka rule.
void kafka_rule(const json& k, const std::string& ep) {
  object(k, ep, "kafkaRule");
  if (const json* s = member(k, "clientID")) string(*s, child(ep, "clientID"));
  const json* role = member(k, "role");
  if (role) one_of(*role, child(ep, "role"), {"produce", "consume"});
  if (const json* key = member(k, "apiKey")) {
    const std::string& text = string(*key, child(ep, "apiKey"));
    if (!text.empty()) {
      if (role && !role->get_ref<const std::string&>().empty()) {
        refuse(child(ep, "apiKey"), "cannot be set together with role");
      }
      std::string lower;
      for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      bool known = false;
      for (auto name : kKafkaApiKeys) known = known || lower == name;
      if (!known) refuse(child(ep, "apiKey"), "\"" + text + "\" is not a Kafka API key name");
    }
  }
  if (const json* version = member(k, "apiVersion")) {
    const std::string& text = string(*version, child(ep, "apiVersion"));
    // strconv.ParseInt(s, 10, 16) and 0 <= n: an optional sign, decimal digits, 0-32767.
    std::string_view digits = text;
    if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) digits.remove_prefix(1);
    bool ok = !digits.empty();
    long n = 0;
    for (char c : digits) {
      ok = ok && c >= '0' && c <= '9';
      if (ok && n <= 32767) n = n * 10 + (c - '0');
    }
    if (!text.empty() && (!ok || n > 32767 || (text[0] == '-' && n != 0))) {
      refuse(child(ep, "apiVersion"), "\"" + text + "\" is not a Kafka API version (0-32767)");
    }
  }
  if (const json* topic = member(k, "topic")) {
    const std::string& text = string(*topic, child(ep, "topic"));
    if (text.size() > 255) refuse(child(ep, "topic"), "longer than 255 characters");
    for (char c : text) {
      if (!kafka_topic_char(c)) {
        refuse(child(ep, "topic"),
               "\"" + text + "\" is not a Kafka topic name (letters, digits, '.', '_', '-')");
      }
    }
  }
}

// L7 rules; returns how many kinds are set and whether DNS is among them.
void l7_rules(const json& rules, const std::string& p, bool& has_dns, bool& is_empty) {
  object(rules, p, "l7Rules");
  int kinds = 0;
  is_empty = true;
  if (const json* http = member(rules, "http")) {
    std::string hp = child(p, "http");
    array(*http, hp);
    ++kinds;
    if (!http->empty()) is_empty = false;
    for (std::size_t i = 0; i < http->size(); ++i) http_rule((*http)[i], child(hp, i));
  }
  if (const json* kafka = member(rules, "kafka")) {
    std::string kp = child(p, "kafka");
    array(*kafka, kp);
    ++kinds;
    if (!kafka->empty()) is_empty = false;
    for (std::size_t i = 0; i < kafka->size(); ++i) kafka_rule((*kafka)[i], child(kp, i));
  }
  if (const json* dns = member(rules, "dns")) {
    std::string dp = child(p, "dns");
    array(*dns, dp);
    ++kinds;
    if (!dns->empty()) {
      is_empty = false;
      has_dns = true;
    }
    for (std::size_t i = 0; i < dns->size(); ++i) fqdn_selector((*dns)[i], child(dp, i));
  }
  const json* proto = member(rules, "l7proto");
  if (proto) {
    if (!string(*proto, child(p, "l7proto")).empty()) {
      ++kinds;
      is_empty = false;
    }
  }
  if (const json* l7 = member(rules, "l7")) {
    std::string lp = child(p, "l7");
    array(*l7, lp);
    for (std::size_t i = 0; i < l7->size(); ++i) string_map((*l7)[i], child(lp, i));
    if (!proto || proto->get_ref<const std::string&>().empty()) {
      refuse(lp, "'l7' may only be specified when a 'l7proto' is also specified");
    }
  }
  if (kinds > 1) refuse(p, "multiple L7 protocol rule types specified in single rule");
}

void server_name(const std::string& s, const std::string& ip) {
  if (s.empty()) refuse(ip, "empty server name is not allowed");
  if (s.size() > 255) refuse(ip, "longer than 255 characters");
  // ^(\*?\*\.)?([-a-zA-Z0-9_]+\.?)+$ (1.18 schema)
  std::string_view rest = s;
  if (rest.starts_with("**."))
    rest.remove_prefix(3);
  else if (rest.starts_with("*."))
    rest.remove_prefix(2);
  bool previous_dot = true;
  for (char c : rest) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_';
    if (c == '.' && !previous_dot)
      previous_dot = true;
    else if (ok)
      previous_dot = false;
    else
      refuse(ip, "\"" + s + "\" is not a server name");
  }
  if (rest.empty()) refuse(ip, "\"" + s + "\" is not a server name");
}

void listener(const json& l, const std::string& lp, bool ingress, bool rules_empty) {
  object(l, lp, "listener");
  const json* cfg = member(l, "envoyConfig");
  if (!cfg) refuse(child(lp, "envoyConfig"), "required");
  std::string cp = child(lp, "envoyConfig");
  object(*cfg, cp, "envoyConfig");
  if (const json* kind = member(*cfg, "kind")) {
    one_of(*kind, child(cp, "kind"), {"CiliumEnvoyConfig", "CiliumClusterwideEnvoyConfig"});
  }
  const json* cfg_name = member(*cfg, "name");
  if (!cfg_name) refuse(child(cp, "name"), "required");
  min_length_string(*cfg_name, child(cp, "name"));
  const json* name = member(l, "name");
  if (!name) refuse(child(lp, "name"), "required");
  min_length_string(*name, child(lp, "name"));
  if (const json* prio = member(l, "priority")) integer(*prio, child(lp, "priority"), 1, 100);
  if (ingress) refuse(lp, "Listener is not allowed on ingress");
  if (!rules_empty) refuse(lp, "Listener is not allowed with L7 rules");
}

// What the ports of a rule with L7 rules must be.
void l7_ports(const PortSummary& ports, const std::string& p, bool has_dns) {
  if (!has_dns && !ports.all_tcp) {
    refuse(child(p, "ports"), "L7 rules can only apply to TCP, except for DNS rules");
  }
  if (ports.has_zero) refuse(child(p, "ports"), "L7 rules can not be used when a port is 0");
  // 1.16 refuses ranges with any L7 rule, 1.19 with DNS rules: the stricter one.
  if (ports.has_range) refuse(child(p, "ports"), "L7 rules do not support port ranges");
  if (has_dns && ports.count == 0) {
    refuse(child(p, "ports"), "port 53 must be specified for DNS rules");
  }
}

void port_rule(const json& pr, const std::string& p, bool ingress, bool host) {
  object(pr, p, "portRule");
  PortSummary ports = port_list(pr, p);
  bool has_dns = false;
  bool rules_empty = true;
  if (const json* rules = member(pr, "rules"))
    l7_rules(*rules, child(p, "rules"), has_dns, rules_empty);
  if (const json* tls = member(pr, "originatingTLS")) tls_context(*tls, child(p, "originatingTLS"));
  const json* terminating = member(pr, "terminatingTLS");
  if (terminating) tls_context(*terminating, child(p, "terminatingTLS"));
  if (const json* names = member(pr, "serverNames")) {
    std::string np = child(p, "serverNames");
    string_array(*names, np);
    if (names->empty()) refuse(np, "must have at least one item");
    for (std::size_t i = 0; i < names->size(); ++i) {
      server_name((*names)[i].get_ref<const std::string&>(), child(np, i));
    }
    if (!rules_empty && !terminating) {
      refuse(np, "ServerNames are not allowed with L7 rules without TLS termination");
    }
  }
  if (ingress && has_dns) refuse(child(p, "rules"), "DNS rules are not allowed on ingress");
  // 1.16 refuses every L7 rule in a host policy (1.19 still refuses HTTP and Kafka there).
  if (host && !rules_empty) {
    refuse(child(p, "rules"), "host policies (nodeSelector) do not support L7 rules");
  }
  if (!rules_empty) l7_ports(ports, p, has_dns);
  if (const json* l = member(pr, "listener"))
    listener(*l, child(p, "listener"), ingress, rules_empty);
}

void deny_port_rule(const json& pr, const std::string& p) {
  object(pr, p, "portDenyRule");
  port_list(pr, p);
}

void port_rules(const json& rule, const std::string& p, bool ingress, bool deny, bool host) {
  const json* list = member(rule, "toPorts");
  if (!list) return;
  std::string lp = child(p, "toPorts");
  array(*list, lp);
  for (std::size_t i = 0; i < list->size(); ++i) {
    if (deny)
      deny_port_rule((*list)[i], child(lp, i));
    else
      port_rule((*list)[i], child(lp, i), ingress, host);
  }
}

void authentication(const json& rule, const std::string& p) {
  const json* auth = member(rule, "authentication");
  if (!auth) return;
  std::string ap = child(p, "authentication");
  object(*auth, ap, "authentication");
  const json* mode = member(*auth, "mode");
  if (!mode) refuse(child(ap, "mode"), "required");
  one_of(*mode, child(ap, "mode"), {"disabled", "required", "test-always-fail"});
}

// Only one kind of peer per rule ("combining X and Y is not supported yet").
void one_peer_kind(const json& rule, const std::string& p,
                   std::initializer_list<std::string_view> keys) {
  std::string_view first;
  for (auto key : keys) {
    if (count(rule, key) == 0) continue;
    if (!first.empty()) {
      refuse(child(p, key), "combining " + std::string(first) + " and " + std::string(key) +
                                " in one rule is not supported");
    }
    first = key;
  }
}

void icmps_without_ports(const json& rule, const std::string& p) {
  if (count(rule, "icmps") > 0 && count(rule, "toPorts") > 0) {
    refuse(child(p, "icmps"),
           "the ICMPs block may only be present without ToPorts; define a separate rule");
  }
}

void ingress_rule(const json& r, const std::string& p, bool deny, bool host) {
  if (deny) {
    object(r, p, "ingressDenyRule");
  } else {
    object(r, p, "ingressRule");
    authentication(r, p);
  }
  selector_list(r, "fromEndpoints", p);
  requires_list(r, "fromRequires", p);
  cidr_list(r, "fromCIDR", p);
  cidr_rule_list(r, "fromCIDRSet", p);
  entity_list(r, "fromEntities", p);
  group_list(r, "fromGroups", p);
  selector_list(r, "fromNodes", p);
  icmp_list(r, p);
  port_rules(r, p, true, deny, host);
  one_peer_kind(
      r, p,
      {"fromEndpoints", "fromCIDR", "fromCIDRSet", "fromEntities", "fromNodes", "fromGroups"});
  icmps_without_ports(r, p);
}

void egress_rule(const json& r, const std::string& p, bool deny, bool host) {
  if (deny) {
    object(r, p, "egressDenyRule");
  } else {
    object(r, p, "egressRule");
    authentication(r, p);
    fqdn_list(r, p);
  }
  selector_list(r, "toEndpoints", p);
  requires_list(r, "toRequires", p);
  cidr_list(r, "toCIDR", p);
  cidr_rule_list(r, "toCIDRSet", p);
  entity_list(r, "toEntities", p);
  group_list(r, "toGroups", p);
  selector_list(r, "toNodes", p);
  services_refused(r, p, deny);
  icmp_list(r, p);
  port_rules(r, p, false, deny, host);
  // Deny rules have no toFQDNs (object() refused it already), so it is read for allow rules only.
  // toServices is a peer kind too, but a non-empty one was refused above (services_refused), and
  // with it 1.16's refusal of toServices with toPorts is moot.
  if (deny) {
    one_peer_kind(r, p,
                  {"toCIDR", "toCIDRSet", "toEndpoints", "toEntities", "toGroups", "toNodes"});
  } else {
    one_peer_kind(
        r, p,
        {"toCIDR", "toCIDRSet", "toEndpoints", "toEntities", "toGroups", "toNodes", "toFQDNs"});
  }
  icmps_without_ports(r, p);
}

void rule_list(const json& rule, std::string_view key, const std::string& p, bool ingress,
               bool deny, bool host) {
  const json* list = member(rule, key);
  if (!list) return;
  std::string lp = child(p, key);
  array(*list, lp);
  for (std::size_t i = 0; i < list->size(); ++i) {
    if (ingress)
      ingress_rule((*list)[i], child(lp, i), deny, host);
    else
      egress_rule((*list)[i], child(lp, i), deny, host);
  }
}

void rule_label(const json& l, const std::string& ep) {
  // labels.go Label.UnmarshalJSON also takes the short form "[source:]key[=value]", which
  // `cilium policy import` files (netreap's) may hold; the CRD schema knows only objects.
  if (l.is_string()) {
    if (l.get_ref<const std::string&>().empty()) refuse(ep, "an empty label");
    return;
  }
  object(l, ep, "ruleLabel");
  const json* key = member(l, "key");
  // labels.go Label.UnmarshalJSON refuses an empty key: the agent could not load the file.
  if (!key || string(*key, child(ep, "key")).empty()) refuse(child(ep, "key"), "required");
  if (const json* s = member(l, "source")) string(*s, child(ep, "source"));
  if (const json* v = member(l, "value")) string(*v, child(ep, "value"));
}

void rule_log(const json& log, const std::string& lp) {
  object(log, lp, "ruleLog");
  if (const json* v = member(log, "value")) {
    const std::string& s = string(*v, child(lp, "value"));
    if (s.size() > 32) refuse(child(lp, "value"), "longer than 32 characters");
    for (char c : s) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
        refuse(child(lp, "value"), "must not contain control characters");
      }
    }
  }
}

}  // namespace

void check_rule(const json& rule, const std::string& p, bool namespaced) {
  object(rule, p, "rule");
  // The agent's selector decoder (selector.go UnmarshalJSON) also runs for null and makes an
  // empty selector of it: a null selector selects everything, and counts as present.
  for (const auto* key : {"endpointSelector", "nodeSelector"}) {
    if (const json* raw = raw_member(rule, key); raw && raw->is_null()) {
      refuse(child(p, key), "null selects every endpoint in the agent; write {} if that is meant");
    }
  }
  const json* endpoints = member(rule, "endpointSelector");
  const json* nodes = member(rule, "nodeSelector");
  if (endpoints && nodes) {
    refuse(child(p, "nodeSelector"), "a rule cannot have both endpointSelector and nodeSelector");
  }
  if (!endpoints && !nodes) refuse(p, "a rule must have one of endpointSelector or nodeSelector");
  if (endpoints) label_selector(*endpoints, child(p, "endpointSelector"));
  if (nodes) {
    label_selector(*nodes, child(p, "nodeSelector"));
    if (namespaced) {
      refuse(child(p, "nodeSelector"),
             "a CiliumNetworkPolicy rule cannot have nodeSelector (use a "
             "CiliumClusterwideNetworkPolicy)");
    }
  }
  bool host = nodes != nullptr;
  rule_list(rule, "ingress", p, true, false, host);
  rule_list(rule, "ingressDeny", p, true, true, host);
  rule_list(rule, "egress", p, false, false, host);
  rule_list(rule, "egressDeny", p, false, true, host);
  if (count(rule, "ingress") + count(rule, "ingressDeny") + count(rule, "egress") +
          count(rule, "egressDeny") ==
      0) {
    refuse(p, "a rule must have at least one of ingress, ingressDeny, egress, egressDeny");
  }
  if (const json* labels = member(rule, "labels")) {
    std::string lp = child(p, "labels");
    array(*labels, lp);
    for (std::size_t i = 0; i < labels->size(); ++i) rule_label((*labels)[i], child(lp, i));
  }
  if (const json* d = member(rule, "description")) string(*d, child(p, "description"));
  if (const json* dd = member(rule, "enableDefaultDeny")) {
    std::string dp = child(p, "enableDefaultDeny");
    object(*dd, dp, "defaultDeny");
    if (const json* v = member(*dd, "ingress")) boolean(*v, child(dp, "ingress"));
    if (const json* v = member(*dd, "egress")) boolean(*v, child(dp, "egress"));
  }
  if (const json* log = member(rule, "log")) rule_log(*log, child(p, "log"));
}

}  // namespace cn::policy
