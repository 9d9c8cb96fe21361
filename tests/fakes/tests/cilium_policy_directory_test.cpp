// Conformance of the fake agent's --static-cnp-path with cilium/cilium:
//   pkg/policy/directory/watcher.go, cell.go  (file rules, events, Fatal vs logged errors, the
//                                              always-"success" runtime metric)
//   pkg/k8s/apis/cilium.io/utils/utils.go     (namespace and cluster selector injection)
//   pkg/k8s/apis/cilium.io/v2/cnp_types.go    (Parse: name required, empty policy)
//   pkg/policy/api/selector.go                (label sources in selectors, matching)
//   pkg/policy/api/rule_validation.go         (rules that need enable-node-selector-labels,
//                                              enable-l7-proxy, enable-icmp-rules)
//   pkg/node/address.go GetAbsoluteNodeName    (healthz cluster.self carries the cluster name)
// and fsnotify's inotify backend (the watch mask: IN_MODIFY, not IN_CLOSE_WRITE).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/fakes/cilium/fake_cilium_agent.h"
#include "tests/fakes/cilium/policy_selector.h"
#include "tests/fakes/cilium/policy_translate.h"
#include "tests/fakes/http/raw_http_client.h"
#include "tests/fakes/tests/http_test_util.h"
#include "tests/support/child_process.h"

namespace cn::fakes {
namespace {

using namespace std::chrono_literals;
using cilium::EndpointSelector;
using cilium::InjectionOptions;
using cilium::parse_policy;
using nlohmann::json;
using testing::eventually;
using testing::TempDir;

// A CCNP: frontend may talk to backend; backend accepts frontend.
constexpr const char* kFrontendCcnp = R"(apiVersion: cilium.io/v2
kind: CiliumClusterwideNetworkPolicy
metadata:
  name: frontend-to-backend
spec:
  endpointSelector:
    matchLabels:
      nomad:nomad.job: backend
  ingress:
  - fromEndpoints:
    - matchLabels:
        nomad:nomad.job: frontend
    toPorts:
    - ports:
      - port: "8080"
        protocol: TCP
)";

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// As a careful writer does it: one IN_MOVED_TO, so the watcher reads the file exactly once
// (a write in place gives IN_CREATE and IN_MODIFY, each a read and maybe a revision).
void install_file(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string tmp = dir + "/." + name + ".tmp";
  write_file(tmp, text);
  std::filesystem::rename(tmp, dir + "/" + name);
}

json parse_yaml_policy(const std::string& yaml, const InjectionOptions& opts,
                       std::string* error = nullptr) {
  auto doc = cilium::yaml_to_json(yaml);
  EXPECT_TRUE(doc) << doc.error().message;
  auto p = parse_policy(*doc, opts);
  if (!p) {
    if (error) *error = p.error().message;
    return nullptr;
  }
  json rules = json::array();
  for (const auto& r : p->rules) rules.push_back(r.rule);
  return rules;
}

// ---- translation ----

TEST(CiliumPolicyTranslate, YamlScalarsFollowYaml11AndOnlyTheFirstDocumentCounts) {
  auto doc = cilium::yaml_to_json("a: yes\nb: \"yes\"\nc: 80\nd: '80'\ne: ~\nf: 1.5\n---\nx: 1\n");
  ASSERT_TRUE(doc);
  EXPECT_EQ(*doc, json::parse(R"({"a":true,"b":"yes","c":80,"d":"80","e":null,"f":1.5})"));
  EXPECT_EQ(*cilium::yaml_to_json(""), json(nullptr));
  EXPECT_EQ(*cilium::yaml_to_json(R"({"json": ["is", "yaml"]})"),
            json::parse(R"({"json":["is","yaml"]})"));
  EXPECT_FALSE(cilium::yaml_to_json("a: [1, 2\n"));
}

TEST(CiliumPolicyTranslate, DecodingChecksTheGoTypes) {
  EXPECT_TRUE(cilium::check_decodes(json(nullptr))) << "an empty file decodes";
  EXPECT_FALSE(cilium::check_decodes(json::array()));
  EXPECT_FALSE(cilium::check_decodes(json::parse(R"({"metadata":{"name":5}})")));
  EXPECT_FALSE(cilium::check_decodes(json::parse(R"({"spec":[]})")));
  // An unquoted port is a YAML integer, and PortProtocol.port is a Go string.
  auto unquoted =
      cilium::yaml_to_json("spec:\n  ingress:\n  - toPorts:\n    - ports:\n      - port: 80\n");
  ASSERT_TRUE(unquoted);
  auto st = cilium::check_decodes(*unquoted);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("ports.port"), std::string::npos) << st.error().message;
  EXPECT_FALSE(cilium::check_decodes(
      json::parse(R"({"spec":{"endpointSelector":{"matchLabels":{"app":true}}}})")));
  EXPECT_TRUE(cilium::check_decodes(
      json::parse(R"({"kind":"Anything","spec":{"unknownField":[1],"endpointSelector":{}}})")))
      << "unknown fields and any kind are fine";
}

