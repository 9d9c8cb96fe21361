// validate_policy_document: every schema and semantic rule refuses at least one document, with the
// JSON pointer of the offending member, and real policies pass.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "common/policy/policy_document.h"

namespace cn::policy {
namespace {

using nlohmann::json;

// A CiliumClusterwideNetworkPolicy that passes; each bad case changes one member of it.
json good_ccnp() {
  return json::parse(R"({
    "apiVersion": "cilium.io/v2",
    "kind": "CiliumClusterwideNetworkPolicy",
    "metadata": {"name": "web"},
    "spec": {
      "endpointSelector": {"matchLabels": {"nomad:nomad.job": "web"}},
      "ingress": [{
        "fromEndpoints": [{"matchLabels": {"nomad:nomad.job": "frontend"}}],
        "toPorts": [{"ports": [{"port": "8080", "protocol": "TCP"}]}]
      }],
      "egress": [{
        "toCIDRSet": [{"cidr": "10.0.0.0/8", "except": ["10.96.0.0/12"]}],
        "toPorts": [{"ports": [{"port": "443", "protocol": "TCP"}]}]
      }]
    }
  })");
}

struct BadCase {
  const char* name;
  const char* pointer;  // member to set in good_ccnp()
  const char* value;    // JSON; "DELETE" removes the member
  const char* error;    // expected message prefix (pointer) ...
  const char* reason;   // ... and a part of the reason
};

void PrintTo(const BadCase& c, std::ostream* os) {
  *os << c.name;
}

class BadDocument : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadDocument, IsRefusedWithPointerAndReason) {
  const BadCase& c = GetParam();
  json doc = good_ccnp();
  json::json_pointer ptr(c.pointer);
  if (std::string(c.value) == "DELETE") {
    doc[ptr.parent_pointer()].erase(ptr.back());
  } else {
    doc[ptr] = json::parse(c.value);
  }
  // ASCII-only text, so that an escaped control character reaches the object checks.
  auto r = validate_policy_document(doc.dump(-1, ' ', true));
  ASSERT_FALSE(r) << c.name;
  EXPECT_EQ(r.error().kind, ErrorKind::invalid);
  EXPECT_TRUE(r.error().message.starts_with(std::string(c.error) + ": ")) << r.error().message;
  EXPECT_NE(r.error().message.find(c.reason), std::string::npos) << r.error().message;
}

