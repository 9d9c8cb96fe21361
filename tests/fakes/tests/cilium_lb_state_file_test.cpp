// Conformance of the fake agent's --lb-state-file reader with cilium/cilium (1.18+); each test
// names the upstream file whose behaviour it pins:
//   pkg/loadbalancer/reflectors/file.go         (suffix, decoding, the StateFile shape)
//   pkg/loadbalancer/reflectors/conversions.go  (frontends from a Service, slice linking)
//   pkg/k8s/endpoints.go                        (backend states per release, ports, addresses)
//   pkg/loadbalancer/writer/writer.go           (backend selection, frontend ownership)
// Facts: /work/shared/reference/cilium-lb-state-file.md sections 2, 4 and 5.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/fakes/cilium/lb_state_file.h"
#include "tests/fakes/cilium/lb_table.h"
#include "tests/fakes/cilium/openapi_validator.h"

#ifndef CN_FAKES_OPENAPI_JSON
#define CN_FAKES_OPENAPI_JSON ""
#endif

namespace cn::fakes::cilium {
namespace {

using nlohmann::json;

LbEmulation release(int minor, int patch = 0, bool kpr = false) {
  LbEmulation em;
  em.minor = minor;
  em.patch = patch;
  em.kube_proxy_replacement = kpr;
  return em;
}

LbTable parse_ok(const json& doc, const LbEmulation& em = release(19, 5)) {
  auto t = parse_lb_state_file(doc.dump(), LbFileFormat::json_file, em);
  EXPECT_TRUE(t) << (t ? "" : t.error().message);
  return t ? *t : LbTable{};
}

std::string parse_error(const std::string& text, LbFileFormat format = LbFileFormat::json_file) {
  auto t = parse_lb_state_file(text, format, release(19, 5));
  return t ? "" : t.error().message;
}

json service(const std::string& name, json spec, json extra = json::object()) {
  json s = {{"metadata", {{"name", name}, {"namespace", "default"}}}, {"spec", std::move(spec)}};
  s.update(extra);
  return s;
}

json slice(const std::string& service_name, json endpoints, json ports,
           const std::string& address_type = "IPv4") {
  return {{"metadata",
           {{"name", service_name + "-1"},
            {"namespace", "default"},
            {"labels", {{"kubernetes.io/service-name", service_name}}}}},
          {"addressType", address_type},
          {"endpoints", std::move(endpoints)},
          {"ports", std::move(ports)}};
}

json ready_at(const std::string& ip) {
  return {{"addresses", {ip}},
          {"conditions", {{"ready", true}, {"serving", true}, {"terminating", false}}}};
}

const json kHttp = {{{"name", "http"}, {"protocol", "TCP"}, {"port", 8080}}};

json web_cluster_ip(json ports = {{{"name", "http"}, {"protocol", "TCP"}, {"port", 80}}}) {
  return service("web", {{"clusterIP", "10.96.0.10"}, {"ports", std::move(ports)}});
}

std::vector<std::string> frontend_list(const LbTable& t) {
  std::vector<std::string> out;
  for (const auto& f : t.frontends) out.push_back(f.type + " " + f.key());
  return out;
}

// file.go registerFileReflector: the suffix picks the decoder; anything else stops the agent.
TEST(CiliumLbStateFile, SuffixDecidesTheFormat) {
  EXPECT_EQ(*lb_state_file_format("/run/lb.json"), LbFileFormat::json_file);
  EXPECT_EQ(*lb_state_file_format("/run/lb.yaml"), LbFileFormat::yaml_file);
  EXPECT_EQ(*lb_state_file_format("lb.yml"), LbFileFormat::yaml_file);
  auto bad = lb_state_file_format("/run/lb.txt");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message,
            "could not deduce file format from \"/run/lb.txt\", expected .json or .yaml suffix");
}

// file.go: encoding/json fails on no input; sigs.k8s.io/yaml turns nothing into null.
TEST(CiliumLbStateFile, EmptyJsonIsAnErrorEmptyYamlIsAnEmptyState) {
  EXPECT_EQ(parse_error(""), "unexpected end of JSON input");
  auto yaml = parse_lb_state_file("", LbFileFormat::yaml_file, release(18));
  ASSERT_TRUE(yaml);
  EXPECT_TRUE(yaml->services.empty());
  EXPECT_TRUE(parse_lb_state_file("{}", LbFileFormat::json_file, release(18)));
  EXPECT_NE(parse_error("[]"), "");
}

// file.go decodes with encoding/json: unknown keys ignored, keys matched case-insensitively.
TEST(CiliumLbStateFile, UnknownKeysAreIgnoredAndKeyNamesFoldCase) {
  json doc = {{"Services",
               {{{"METADATA", {{"Name", "web"}, {"namespace", "default"}}},
                 {"spec",
                  {{"ClusterIP", "10.96.0.10"},
                   {"ports", {{{"Port", 80}, {"protocol", "TCP"}}}},
                   {"futureField", {1, 2}}}}}}},
              {"apiVersion", "v1"}};
  auto t = parse_ok(doc);
  ASSERT_EQ(t.frontends.size(), 1u);
  EXPECT_EQ(t.frontends[0].key(), "10.96.0.10:80/TCP/external");
  EXPECT_EQ(t.frontends[0].service, "default/web");
}

// file.go: one wrong JSON type anywhere fails the whole decode, also in fields the fake ignores.
TEST(CiliumLbStateFile, AWrongTypeAnywhereRejectsTheWholeFile) {
  json doc = {{"services", {web_cluster_ip({{{"port", "80"}, {"protocol", "TCP"}}})}}};
  EXPECT_EQ(parse_error(doc.dump()),
            "json: cannot unmarshal string into Go struct field ServicePort.services.spec.ports."
            "port of type int32");
  json unused = {{"services", {service("web", {{"healthCheckNodePort", true}})}}};
  EXPECT_NE(parse_error(unused.dump()), "");
  json condition = {
      {"endpoints",
       {slice("web", {{{"addresses", {"10.0.0.1"}}, {"conditions", {{"ready", "yes"}}}}}, kHttp)}}};
  EXPECT_NE(parse_error(condition.dump()), "");
  EXPECT_NE(parse_error(json{{"services", {web_cluster_ip({{{"port", 80.5}}})}}}.dump()), "");
  EXPECT_NE(parse_error(json{{"services", {web_cluster_ip({{{"port", 3000000000LL}}})}}}.dump()),
            "");
}

// pkg/loadbalancer/tests/testdata/file.txtar: the upstream example, in YAML. 1.18 gives the
// LoadBalancer frontend only with kube-proxy replacement (conversions.go).
TEST(CiliumLbStateFile, UpstreamExampleYaml) {
  const std::string yaml = R"(services:
  - metadata: {name: echo, namespace: test}
    spec:
      type: LoadBalancer
      ports: [{name: http, port: 80, protocol: TCP, targetPort: 80}]
    status: {loadBalancer: {ingress: [{ip: 172.16.1.1}]}}
endpoints:
  - metadata:
      name: echo-ep1
      namespace: test
      labels: {kubernetes.io/service-name: echo}
    addressType: IPv4
    endpoints:
    - addresses: [2.2.2.2]
      conditions: {ready: true, serving: true, terminating: false}
    ports: [{name: http, port: 80, protocol: TCP}]
)";
  auto v119 = parse_lb_state_file(yaml, LbFileFormat::yaml_file, release(19, 5));
  ASSERT_TRUE(v119) << v119.error().message;
  ASSERT_EQ(v119->frontends.size(), 1u);
  const auto& fe = v119->frontends[0];
  EXPECT_EQ(fe.type + " " + fe.key(), "LoadBalancer 172.16.1.1:80/TCP/external");
  ASSERT_EQ(fe.backends.size(), 1u);
  EXPECT_EQ(fe.backends[0].address, "2.2.2.2");
  EXPECT_EQ(fe.backends[0].state, "active");
  EXPECT_EQ(v119->services[0].name, "test/echo");
  auto v118 = parse_lb_state_file(yaml, LbFileFormat::yaml_file, release(18, 5));
  ASSERT_TRUE(v118);
  EXPECT_TRUE(v118->frontends.empty());
  auto v118kpr = parse_lb_state_file(yaml, LbFileFormat::yaml_file, release(18, 5, true));
  ASSERT_TRUE(v118kpr);
  EXPECT_EQ(v118kpr->frontends.size(), 1u);
}