TEST(CiliumPolicyTranslate, ParseErrorsAreSemantic) {
  std::string error;
  EXPECT_EQ(parse_yaml_policy("spec:\n  endpointSelector: {}\n", {}, &error), json(nullptr));
  EXPECT_EQ(error, "CiliumClusterwideNetworkPolicy must have name");
  parse_yaml_policy("metadata:\n  name: a\n", {}, &error);
  EXPECT_NE(error.find("empty policy"), std::string::npos);
  parse_yaml_policy("metadata:\n  name: a\nspec:\n  ingress: []\n", {}, &error);
  EXPECT_NE(error.find("EndpointSelector or NodeSelector"), std::string::npos);
  parse_yaml_policy(
      "metadata:\n  name: a\nspec:\n  endpointSelector:\n    matchExpressions:\n"
      "    - {key: app, operator: Like, values: [x]}\n",
      {}, &error);
  EXPECT_NE(error.find("Like"), std::string::npos);
  parse_yaml_policy("metadata:\n  name: a\n  namespace: ns\nspec:\n  nodeSelector: {}\n", {},
                    &error);
  EXPECT_NE(error.find("NodeSelector"), std::string::npos);
  EXPECT_TRUE(cilium::is_dns1123_subdomain("nomad-web.yaml"));
  EXPECT_FALSE(cilium::is_dns1123_subdomain("Nomad.yaml"));
  EXPECT_FALSE(cilium::is_dns1123_subdomain("nomad_web.yaml"));
  EXPECT_FALSE(cilium::is_dns1123_subdomain(".yaml"));
}

// Rule validation reads option.Config: with an option off, the rules that need it are refused
// with upstream's messages; on, they pass.
TEST(CiliumPolicyTranslate, OptionDependentRulesFollowTheAgentsFlags) {
  const std::string nodes =
      "metadata:\n  name: a\nspec:\n  endpointSelector: {}\n  ingress:\n"
      "  - fromNodes:\n    - matchLabels: {role: db}\n";
  const std::string l7 =
      "metadata:\n  name: a\nspec:\n  endpointSelector: {}\n  egress:\n  - toPorts:\n"
      "    - ports: [{port: '80', protocol: TCP}]\n      rules:\n        http: [{method: GET}]\n";
  const std::string icmp =
      "metadata:\n  name: a\nspec:\n  endpointSelector: {}\n  egressDeny:\n"
      "  - icmps: [{fields: [{type: 8}]}]\n";
  InjectionOptions defaults;
  std::string error;
  EXPECT_EQ(parse_yaml_policy(nodes, defaults, &error), json(nullptr));
  EXPECT_NE(error.find("FromNodes/ToNodes rules can only be applied when the "
                       "\"enable-node-selector-labels\" flag is set"),
            std::string::npos)
      << error;
  EXPECT_NE(parse_yaml_policy(l7, defaults), json(nullptr)) << "enable-l7-proxy is on by default";
  EXPECT_NE(parse_yaml_policy(icmp, defaults), json(nullptr)) << "enable-icmp-rules too";

  InjectionOptions flipped;
  flipped.flags.enable_node_selector_labels = true;
  flipped.flags.enable_l7_proxy = false;
  flipped.flags.enable_icmp_rules = false;
  EXPECT_NE(parse_yaml_policy(nodes, flipped), json(nullptr));
  EXPECT_EQ(parse_yaml_policy(l7, flipped, &error), json(nullptr));
  EXPECT_NE(error.find("L7 policy is not supported since L7 proxy is not enabled"),
            std::string::npos)
      << error;
  EXPECT_EQ(parse_yaml_policy(icmp, flipped, &error), json(nullptr));
  EXPECT_NE(error.find("\"enable-icmp-rules\" flag is set"), std::string::npos) << error;
}