const BadCase kBadCases[] = {
    // Document: kind, apiVersion, metadata.
    {"api_version", "/apiVersion", R"("cilium.io/v1")", "/apiVersion", "is not cilium.io/v2"},
    {"api_version_missing", "/apiVersion", "DELETE", "/apiVersion", "required"},
    {"kind", "/kind", R"("NetworkPolicy")", "/kind", "is not one of"},
    {"kind_case", "/kind", R"("ciliumnetworkpolicy")", "/kind", "is not one of"},
    {"name_missing", "/metadata/name", "DELETE", "/metadata/name", "required"},
    {"name_type", "/metadata/name", "7", "/metadata/name", "must be a string"},
    {"ccnp_namespace", "/metadata/namespace", R"("default")", "/metadata/namespace",
     "no namespace"},
    {"metadata_labels_type", "/metadata/labels", R"({"a": 1})", "/metadata/labels/a", "string"},
    {"metadata_time", "/metadata/creationTimestamp", R"("yesterday")",
     "/metadata/creationTimestamp", "RFC 3339"},
    {"metadata_time_range", "/metadata/creationTimestamp", R"("2025-02-29T10:00:00Z")",
     "/metadata/creationTimestamp", "RFC 3339"},
    {"metadata_time_lower_t", "/metadata/creationTimestamp", R"("2024-02-29t10:00:00Z")",
     "/metadata/creationTimestamp", "RFC 3339"},
    {"no_spec", "/spec", "DELETE", "/", "spec or a non-empty specs"},
    {"specs_type", "/specs", R"({"a": 1})", "/specs", "must be an array"},
    {"status_type", "/status", "[]", "/status", "must be an object"},
    {"case_variant_top", "/Spec", "{}", "/Spec", "would read it as \"spec\""},
    {"escaped_control", "/spec/description", R"("x\u007fy")", "/spec/description",
     "control character U+007F"},
    {"escaped_control_key", "/metadata/labels", R"({"a\u0080": "x"})", "/metadata/labels/a\u0080",
     "control character U+0080"},
    // Rule level.
    {"both_selectors", "/spec/nodeSelector", "{}", "/spec/nodeSelector", "both"},
    {"no_selector", "/spec/endpointSelector", "DELETE", "/spec", "one of endpointSelector"},
    {"no_direction", "/spec", R"({"endpointSelector": {}})", "/spec", "at least one of ingress"},
    {"no_direction_empty", "/spec", R"({"endpointSelector": {}, "ingress": [], "egress": null})",
     "/spec", "at least one of ingress"},
    {"description_type", "/spec/description", "1", "/spec/description", "must be a string"},
    {"default_deny_type", "/spec/enableDefaultDeny", R"({"ingress": "yes"})",
     "/spec/enableDefaultDeny/ingress", "true or false"},
    {"log_long", "/spec/log", R"({"value": "012345678901234567890123456789012"})",
     "/spec/log/value", "32"},
    {"rule_labels_key", "/spec/labels", R"([{"value": "x"}])", "/spec/labels/0/key", "required"},
    {"rule_labels_key_empty", "/spec/labels", R"([{"key": ""}])", "/spec/labels/0/key", "required"},
    {"rule_labels_short_empty", "/spec/labels", R"(["name=web", ""])", "/spec/labels/1",
     "an empty label"},
    {"rule_labels_type", "/spec/labels", R"([7])", "/spec/labels/0", "must be an object"},
    {"null_endpoint_selector", "/spec/endpointSelector", "null", "/spec/endpointSelector",
     "selects every endpoint"},
    {"null_node_selector", "/spec/nodeSelector", "null", "/spec/nodeSelector",
     "selects every endpoint"},
    {"host_policy_l7", "/spec",
     R"({"nodeSelector": {}, "egress": [{"toPorts": [{"ports": [{"port": "53", "protocol": "UDP"}], "rules": {"dns": [{"matchPattern": "*"}]}}]}]})",
     "/spec/egress/0/toPorts/0/rules", "host policies"},
    {"case_variant_rule", "/spec/ingress/0/ToPorts", "[]", "/spec/ingress/0/ToPorts",
     "\"toPorts\""},
    // Selectors and labels.
    {"label_value", "/spec/endpointSelector/matchLabels/nomad:nomad.job", R"("-web")",
     "/spec/endpointSelector/matchLabels/nomad:nomad.job", "label value"},
    {"label_value_long", "/spec/endpointSelector/matchLabels/nomad:nomad.job",
     R"("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")",
     "/spec/endpointSelector/matchLabels/nomad:nomad.job", "label value"},
    {"label_value_type", "/spec/endpointSelector/matchLabels/nomad:nomad.job", "80",
     "/spec/endpointSelector/matchLabels/nomad:nomad.job", "quote it"},
    {"label_key", "/spec/endpointSelector/matchLabels", R"({"nomad:bad key": "x"})",
     "/spec/endpointSelector/matchLabels/nomad:bad key", "label key"},
    {"label_key_prefix", "/spec/endpointSelector/matchLabels", R"({"k8s:Bad_Prefix/name": "x"})",
     "/spec/endpointSelector/matchLabels/k8s:Bad_Prefix~1name", "prefix"},
    {"label_key_too_long", "/spec/endpointSelector/matchLabels",
     R"({"nomad:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa": "x"})",
     "/spec/endpointSelector/matchLabels/"
     "nomad:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
     "label key"},
    {"expr_operator", "/spec/endpointSelector/matchExpressions",
     R"([{"key": "nomad:nomad.job", "operator": "Equals", "values": ["a"]}])",
     "/spec/endpointSelector/matchExpressions/0/operator", "is not one of"},
    {"expr_in_empty", "/spec/endpointSelector/matchExpressions",
     R"([{"key": "nomad:nomad.job", "operator": "In"}])",
     "/spec/endpointSelector/matchExpressions/0/values", "non-empty"},
    {"expr_exists_values", "/spec/endpointSelector/matchExpressions",
     R"([{"key": "nomad:nomad.job", "operator": "Exists", "values": ["a"]}])",
     "/spec/endpointSelector/matchExpressions/0/values", "must be empty"},
    {"expr_key_missing", "/spec/endpointSelector/matchExpressions", R"([{"operator": "Exists"}])",
     "/spec/endpointSelector/matchExpressions/0/key", "required"},
    // Peers.
    {"two_peer_kinds", "/spec/ingress/0/fromEntities", R"(["world"])",
     "/spec/ingress/0/fromEntities", "combining fromEndpoints and fromEntities"},
    {"entity", "/spec/ingress/0", R"({"fromEntities": ["wrld"]})", "/spec/ingress/0/fromEntities/0",
     "is not one of"},
    {"entity_world_ipv4", "/spec/ingress/0", R"({"fromEntities": ["world-ipv4"]})",
     "/spec/ingress/0/fromEntities/0", "is not one of"},
    {"requires", "/spec/ingress/0/fromRequires", R"([{}])", "/spec/ingress/0/fromRequires",
     "no longer supported"},
    {"cidr_syntax", "/spec/egress/0/toCIDRSet/0/cidr", R"("10.0.0.0/33")",
     "/spec/egress/0/toCIDRSet/0/cidr", "not an IPv4 or IPv6 CIDR"},
    {"cidr_v4_leading_zero", "/spec/egress/0/toCIDRSet/0/cidr", R"("10.0.0.01/8")",
     "/spec/egress/0/toCIDRSet/0/cidr", "not an IPv4 or IPv6 CIDR"},
    {"cidr_v6", "/spec/egress/0/toCIDRSet/0/cidr", R"("2001:db8::/129")",
     "/spec/egress/0/toCIDRSet/0/cidr", "not an IPv4 or IPv6 CIDR"},
    {"cidr_bare_in_set", "/spec/egress/0/toCIDRSet/0", R"({"cidr": "10.1.2.3"})",
     "/spec/egress/0/toCIDRSet/0/cidr", "not an IPv4 or IPv6 CIDR"},
    {"except_outside", "/spec/egress/0/toCIDRSet/0/except", R"(["192.168.0.0/16"])",
     "/spec/egress/0/toCIDRSet/0/except/0", "is not inside 10.0.0.0/8"},
    {"cidr_and_ref", "/spec/egress/0/toCIDRSet/0/cidrGroupRef", R"("group")",
     "/spec/egress/0/toCIDRSet/0", "only one of"},
    {"cidr_group_selector", "/spec/egress/0/toCIDRSet/0", R"({"cidrGroupSelector": {}})",
     "/spec/egress/0/toCIDRSet/0/cidrGroupSelector", "1.17"},
    {"cidr_group_selector_null", "/spec/egress/0/toCIDRSet/0/cidrGroupSelector", "null",
     "/spec/egress/0/toCIDRSet/0/cidrGroupSelector", "1.17"},
    {"cidr_list", "/spec/egress/0", R"({"toCIDR": ["10.0.0.300"]})", "/spec/egress/0/toCIDR/0",
     "not an IPv4 or IPv6 CIDR or address"},
    {"fqdn_both", "/spec/egress/0",
     R"({"toFQDNs": [{"matchName": "a.com", "matchPattern": "*.a.com"}]})",
     "/spec/egress/0/toFQDNs/0", "exactly one of"},
    {"fqdn_pattern", "/spec/egress/0", R"({"toFQDNs": [{"matchName": "a..com"}]})",
     "/spec/egress/0/toFQDNs/0/matchName", "empty DNS label"},
    // Ports and protocols.
    {"port_range", "/spec/ingress/0/toPorts/0/ports/0/port", R"("70000")",
     "/spec/ingress/0/toPorts/0/ports/0/port", "\"70000\" is not a port (0-65535)"},
    {"port_number", "/spec/ingress/0/toPorts/0/ports/0/port", "80",
     "/spec/ingress/0/toPorts/0/ports/0/port", "must be a string"},
    {"port_leading_zero", "/spec/ingress/0/toPorts/0/ports/0/port", R"("080")",
     "/spec/ingress/0/toPorts/0/ports/0/port", "is not a port"},
    {"port_name_long", "/spec/ingress/0/toPorts/0/ports/0/port", R"("averyveryverylongname")",
     "/spec/ingress/0/toPorts/0/ports/0/port", "is not a port"},
    {"port_missing", "/spec/ingress/0/toPorts/0/ports/0", R"({"protocol": "TCP"})",
     "/spec/ingress/0/toPorts/0/ports/0/port", "required"},
    {"end_port_below", "/spec/ingress/0/toPorts/0/ports/0/endPort", "80",
     "/spec/ingress/0/toPorts/0/ports/0/endPort", "below port 8080"},
    {"end_port_range", "/spec/ingress/0/toPorts/0/ports/0/endPort", "65536",
     "/spec/ingress/0/toPorts/0/ports/0/endPort", "out of range"},
    {"end_port_type", "/spec/ingress/0/toPorts/0/ports/0/endPort", R"("9000")",
     "/spec/ingress/0/toPorts/0/ports/0/endPort", "must be an integer"},
    {"end_port_fraction", "/spec/ingress/0/toPorts/0/ports/0/endPort", "9000.5",
     "/spec/ingress/0/toPorts/0/ports/0/endPort", "must be an integer"},
    {"protocol", "/spec/ingress/0/toPorts/0/ports/0/protocol", R"("ICMP")",
     "/spec/ingress/0/toPorts/0/ports/0/protocol", "is not one of TCP, UDP, SCTP, ANY"},
    {"protocol_lower", "/spec/ingress/0/toPorts/0/ports/0/protocol", R"("tcp")",
     "/spec/ingress/0/toPorts/0/ports/0/protocol", "is not one of"},
    {"protocol_vrrp", "/spec/ingress/0/toPorts/0/ports/0/protocol", R"("VRRP")",
     "/spec/ingress/0/toPorts/0/ports/0/protocol", "is not one of"},
    {"too_many_ports", "/spec/ingress/0/toPorts/0/ports",
     R"([{"port":"1"},{"port":"2"},{"port":"3"},{"port":"4"},{"port":"5"},{"port":"6"},{"port":"7"},{"port":"8"},{"port":"9"},{"port":"10"},{"port":"11"},{"port":"12"},{"port":"13"},{"port":"14"},{"port":"15"},{"port":"16"},{"port":"17"},{"port":"18"},{"port":"19"},{"port":"20"},{"port":"21"},{"port":"22"},{"port":"23"},{"port":"24"},{"port":"25"},{"port":"26"},{"port":"27"},{"port":"28"},{"port":"29"},{"port":"30"},{"port":"31"},{"port":"32"},{"port":"33"},{"port":"34"},{"port":"35"},{"port":"36"},{"port":"37"},{"port":"38"},{"port":"39"},{"port":"40"},{"port":"41"}])",
     "/spec/ingress/0/toPorts/0/ports", "at most 40"},
    {"null_item", "/spec/ingress/0/toPorts/0/ports", "[null]", "/spec/ingress/0/toPorts/0/ports/0",
     "null"},
    // L7.
    {"dns_on_ingress", "/spec/ingress/0/toPorts/0/rules", R"({"dns": [{"matchPattern": "*"}]})",
     "/spec/ingress/0/toPorts/0/rules", "DNS rules are not allowed on ingress"},
    {"l7_two_kinds", "/spec/ingress/0/toPorts/0/rules", R"({"http": [{}], "kafka": [{}]})",
     "/spec/ingress/0/toPorts/0/rules", "multiple L7"},
    {"l7_udp", "/spec/ingress/0/toPorts/0",
     R"({"ports": [{"port": "80", "protocol": "UDP"}], "rules": {"http": [{"method": "GET"}]}})",
     "/spec/ingress/0/toPorts/0/ports", "only apply to TCP"},
    {"l7_port_zero", "/spec/ingress/0/toPorts/0",
     R"({"ports": [{"port": "0", "protocol": "TCP"}], "rules": {"http": [{}]}})",
     "/spec/ingress/0/toPorts/0/ports", "port is 0"},
    {"l7_range", "/spec/ingress/0/toPorts/0",
     R"({"ports": [{"port": "80", "endPort": 90, "protocol": "TCP"}], "rules": {"http": [{}]}})",
     "/spec/ingress/0/toPorts/0/ports", "port ranges"},
    {"l7_without_proto", "/spec/ingress/0/toPorts/0/rules", R"({"l7": [{"a": "b"}]})",
     "/spec/ingress/0/toPorts/0/rules/l7", "l7proto"},
    {"http_header_name", "/spec/ingress/0/toPorts/0/rules",
     R"({"http": [{"headerMatches": [{"name": ""}]}]})",
     "/spec/ingress/0/toPorts/0/rules/http/0/headerMatches/0/name", "must not be empty"},
    {"kafka_role", "/spec/ingress/0/toPorts/0/rules", R"({"kafka": [{"role": "admin"}]})",
     "/spec/ingress/0/toPorts/0/rules/kafka/0/role", "is not one of"},
    // pkg/policy/api/http.go PortRuleHTTP.Sanitize compiles path and method.
    {"http_path_regex", "/spec/ingress/0/toPorts/0/rules", R"({"http": [{"path": "/["}]})",
     "/spec/ingress/0/toPorts/0/rules/http/0/path", "missing ]"},
    {"http_method_regex", "/spec/ingress/0/toPorts/0/rules", R"({"http": [{"method": "G(ET"}]})",
     "/spec/ingress/0/toPorts/0/rules/http/0/method", "missing )"},
    // pkg/policy/api/kafka/kafka.go PortRule.Sanitize.
    {"kafka_topic_chars", "/spec/ingress/0/toPorts/0/rules", R"({"kafka": [{"topic": "a b"}]})",
     "/spec/ingress/0/toPorts/0/rules/kafka/0/topic", "not a Kafka topic name"},
    {"kafka_api_key", "/spec/ingress/0/toPorts/0/rules", R"({"kafka": [{"apiKey": "publish"}]})",
     "/spec/ingress/0/toPorts/0/rules/kafka/0/apiKey", "not a Kafka API key"},
    {"kafka_api_key_and_role", "/spec/ingress/0/toPorts/0/rules",
     R"({"kafka": [{"apiKey": "fetch", "role": "consume"}]})",
     "/spec/ingress/0/toPorts/0/rules/kafka/0/apiKey", "together with role"},
    {"kafka_api_version", "/spec/ingress/0/toPorts/0/rules",
     R"({"kafka": [{"apiVersion": "32768"}]})",
     "/spec/ingress/0/toPorts/0/rules/kafka/0/apiVersion", "0-32767"},
    {"kafka_api_version_text", "/spec/ingress/0/toPorts/0/rules",
     R"({"kafka": [{"apiVersion": "v1"}]})", "/spec/ingress/0/toPorts/0/rules/kafka/0/apiVersion",
     "0-32767"},
    {"listener_ingress", "/spec/ingress/0/toPorts/0/listener",
     R"({"name": "l", "envoyConfig": {"name": "cfg"}})", "/spec/ingress/0/toPorts/0/listener",
     "not allowed on ingress"},
    {"listener_priority", "/spec/egress/0/toPorts/0/listener",
     R"({"name": "l", "envoyConfig": {"name": "cfg"}, "priority": 101})",
     "/spec/egress/0/toPorts/0/listener/priority", "out of range"},
    {"server_names_empty", "/spec/egress/0/toPorts/0/serverNames", "[]",
     "/spec/egress/0/toPorts/0/serverNames", "at least one"},
    {"server_name", "/spec/egress/0/toPorts/0/serverNames", R"(["bad name"])",
     "/spec/egress/0/toPorts/0/serverNames/0", "not a server name"},
    {"tls_secret", "/spec/egress/0/toPorts/0/terminatingTLS", R"({"certificate": "c"})",
     "/spec/egress/0/toPorts/0/terminatingTLS/secret", "required"},
    // ICMP, authentication, services, groups.
    {"icmp_with_ports", "/spec/ingress/0/icmps", R"([{"fields": [{"type": 8}]}])",
     "/spec/ingress/0/icmps", "without ToPorts"},
    {"icmp_type", "/spec/egress/0", R"({"icmps": [{"fields": [{"type": 256}]}]})",
     "/spec/egress/0/icmps/0/fields/0/type", "out of range"},
    {"icmp_name", "/spec/egress/0", R"({"icmps": [{"fields": [{"type": "Ping"}]}]})",
     "/spec/egress/0/icmps/0/fields/0/type", "not an ICMPv4 type"},
    {"icmp_name_family", "/spec/egress/0",
     R"({"icmps": [{"fields": [{"type": "Echo", "family": "IPv6"}]}]})",
     "/spec/egress/0/icmps/0/fields/0/type", "not an ICMPv6 type"},
    {"icmp_name_v4_default", "/spec/egress/0",
     R"({"icmps": [{"fields": [{"type": "PacketTooBig"}]}]})",
     "/spec/egress/0/icmps/0/fields/0/type", "not an ICMPv4 type"},
    // toServices selects nothing without Kubernetes (policy_rules.cpp, services_refused), in
    // both of its forms, in allow and deny rules. With toPorts, which 1.16 also refuses, the
    // reason given is the one that holds on every release.
    {"services_by_name", "/spec/egress/0",
     R"({"toServices": [{"k8sService": {"serviceName": "db", "namespace": "default"}}]})",
     "/spec/egress/0/toServices", "selects nothing on an agent without Kubernetes"},
    {"services_with_ports", "/spec/egress/0",
     R"({"toServices": [{"k8sService": {"serviceName": "db", "namespace": "default"}}], "toPorts": [{"ports": [{"port": "5432"}]}]})",
     "/spec/egress/0/toServices",
     "allow nothing and still put the endpoint's egress in default deny"},
    {"services_deny", "/spec/egressDeny",
     R"([{"toServices": [{"k8sService": {"serviceName": "db"}}]}])",
     "/spec/egressDeny/0/toServices", "would deny nothing"},
    {"icmp_family", "/spec/egress/0", R"({"icmps": [{"fields": [{"type": 8, "family": "IPv5"}]}]})",
     "/spec/egress/0/icmps/0/fields/0/family", "is not one of"},
    {"auth_mode", "/spec/ingress/0/authentication", R"({"mode": "maybe"})",
     "/spec/ingress/0/authentication/mode", "is not one of"},
    {"services_by_selector", "/spec/egress/0",
     R"({"toServices": [{"k8sServiceSelector": {"selector": {"matchLabels": {"a": "b"}}}}]})",
     "/spec/egress/0/toServices", "pkg/policy/k8s/service.go"},
    // Refused whole, before its items: a malformed item gets the same answer.
    {"services_malformed", "/spec/egress/0", R"({"toServices": [{"k8sServiceSelector": {}}]})",
     "/spec/egress/0/toServices", "selects nothing"},
    {"services_null_item", "/spec/egress/0", R"({"toServices": [null]})",
     "/spec/egress/0/toServices/0", "null is not allowed"},
    {"groups_type", "/spec/egress/0", R"({"toGroups": [{"aws": {"region": 1}}]})",
     "/spec/egress/0/toGroups/0/aws/region", "must be a string"},
};

INSTANTIATE_TEST_SUITE_P(Rules, BadDocument, ::testing::ValuesIn(kBadCases),
                         [](const auto& test) { return std::string(test.param.name); });

// An empty toServices names no service, which the agent reads as no toServices at all: nothing to
// refuse. (A non-empty one is refused: kBadCases, services_*.)
TEST(ToServices, AnEmptyListPassesInAllowAndDenyRules) {
  json doc = good_ccnp();
  doc["spec"]["egress"][0]["toServices"] = json::array();
  doc["spec"]["egressDeny"] = json::parse(R"([{"toServices": [], "toCIDR": ["10.0.0.0/8"]}])");
  auto r = validate_policy_document(doc.dump());
  EXPECT_TRUE(r) << r.error().message;
}

}  // namespace
}  // namespace cn::policy