// conversions.go: ClusterIP frontends need no kube-proxy replacement; clusterIPs are sorted as
// strings. isHeadless (clusterIP "None" in any case, or the headless label) means no frontends
// at all, external IPs included.
TEST(CiliumLbStateFile, ClusterIpFrontendsAndTheHeadlessRule) {
  json ports = {{{"protocol", "TCP"}, {"port", 80}}};
  json external = {"192.0.2.1"};
  auto t = parse_ok(
      {{"services",
        {service("a", {{"clusterIPs", {"10.96.0.3", "10.96.0.20"}}, {"ports", ports}}),
         service("b", {{"clusterIP", "None"}, {"externalIPs", external}, {"ports", ports}}),
         service("c", {{"clusterIP", "NONE"}, {"externalIPs", external}, {"ports", ports}}),
         service("d", {{"clusterIP", "10.96.0.30"}, {"externalIPs", external}, {"ports", ports}},
                 {{"metadata",
                   {{"name", "d"},
                    {"namespace", "default"},
                    {"labels", {{"service.kubernetes.io/headless", ""}}}}}})}}},
      release(19, 5));
  EXPECT_EQ(frontend_list(t), (std::vector<std::string>{"ClusterIP 10.96.0.20:80/TCP/external",
                                                        "ClusterIP 10.96.0.3:80/TCP/external"}));
}