// ---- injection (utils.go) ----

TEST(CiliumPolicyInjection, ClusterwidePeersGetNamespaceExistsAndTheSubjectIsKept) {
  json rules = parse_yaml_policy(kFrontendCcnp, {});
  ASSERT_EQ(rules.size(), 1u);
  EXPECT_EQ(rules[0]["endpointSelector"],
            json::parse(R"({"matchLabels":{"nomad:nomad.job":"backend"}})"));
  EXPECT_EQ(rules[0]["ingress"][0]["fromEndpoints"][0],
            json::parse(R"({"matchLabels":{"nomad:nomad.job":"frontend"},
              "matchExpressions":[{"key":"k8s:io.kubernetes.pod.namespace","operator":"Exists"}]})"));
  EXPECT_EQ(rules[0]["ingress"][0]["toPorts"][0]["ports"][0]["port"], "8080");
}

TEST(CiliumPolicyInjection, NamespacedPolicyScopesSubjectAndPeersToItsNamespace) {
  json rules = parse_yaml_policy(R"(metadata:
  name: web
  namespace: shop
spec:
  endpointSelector:
    matchLabels:
      app: web
  egress:
  - toEndpoints:
    - matchLabels:
        app: db
    - matchLabels:
        io.kubernetes.pod.namespace: other
)",
                                 {});
  ASSERT_EQ(rules.size(), 1u);
  // A key without a source is "any:".
  EXPECT_EQ(rules[0]["endpointSelector"]["matchLabels"],
            json::parse(R"({"any:app":"web","k8s:io.kubernetes.pod.namespace":"shop"})"));
  EXPECT_EQ(rules[0]["egress"][0]["toEndpoints"][0]["matchLabels"],
            json::parse(R"({"any:app":"db","k8s:io.kubernetes.pod.namespace":"shop"})"));
  // A peer that names the namespace key keeps its own.
  EXPECT_EQ(rules[0]["egress"][0]["toEndpoints"][1]["matchLabels"],
            json::parse(R"({"any:io.kubernetes.pod.namespace":"other"})"));
}

TEST(CiliumPolicyInjection, From119PeersAlsoGetTheClusterButSubjectsDoNot) {
  json rules = parse_yaml_policy(kFrontendCcnp, InjectionOptions{"east", {}});
  EXPECT_EQ(rules[0]["ingress"][0]["fromEndpoints"][0]["matchLabels"],
            json::parse(R"({"nomad:nomad.job":"frontend",
                            "k8s:io.cilium.k8s.policy.cluster":"east"})"));
  EXPECT_EQ(rules[0]["endpointSelector"],
            json::parse(R"({"matchLabels":{"nomad:nomad.job":"backend"}})"));
  // Reserved peers are left alone entirely.
  json reserved = parse_yaml_policy(R"(metadata: {name: r}
spec:
  endpointSelector: {}
  ingress:
  - fromEndpoints:
    - matchLabels:
        reserved:host: ""
)",
                                    InjectionOptions{"east", {}});
  EXPECT_EQ(reserved[0]["ingress"][0]["fromEndpoints"][0],
            json::parse(R"({"matchLabels":{"reserved:host":""}})"));
}

// ---- matching (selector.go, LabelArray) ----

TEST(CiliumPolicySelector, SourcesAndOperators) {
  cilium::LabelMap labels =
      cilium::labels_from_model({"nomad:nomad.job=frontend", "k8s:io.kubernetes.pod.namespace=a"});
  auto sel = [](const char* text) { return *EndpointSelector::from_json(json::parse(text)); };
  EXPECT_TRUE(sel(R"({"matchLabels":{"nomad:nomad.job":"frontend"}})").matches(labels));
  EXPECT_TRUE(sel(R"({"matchLabels":{"any:nomad.job":"frontend"}})").matches(labels));
  EXPECT_TRUE(sel(R"({"matchLabels":{"nomad.job":"frontend"}})").matches(labels));
  EXPECT_FALSE(sel(R"({"matchLabels":{"k8s:nomad.job":"frontend"}})").matches(labels));
  EXPECT_FALSE(sel(R"({"matchLabels":{"nomad:nomad.job":"backend"}})").matches(labels));
  EXPECT_TRUE(sel(R"({"matchExpressions":[{"key":"nomad:nomad.job","operator":"In",
                      "values":["x","frontend"]}]})")
                  .matches(labels));
  EXPECT_TRUE(sel(R"({"matchExpressions":[{"key":"nomad.job","operator":"NotIn",
                      "values":["x"]}]})")
                  .matches(labels));
  EXPECT_TRUE(sel(R"({"matchExpressions":[{"key":"k8s:io.kubernetes.pod.namespace",
                      "operator":"Exists"}]})")
                  .matches(labels));
  EXPECT_FALSE(sel(R"({"matchExpressions":[{"key":"nomad.job","operator":"DoesNotExist"}]})")
                   .matches(labels));
  EXPECT_TRUE(sel("{}").matches(labels)) << "an empty selector selects everything";
}

// ---- the watcher, in process ----

class CiliumPolicyDirectory : public ::testing::Test {
 protected:
  void start(CiliumVersion version = CiliumVersion::v1_17) {
    FakeCiliumAgentConfig cfg;
    cfg.socket_path = dir_.file("cilium.sock");
    cfg.static_cnp_path = policies_.path();
    cfg.version = version;
    cfg.cluster_name = "east";
    cfg.options = options_;
    cfg.on_fatal = [this](const std::string& m) {
      std::lock_guard lock(mu_);
      fatal_ = m;
    };
    agent_ = std::make_unique<FakeCiliumAgent>(cfg);
    agent_->start();
  }
  int endpoint(const std::string& container, std::vector<std::string> labels) {
    json body = {{"container-id", container},
                 {"container-interface-name", "eth0"},
                 {"addressing", {{"ipv4", "10.200.3." + std::to_string(++ip_)}}},
                 {"state", "waiting-for-identity"},
                 {"sync-build-endpoint", true},
                 {"labels", labels}};
    auto ep = agent_->create_endpoint(body);
    EXPECT_TRUE(ep) << (ep ? "" : ep.error().message);
    return ep ? (*ep)["id"].get<int>() : -1;
  }
  std::string path(const std::string& name) const { return policies_.file(name); }
  json policy(const std::string& file) const {
    const json all = agent_->policies();  // the loop must not outlive the temporary
    for (const auto& p : all["policies"]) {
      if (p["file"] == file) return p;
    }
    return nullptr;
  }
  bool loaded(const std::string& file) const { return !policy(file).is_null(); }
  std::uint64_t revision() const { return agent_->policies()["revision"]; }
  std::string fatal() {
    std::lock_guard lock(mu_);
    return fatal_;
  }
  bool logged(const std::string& needle) const {
    for (const auto& line : agent_->agent_log()) {
      if (line.find(needle) != std::string::npos) return true;
    }
    return false;
  }

  TempDir dir_;
  TempDir policies_;
  cilium::RuleValidationFlags options_;
  std::unique_ptr<FakeCiliumAgent> agent_;
  std::mutex mu_;
  std::string fatal_;
  int ip_ = 10;
};

TEST_F(CiliumPolicyDirectory, InitialScanLoadsValidYamlNamesOnly) {
  write_file(path("frontend.yaml"), kFrontendCcnp);
  write_file(path("ignored.yml"), "garbage: [");
  write_file(path("ignored.json"), "garbage: [");
  write_file(path("frontend.yaml.tmp"), "garbage: [");
  write_file(path("Bad_Name.yaml"), "garbage: [");  // logged, skipped, not fatal
  // One object per file: the agent decodes only the first YAML document, so a second one is
  // never read (https://github.com/cilium/cilium/issues/37724, docs/policies.md).
  write_file(path("two-docs.yaml"), std::string(kFrontendCcnp) + "---\ngarbage: [\n");
  start();
  EXPECT_TRUE(loaded("frontend.yaml"));
  EXPECT_TRUE(loaded("two-docs.yaml"));
  EXPECT_EQ(agent_->policies()["policies"].size(), 2u);
  EXPECT_TRUE(logged("CNP name parse validation failed\" name=Bad_Name.yaml"));
  EXPECT_TRUE(logged("Upserted policy to repository\" file=frontend.yaml"));
  EXPECT_EQ(fatal(), "");
}