// conversions.go getIPFamilies: without ipFamilies the families come from the cluster IPs, but
// only when spec.clusterIP is set; the 1.19.0 source turns a deduced IPv6 into IPv4.
TEST(CiliumLbStateFile, NodePortFamiliesDeducedFromClusterIp) {
  json ports = {{{"protocol", "TCP"}, {"port", 80}, {"nodePort", 30080}}};
  json v6 = {
      {"services",
       {service("web", {{"type", "NodePort"}, {"clusterIP", "fd00::10"}, {"ports", ports}})}}};
  LbEmulation fixed = release(19, 5, true);
  fixed.ipv6 = true;
  LbEmulation buggy = release(19, 0, true);
  buggy.ipv6 = true;
  EXPECT_EQ(frontend_list(parse_ok(v6, fixed)),
            (std::vector<std::string>{"ClusterIP fd00::10:80/TCP/external",
                                      "NodePort :::30080/TCP/external"}));
  EXPECT_EQ(frontend_list(parse_ok(v6, buggy)),
            (std::vector<std::string>{"ClusterIP fd00::10:80/TCP/external",
                                      "NodePort 0.0.0.0:30080/TCP/external"}));
  json only_list = {
      {"services",
       {service("web", {{"type", "NodePort"}, {"clusterIPs", {"10.96.0.10"}}, {"ports", ports}})}}};
  EXPECT_EQ(frontend_list(parse_ok(only_list, fixed)),
            std::vector<std::string>{"ClusterIP 10.96.0.10:80/TCP/external"});
}