TEST_F(CiliumPolicyDirectory, WriteReplacesRenameOntoYamlLoadsDeleteAndRenameAwayRemove) {
  start();
  const std::uint64_t r0 = revision();
  write_file(path("frontend.yaml"), kFrontendCcnp);
  ASSERT_TRUE(eventually([&] { return loaded("frontend.yaml"); }, 5s));
  EXPECT_GT(revision(), r0);

  // Replace by file: the second write's rules replace the first's.
  std::string v2 = kFrontendCcnp;
  v2.replace(v2.find("frontend\n    toPorts"), 8, "gateway");
  write_file(path("frontend.yaml"), v2);
  ASSERT_TRUE(eventually(
      [&] {
        json p = policy("frontend.yaml");
        return !p.is_null() &&
               p["rules"][0]["ingress"][0]["fromEndpoints"][0]["matchLabels"]["nomad:nomad.job"] ==
                   "gateway";
      },
      5s));

  // A temp name is ignored until it is renamed onto a .yaml name.
  write_file(path(".nomad-db.tmp"), kFrontendCcnp);
  write_file(path("db.yaml.part"), kFrontendCcnp);
  std::filesystem::rename(path(".nomad-db.tmp"), path("db.yaml"));
  ASSERT_TRUE(eventually([&] { return loaded("db.yaml"); }, 5s));
  EXPECT_FALSE(loaded("db.yaml.part"));

  // Delete removes; rename away removes too (and the new name is not a policy).
  const std::uint64_t before = revision();
  std::filesystem::remove(path("frontend.yaml"));
  ASSERT_TRUE(eventually([&] { return !loaded("frontend.yaml"); }, 5s));
  EXPECT_GT(revision(), before);
  std::filesystem::rename(path("db.yaml"), path("db.yaml.disabled"));
  ASSERT_TRUE(eventually([&] { return !loaded("db.yaml"); }, 5s));
  EXPECT_EQ(agent_->policies()["policies"].size(), 0u);
  EXPECT_EQ(fatal(), "");
  EXPECT_TRUE(logged("Deleted policy from repository\" file=frontend.yaml"));
}

TEST_F(CiliumPolicyDirectory, ARuntimeRuleErrorIsLoggedAndKeepsTheFilesRules) {
  write_file(path("frontend.yaml"), kFrontendCcnp);
  start();
  ASSERT_TRUE(loaded("frontend.yaml"));
  const std::uint64_t rev = revision();
  write_file(path("frontend.yaml"), "metadata:\n  name: x\nspec:\n  ingress: []\n");
  ASSERT_TRUE(
      eventually([&] { return logged("Failed to add network policy to policy engine"); }, 5s));
  EXPECT_TRUE(loaded("frontend.yaml")) << "the previous rules stay";
  EXPECT_EQ(revision(), rev);
  EXPECT_EQ(fatal(), "");
  // Upstream reports the event loop's outer error, always nil: still counted as a success.
  EXPECT_EQ(agent_->policies()["policy_change_total"]["fail"], 0);
}

TEST_F(CiliumPolicyDirectory, AnUntranslatableFileAtRuntimeIsFatal) {
  start();
  write_file(path("broken.yaml"), "spec: [unclosed\n");
  ASSERT_TRUE(eventually([&] { return !fatal().empty(); }, 5s));
  EXPECT_NE(fatal().find("Failed to translate policy yaml file to cnp object"), std::string::npos);
  EXPECT_NE(fatal().find("broken.yaml"), std::string::npos);
  EXPECT_TRUE(agent_->policies().contains("fatal"));
}

// fsnotify watches IN_MODIFY, not IN_CLOSE_WRITE: the agent reads after each write(2), so a
// file still being written in place is read half-way. The first half here is broken YAML.
TEST_F(CiliumPolicyDirectory, AHalfWrittenFileIsReadAndIsFatal) {
  start();
  const std::string text = kFrontendCcnp;
  const std::size_t half = text.find("  ingress:");
  std::FILE* f = std::fopen(path("frontend.yaml").c_str(), "w");
  ASSERT_NE(f, nullptr);
  // Stops inside a flow sequence: "[nomad" with no closing bracket.
  const std::string first = text.substr(0, half) + "  egress: [nomad";
  ASSERT_EQ(std::fwrite(first.data(), 1, first.size(), f), first.size());
  ASSERT_EQ(std::fflush(f), 0);
  ASSERT_TRUE(eventually([&] { return !fatal().empty(); }, 5s))
      << "the writer has not closed the file yet, and the agent already read it";
  std::fclose(f);
  EXPECT_NE(fatal().find("Failed to translate policy yaml file"), std::string::npos) << fatal();
}