// conversions.go: NodePort needs kube-proxy replacement, type NodePort/LoadBalancer, a nodePort
// and a known IP family; otherwise no NodePort frontend at all.
TEST(CiliumLbStateFile, NodePortNeedsKprAndAKnownFamily) {
  json ports = {{{"protocol", "TCP"}, {"port", 80}, {"nodePort", 30080}}};
  json with_family = {
      {"services",
       {service("web", {{"type", "NodePort"}, {"ipFamilies", {"IPv4"}}, {"ports", ports}})}}};
  json without_family = {{"services", {service("web", {{"type", "NodePort"}, {"ports", ports}})}}};
  EXPECT_TRUE(parse_ok(with_family, release(19, 5, false)).frontends.empty());
  EXPECT_EQ(frontend_list(parse_ok(with_family, release(19, 5, true))),
            std::vector<std::string>{"NodePort 0.0.0.0:30080/TCP/external"});
  EXPECT_TRUE(parse_ok(without_family, release(19, 5, true)).frontends.empty());
}

// conversions.go: ingress IPs count with ipMode unset or VIP only.
TEST(CiliumLbStateFile, LoadBalancerIngressHonoursIpMode) {
  json doc = {
      {"services",
       {service("web", {{"type", "LoadBalancer"}, {"ports", {{{"protocol", "TCP"}, {"port", 80}}}}},
                {{"status",
                  {{"loadBalancer",
                    {{"ingress",
                      {{{"ip", "172.16.0.1"}},
                       {{"ip", "172.16.0.2"}, {"ipMode", "VIP"}},
                       {{"ip", "172.16.0.3"}, {"ipMode", "Proxy"}}}}}}}}})}}};
  EXPECT_EQ(frontend_list(parse_ok(doc)),
            (std::vector<std::string>{"LoadBalancer 172.16.0.1:80/TCP/external",
                                      "LoadBalancer 172.16.0.2:80/TCP/external"}));
}

// conversions.go: externalIPs for any type; 1.18 only with kube-proxy replacement.
TEST(CiliumLbStateFile, ExternalIpsAreGatedOnlyOn118) {
  json doc = {{"services",
               {service("web", {{"externalIPs", {"192.0.2.7"}},
                                {"ports", {{{"protocol", "UDP"}, {"port", 53}}}}})}}};
  EXPECT_TRUE(parse_ok(doc, release(18, 11)).frontends.empty());
  EXPECT_EQ(frontend_list(parse_ok(doc, release(18, 11, true))),
            std::vector<std::string>{"ExternalIPs 192.0.2.7:53/UDP/external"});
  EXPECT_EQ(frontend_list(parse_ok(doc, release(19, 0))),
            std::vector<std::string>{"ExternalIPs 192.0.2.7:53/UDP/external"});
}

// conversions.go: exactly one Local traffic policy doubles NodePort/LoadBalancer frontends.
TEST(CiliumLbStateFile, OneLocalPolicyGivesTwoScopes) {
  json ports = {{{"protocol", "TCP"}, {"port", 80}, {"nodePort", 30080}}};
  auto spec = [&](const char* etp, const char* itp) {
    return json{{"services",
                 {service("web", {{"type", "NodePort"},
                                  {"clusterIP", "10.96.0.10"},
                                  {"externalTrafficPolicy", etp},
                                  {"internalTrafficPolicy", itp},
                                  {"ports", ports}})}}};
  };
  EXPECT_EQ(frontend_list(parse_ok(spec("Local", "Cluster"), release(19, 5, true))),
            (std::vector<std::string>{"ClusterIP 10.96.0.10:80/TCP/external",
                                      "NodePort 0.0.0.0:30080/TCP/external",
                                      "NodePort 0.0.0.0:30080/TCP/internal"}));
  EXPECT_EQ(parse_ok(spec("Local", "Local"), release(19, 5, true)).frontends.size(), 2u);
}