TEST_F(CiliumPolicyDirectory, AStartupRuleErrorIsFatal) {
  write_file(path("noname.yaml"), "spec:\n  endpointSelector: {}\n");
  EXPECT_THROW(start(), std::runtime_error);
  EXPECT_NE(fatal().find("must have name"), std::string::npos);
}

// The crash loop a policy variable could cause: a fromNodes file on an agent without
// enable-node-selector-labels is only logged when it appears, and is fatal at the next start.
constexpr const char* kFromNodesCcnp = R"(apiVersion: cilium.io/v2
kind: CiliumClusterwideNetworkPolicy
metadata:
  name: db-from-nodes
spec:
  endpointSelector: {}
  ingress:
  - fromNodes:
    - matchLabels: {role: db}
)";

TEST_F(CiliumPolicyDirectory, AFlagDependentRuleIsLoggedAtRuntimeAndFatalAtTheNextStart) {
  start();
  write_file(path("nodes.yaml"), kFromNodesCcnp);
  ASSERT_TRUE(eventually([&] { return logged("enable-node-selector-labels"); }, 5s));
  EXPECT_TRUE(logged("Failed to add network policy to policy engine"));
  EXPECT_FALSE(loaded("nodes.yaml"));
  EXPECT_EQ(fatal(), "");
  agent_->stop();
  agent_.reset();
  EXPECT_THROW(start(), std::runtime_error);
  EXPECT_NE(fatal().find("enable-node-selector-labels"), std::string::npos) << fatal();
}

TEST_F(CiliumPolicyDirectory, WithTheOptionOnTheSameFileLoads) {
  options_.enable_node_selector_labels = true;
  write_file(path("nodes.yaml"), kFromNodesCcnp);
  start();
  EXPECT_TRUE(loaded("nodes.yaml"));
  EXPECT_EQ(fatal(), "");
}

TEST_F(CiliumPolicyDirectory, ReportsSubjectAndPeerEndpoints) {
  start(CiliumVersion::v1_20);
  // Only nomad: labels: the injected namespace/cluster requirements exclude it as a peer.
  const int bare = endpoint("bare", {"nomad:nomad.job=frontend"});
  const int frontend =
      endpoint("fe", {"nomad:nomad.job=frontend", "k8s:io.kubernetes.pod.namespace=default",
                      "k8s:io.cilium.k8s.policy.cluster=east"});
  const int wrong_cluster =
      endpoint("fe2", {"nomad:nomad.job=frontend", "k8s:io.kubernetes.pod.namespace=default",
                       "k8s:io.cilium.k8s.policy.cluster=west"});
  const int backend = endpoint("be", {"nomad:nomad.job=backend"});
  install_file(policies_.path(), "frontend.yaml", kFrontendCcnp);
  ASSERT_TRUE(eventually([&] { return loaded("frontend.yaml"); }, 5s));
  json p = policy("frontend.yaml");
  EXPECT_EQ(p["kind"], "CiliumClusterwideNetworkPolicy");
  EXPECT_EQ(p["subject_endpoints"], json::array({backend}));
  EXPECT_EQ(p["peer_endpoints"], json::array({frontend}));
  (void)bare;
  (void)wrong_cluster;

  // The endpoint's realized policy revision catches up with the repository (after the change,
  // as regeneration does upstream).
  const std::uint64_t repo_revision = agent_->policies()["revision"];
  EXPECT_TRUE(eventually(
      [&] {
        auto ep = agent_->endpoint(std::to_string(backend));
        return ep &&
               (*ep)["status"]["policy"]["realized"]["policy-revision"].get<std::uint64_t>() >=
                   repo_revision;
      },
      5s));

  // Over the control API, and /v1/policy is gone in the emulated 1.20.
  auto r =
      http_request(HttpTarget::unix_socket(dir_.file("cilium.sock")), "GET", "/_fake/policies");
  ASSERT_TRUE(r);
  EXPECT_EQ(json::parse(r->body)["policies"][0]["peer_endpoints"], json::array({frontend}));
  auto v1 = http_request(HttpTarget::unix_socket(dir_.file("cilium.sock")), "GET", "/v1/policy");
  ASSERT_TRUE(v1);
  EXPECT_EQ(v1->status, 404);
  auto health =
      http_request(HttpTarget::unix_socket(dir_.file("cilium.sock")), "GET", "/v1/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(json::parse(health->body)["cluster"]["self"], "east/fake-node");
}

TEST_F(CiliumPolicyDirectory, Before119NoClusterIsInjectedAndV1PolicyAnswers) {
  start(CiliumVersion::v1_17);
  const int frontend =
      endpoint("fe", {"nomad:nomad.job=frontend", "k8s:io.kubernetes.pod.namespace=default"});
  install_file(policies_.path(), "frontend.yaml", kFrontendCcnp);
  ASSERT_TRUE(eventually([&] { return loaded("frontend.yaml"); }, 5s));
  EXPECT_EQ(policy("frontend.yaml")["peer_endpoints"], json::array({frontend}));
  auto v1 = http_request(HttpTarget::unix_socket(dir_.file("cilium.sock")), "GET", "/v1/policy");
  ASSERT_TRUE(v1);
  ASSERT_EQ(v1->status, 200);
  const json body = json::parse(v1->body);
  EXPECT_EQ(body["revision"], revision());
  const json rules = json::parse(body["policy"].get<std::string>());
  ASSERT_EQ(rules.size(), 1u);
  EXPECT_EQ(rules[0]["labels"][0]["value"], "frontend.yaml") << "the file name is the identity";
}

// ---- the binary: logging.Fatal ends the process ----

using cn::fakes::testing::fake_agent_binary;

class CiliumPolicyDirectoryBinary : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::access(fake_agent_binary().c_str(), X_OK), 0)
        << "CN_BIN_DIR not set or binary missing";
  }
  std::unique_ptr<cn::testing::ChildProcess> launch() {
    cn::testing::ChildProcess::Options opts;
    opts.log_path = dir_.file("agent.log");
    return std::make_unique<cn::testing::ChildProcess>(
        std::vector<std::string>{fake_agent_binary(), "--socket", dir_.file("cilium.sock"),
                                 "--version", "1.17", "--static-cnp-path", policies_.path(),
                                 "--ready-file", dir_.file("ready")},
        cn::testing::current_environment(), opts);
  }
  TempDir dir_;
  TempDir policies_;
};

TEST_F(CiliumPolicyDirectoryBinary, ExitsAtStartupOnAnUntranslatableFile) {
  write_file(policies_.file("broken.yaml"), "spec: [unclosed\n");
  auto agent = launch();
  auto status = agent->wait_for(20s);
  ASSERT_TRUE(status) << "still running";
  EXPECT_EQ(status->exit_code, 1);
  EXPECT_FALSE(std::filesystem::exists(dir_.file("ready")));
  EXPECT_NE(agent->log().find("Failed to translate policy yaml file to cnp object"),
            std::string::npos)
      << agent->log();
}

TEST_F(CiliumPolicyDirectoryBinary, ExitsWhenAnUntranslatableFileAppearsLater) {
  write_file(policies_.file("good.yaml"), kFrontendCcnp);
  auto agent = launch();
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(dir_.file("ready")); }, 20s));
  // A rule error at runtime is only logged: the agent stays up.
  write_file(policies_.file("semantic.yaml"), "spec:\n  endpointSelector: {}\n");
  ASSERT_TRUE(eventually(
      [&] {
        return agent->log().find("Failed to add network policy to policy engine") !=
               std::string::npos;
      },
      10s));
  EXPECT_TRUE(agent->running());
  // Written in place: the first IN_MODIFY may already read it half-way; either way it is fatal.
  write_file(policies_.file("broken.yaml"), "metadata:\n  name: x\nspec: {endpointSelector: [\n");
  auto status = agent->wait_for(20s);
  ASSERT_TRUE(status) << "still running";
  EXPECT_EQ(status->exit_code, 1);
  EXPECT_NE(agent->log().find("level=fatal"), std::string::npos) << agent->log();
}

TEST_F(CiliumPolicyDirectoryBinary, ExitsAtStartupOnARuleError) {
  write_file(policies_.file("noname.yaml"), "spec:\n  endpointSelector: {}\n");
  auto agent = launch();
  auto status = agent->wait_for(20s);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->exit_code, 1);
}

}  // namespace
}  // namespace cn::fakes