// conversions.go takes the Service port's protocol verbatim; endpoints.go defaults a slice
// port's nil protocol to TCP and drops any other spelling; writer.go matches strings exactly.
TEST(CiliumLbStateFile, ProtocolStringsAreExact) {
  auto t = parse_ok({{"services", {web_cluster_ip({{{"protocol", "tcp"}, {"port", 80}}})}},
                     {"endpoints", {slice("web", {ready_at("10.0.0.1")}, kHttp)}}});
  ASSERT_EQ(t.frontends.size(), 1u);
  EXPECT_TRUE(t.frontends[0].backends.empty());
  auto nil = parse_ok({{"services", {web_cluster_ip()}},
                       {"endpoints", {slice("web", {ready_at("10.0.0.1")}, {{{"port", 8080}}})}}});
  EXPECT_EQ(nil.frontends[0].backends.size(), 1u);
  auto lower =
      parse_ok({{"services", {web_cluster_ip()}},
                {"endpoints",
                 {slice("web", {ready_at("10.0.0.1")}, {{{"port", 8080}, {"protocol", "tcp"}}})}}});
  EXPECT_TRUE(lower.frontends[0].backends.empty());
  EXPECT_TRUE(lower.services[0].backends.empty());
}

// writer.go DefaultSelectBackends: a named frontend port takes backends of that name or of
// an unnamed slice port.
TEST(CiliumLbStateFile, PortNamesMustMatchWhenBothHaveOne) {
  json ports = {{{"name", "http"}, {"protocol", "TCP"}, {"port", 80}},
                {{"name", "metrics"}, {"protocol", "TCP"}, {"port", 9090}}};
  auto t =
      parse_ok({{"services", {web_cluster_ip(ports)}},
                {"endpoints",
                 {slice("web", {ready_at("10.0.0.1")},
                        {{{"name", "metrics"}, {"protocol", "TCP"}, {"port", 9100}}}),
                  slice("web", {ready_at("10.0.0.2")}, {{{"protocol", "TCP"}, {"port", 8080}}})}}});
  ASSERT_EQ(t.frontends.size(), 2u);
  auto addrs = [](const LbFrontend& f) {
    std::vector<std::string> out;
    for (const auto& b : f.backends) out.push_back(b.address + ":" + std::to_string(b.port));
    return out;
  };
  EXPECT_EQ(addrs(t.frontends[0]), std::vector<std::string>{"10.0.0.2:8080"});
  EXPECT_EQ(addrs(t.frontends[1]), (std::vector<std::string>{"10.0.0.1:9100", "10.0.0.2:8080"}));
}

// writer.go: a frontend takes backends of its own IP family only.
TEST(CiliumLbStateFile, IpFamiliesMustMatch) {
  LbEmulation em = release(19, 5);
  em.ipv6 = true;
  auto t = parse_ok({{"services",
                      {service("web", {{"clusterIPs", {"10.96.0.10", "FD00:0::10"}},
                                       {"ports", {{{"protocol", "TCP"}, {"port", 80}}}}})}},
                     {"endpoints",
                      {slice("web", {ready_at("10.0.0.1")}, kHttp),
                       slice("web", {ready_at("fd00::1")}, kHttp, "IPv6")}}},
                    em);
  ASSERT_EQ(t.frontends.size(), 2u);
  for (const auto& f : t.frontends) {
    ASSERT_EQ(f.backends.size(), 1u) << f.key();
    EXPECT_EQ(f.backends[0].ipv6, f.ipv6) << f.key();
  }
  // Addresses are kept as netip prints them.
  EXPECT_EQ(t.frontends[1].address, "fd00::10");
}

// endpoints.go ParseEndpointSliceID: a slice belongs to <its namespace>/<service-name label>.
TEST(CiliumLbStateFile, SlicesLinkByNamespaceAndServiceNameLabel) {
  json other_ns = slice("web", {ready_at("10.0.0.1")}, kHttp);
  other_ns["metadata"]["namespace"] = "prod";
  json unlabelled = slice("web", {ready_at("10.0.0.2")}, kHttp);
  unlabelled["metadata"].erase("labels");
  json good = slice("web", {ready_at("10.0.0.3")}, kHttp);
  good["metadata"]["name"] = "name-is-not-used";
  auto t =
      parse_ok({{"services", {web_cluster_ip()}}, {"endpoints", {other_ns, unlabelled, good}}});
  ASSERT_EQ(t.frontends[0].backends.size(), 1u);
  EXPECT_EQ(t.frontends[0].backends[0].address, "10.0.0.3");
  EXPECT_EQ(t.slice_count, 3u);
}

// endpoints.go: addressType other than IPv4/IPv6 ignores the slice; bad addresses are skipped;
// a slice without ports yields no backends.
TEST(CiliumLbStateFile, AddressTypesAddressesAndPorts) {
  auto t = parse_ok({{"services", {web_cluster_ip()}},
                     {"endpoints",
                      {slice("web", {ready_at("10.0.0.1")}, kHttp, "FQDN"),
                       slice("web", {ready_at("not-an-ip"), ready_at("10.0.0.2")}, kHttp),
                       slice("web", {ready_at("10.0.0.3")}, json::array())}}});
  ASSERT_EQ(t.services[0].backends.size(), 1u);
  EXPECT_EQ(t.services[0].backends[0].address, "10.0.0.2");
}

// endpoints.go ParseEndpointSliceV1, conversions.go convertEndpoints: the condition table
// of 1.18.0-1.18.4 and of 1.18.5+.
TEST(CiliumLbStateFile, BackendStatesPerRelease) {
  struct Row {
    json conditions;
    const char* old_state;  // 1.18.4; "" = dropped
    const char* new_state;  // 1.18.5+, 1.19, 1.20
  };
  const std::vector<Row> rows = {
      {{{"ready", true}, {"serving", true}, {"terminating", true}}, "active", "active"},
      {{{"ready", false}, {"serving", true}, {"terminating", true}}, "terminating", "terminating"},
      {{{"ready", false}, {"serving", false}, {"terminating", true}},
       "",
       "terminating-not-serving"},
      {{{"ready", false}, {"serving", true}, {"terminating", false}}, "active", "maintenance"},
      {{{"ready", false}, {"serving", false}, {"terminating", false}}, "", "maintenance"},
      // nil serving took ready's value before 1.18.5, and is serving after.
      {{{"ready", false}, {"terminating", true}}, "", "terminating"},
      {json::object(), "active", "active"},
  };
  for (const auto& row : rows) {
    json doc = {
        {"services", {web_cluster_ip()}},
        {"endpoints",
         {slice("web", {{{"addresses", {"10.0.0.1"}}, {"conditions", row.conditions}}}, kHttp)}}};
    for (auto [em, want] :
         {std::pair{release(18, 4), row.old_state}, std::pair{release(18, 5), row.new_state},
          std::pair{release(19, 0), row.new_state}, std::pair{release(20), row.new_state}}) {
      auto t = parse_ok(doc, em);
      const auto& bes = t.services[0].backends;
      const std::string got = bes.empty() ? "" : bes[0].state;
      EXPECT_EQ(got, want) << row.conditions.dump() << " on 1." << em.minor << "." << em.patch;
    }
  }
}

// writer.go: a Local policy keeps backends on this node or on no node.
TEST(CiliumLbStateFile, LocalPolicyKeepsThisNodesBackends) {
  json here = ready_at("10.0.0.1");
  here["nodeName"] = "fake-node";
  json there = ready_at("10.0.0.2");
  there["nodeName"] = "other";
  json nowhere = ready_at("10.0.0.3");
  auto t = parse_ok({{"services",
                      {service("web", {{"clusterIP", "10.96.0.10"},
                                       {"internalTrafficPolicy", "Local"},
                                       {"ports", {{{"protocol", "TCP"}, {"port", 80}}}}})}},
                     {"endpoints", {slice("web", {here, there, nowhere}, kHttp)}}});
  std::vector<std::string> got;
  for (const auto& b : t.frontends[0].backends) got.push_back(b.address);
  EXPECT_EQ(got, (std::vector<std::string>{"10.0.0.1", "10.0.0.3"}));
}

// writer.go UpsertServiceAndFrontends: a frontend another service owns fails the transaction.
TEST(CiliumLbStateFile, AFrontendConflictRejectsTheWholeFile) {
  json a = web_cluster_ip();
  json b = web_cluster_ip();
  b["metadata"]["name"] = "api";
  EXPECT_EQ(parse_error(json{{"services", {a, b}}}.dump()),
            "failed to upsert services and frontends: frontend already owned by another service: "
            "10.96.0.10:80/TCP is owned by default/web");
  // A second entry of the same name is no conflict: it replaces the first.
  EXPECT_EQ(parse_error(json{{"services", {a, a}}}.dump()), "");
}

// writer.go at v1.20.0-pre.3 (PR cilium/cilium#46061): the slice weight annotation, 0 =
// maintenance; 1.19 always weighs 100.
TEST(CiliumLbStateFile, WeightAnnotationOnlyFrom120) {
  json sl = slice("web", {ready_at("10.0.0.1")}, kHttp);
  sl["metadata"]["annotations"] = {{"service.cilium.io/weight", "0"}};
  json doc = {{"services", {web_cluster_ip()}}, {"endpoints", {sl}}};
  auto v119 = parse_ok(doc, release(19, 5));
  EXPECT_EQ(v119.services[0].backends[0].weight, 100);
  EXPECT_EQ(v119.services[0].backends[0].state, "active");
  auto v120 = parse_ok(doc, release(20));
  EXPECT_EQ(v120.services[0].backends[0].weight, 0);
  EXPECT_EQ(v120.services[0].backends[0].state, "maintenance");
  doc["endpoints"][0]["metadata"]["annotations"]["service.cilium.io/weight"] = "heavy";
  EXPECT_EQ(parse_ok(doc, release(20)).services[0].backends[0].weight, 100);
}

// pkg/loadbalancer/cell/restapi.go + frontend.go ToModel: GET /v1/service's model. The
// committed spec predates BackendAddress.protocol, which ToModel fills, and its frontend
// protocol enum is lower case while ToModel prints the L4Type ("TCP"); the test adjusts both
// before validating (the agent does not validate its responses).
TEST(CiliumLbStateFile, ServiceListModelMatchesTheSpec) {
  auto spec = OpenApiSpec::load(CN_FAKES_OPENAPI_JSON);
  ASSERT_TRUE(spec) << spec.error().message;
  json raw = spec->raw();
  raw["definitions"]["BackendAddress"]["properties"]["protocol"] = {{"type", "string"}};
  raw["definitions"]["FrontendAddress"]["properties"]["protocol"].erase("enum");
  auto patched = OpenApiSpec::from_json(raw);
  auto t = parse_ok({{"services", {web_cluster_ip()}},
                     {"endpoints", {slice("web", {ready_at("10.0.0.1")}, kHttp)}}});
  t.frontends[0].id = 7;
  const json model = lb_service_list_model(t);
  auto schema = patched.response_schema("GET", "/service", 200);
  ASSERT_TRUE(schema && *schema);
  EXPECT_EQ(patched.validate(model, **schema), std::vector<std::string>{}) << model.dump();
  EXPECT_EQ(go_omitempty_violations(model), std::vector<std::string>{});
  EXPECT_EQ(model[0]["spec"]["id"], 7);
  EXPECT_EQ(model[0]["spec"]["frontend-address"]["protocol"], "TCP");
  EXPECT_EQ(model[0]["spec"]["backend-addresses"][0]["weight"], 100);
  EXPECT_EQ(model[0]["spec"]["backend-addresses"][0]["preferred"], true);
  EXPECT_EQ(model[0]["spec"]["flags"]["trafficPolicy"], "Cluster");
  // The validator is strict: a renamed field fails.
  json broken = model;
  broken[0]["spec"]["frontend"] = broken[0]["spec"]["frontend-address"];
  EXPECT_FALSE(patched.validate(broken, **schema).empty());
}

}  // namespace
}  // namespace cn::fakes::cilium
