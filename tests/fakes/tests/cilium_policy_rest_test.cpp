// Conformance of the fake agent's REST policy import, PUT and DELETE /v1/policy, with
// cilium/cilium (Cilium <= 1.18; removed for 1.19):
//   api/v1/openapi.yaml      (the routes, the `policy` body as a JSON string, the Policy model)
//   daemon/cmd/policy.go     (putPolicy, deletePolicy: 400 without a body on undecodable rules,
//                             500 on a rule Sanitize refuses, 500 "policy not found" for labels
//                             that match nothing)
//   pkg/policy/repository.go (one revision per add, one per deletion that removed something)
// netreap imports its policies this way (shared/reference/netreap.md), and the policy bench
// measures that design against this fake.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "tests/fakes/cilium/fake_cilium_agent.h"
#include "tests/fakes/cilium/openapi_validator.h"
#include "tests/fakes/http/raw_http_client.h"
#include "tests/fakes/tests/http_test_util.h"

#ifndef CN_FAKES_OPENAPI_JSON
#define CN_FAKES_OPENAPI_JSON ""
#endif

namespace cn::fakes {
namespace {

using nlohmann::json;
using testing::TempDir;

const cilium::OpenApiSpec& spec() {
  static const cilium::OpenApiSpec s = [] {
    std::string path = CN_FAKES_OPENAPI_JSON;
    if (const char* src = std::getenv("CN_SOURCE_DIR")) {
      const std::string p = std::string(src) + "/tests/fakes/cilium/openapi.json";
      if (std::filesystem::exists(p)) path = p;
    }
    auto loaded = cilium::OpenApiSpec::load(path);
    if (!loaded) throw std::runtime_error(loaded.error().message);
    return *loaded;
  }();
  return s;
}

// One rule as netreap's users write them: a subject, a peer, and labels naming the policy.
json rule(const std::string& name, const std::string& subject_job, const std::string& peer_job) {
  return json{
      {"endpointSelector", {{"matchLabels", {{"nomad:nomad.job", subject_job}}}}},
      {"ingress",
       json::array({{{"fromEndpoints",
                      json::array({{{"matchLabels", {{"nomad:nomad.job", peer_job}}}}})}}})},
      {"labels", json::array({{{"key", "policy"}, {"value", name}, {"source", "netreap"}}})}};
}

class CiliumPolicyRest : public ::testing::Test {
 protected:
  void start(CiliumVersion version = CiliumVersion::v1_17) {
    FakeCiliumAgentConfig cfg;
    cfg.socket_path = dir_.file("cilium.sock");
    cfg.version = version;
    agent_ = std::make_unique<FakeCiliumAgent>(cfg);
    agent_->start();
  }
  RawHttpResponse call(const std::string& method, const std::string& target,
                       const std::string& body = "") {
    auto r = http_request(HttpTarget::unix_socket(dir_.file("cilium.sock")), method, target, body);
    if (!r) throw std::runtime_error(method + " " + target + ": " + r.error().message);
    return *r;
  }
  // netreap's client: the rules array, as text, inside a JSON string.
  RawHttpResponse put(const json& rules, const std::string& query = "") {
    return call("PUT", "/v1/policy" + query, json(rules.dump()).dump());
  }
  std::uint64_t revision() { return json::parse(call("GET", "/v1/policy").body)["revision"]; }
  json rules() {
    return json::parse(json::parse(call("GET", "/v1/policy").body)["policy"].get<std::string>());
  }
  void expect_conforms(const std::string& method, const RawHttpResponse& r) {
    auto schema = spec().response_schema(method, "/policy", r.status);
    ASSERT_TRUE(schema) << method << " " << r.status << " is not declared";
    if (!*schema) return;
    auto errors = spec().validate(json::parse(r.body), **schema);
    EXPECT_TRUE(errors.empty()) << method << " " << r.status << ": " << errors.front();
  }
  int endpoint(const std::string& container, const std::string& job) {
    json body = {{"container-id", container},
                 {"container-interface-name", "eth0"},
                 {"addressing", {{"ipv4", "10.200.4." + std::to_string(++ip_)}}},
                 {"state", "waiting-for-identity"},
                 {"sync-build-endpoint", true},
                 {"labels", json::array({"nomad:nomad.job=" + job})}};
    auto ep = agent_->create_endpoint(body);
    if (!ep) throw std::runtime_error("create_endpoint: " + ep.error().message);
    return (*ep)["id"].get<int>();
  }

  TempDir dir_;
  std::unique_ptr<FakeCiliumAgent> agent_;
  int ip_ = 0;
};

TEST_F(CiliumPolicyRest, PutImportsAllRulesInOneRevisionAndTheySelectEndpoints) {
  start();
  const int frontend = endpoint("fe", "frontend");
  const int backend = endpoint("be", "backend");
  const std::uint64_t before = revision();
  auto r = put(json::array({rule("a", "backend", "frontend"), rule("b", "db", "backend")}));
  ASSERT_EQ(r.status, 200) << r.body;
  expect_conforms("PUT", r);
  const json body = json::parse(r.body);
  EXPECT_EQ(body["revision"], before + 1) << "AddListLocked bumps once for the whole list";
  EXPECT_EQ(json::parse(body["policy"].get<std::string>()).size(), 2u);

  const json loaded = rules();
  ASSERT_EQ(loaded.size(), 2u);
  EXPECT_EQ(loaded[0]["labels"][0]["value"], "a") << "REST rules keep their own labels";
  const json report = agent_->policies();
  ASSERT_EQ(report["policies"].size(), 1u);
  EXPECT_EQ(report["policies"][0]["subject_endpoints"], json::array({backend}));
  EXPECT_EQ(report["policies"][0]["peer_endpoints"],
            json::array({std::min(frontend, backend), std::max(frontend, backend)}));
  EXPECT_EQ(agent_->count("PUT", "/policy"), 1);
}

TEST_F(CiliumPolicyRest, PutRefusalsLeaveTheRepositoryAlone) {
  start();
  const std::uint64_t before = revision();

  // The parameter is `type: string`: a bare array is a go-openapi parse error.
  auto bare = call("PUT", "/v1/policy", json::array({rule("a", "x", "y")}).dump());
  EXPECT_EQ(bare.status, 400);
  EXPECT_EQ(json::parse(bare.body)["message"],
            "parsing policy body from \"\" failed, because json: cannot unmarshal array into Go "
            "value of type string");
  auto empty = call("PUT", "/v1/policy", "");
  EXPECT_EQ(empty.status, 422);
  EXPECT_EQ(json::parse(empty.body)["code"], 602);
  EXPECT_EQ(json::parse(empty.body)["message"], "policy in body is required");

  // Rules that do not decode: PutPolicyInvalidPolicy, declared without a body.
  auto undecodable = call("PUT", "/v1/policy", json("[{").dump());
  EXPECT_EQ(undecodable.status, 400);
  EXPECT_TRUE(undecodable.body.empty()) << undecodable.body;
  auto wrong_type = put(json::array({{{"endpointSelector", "web"}}}));
  EXPECT_EQ(wrong_type.status, 400);

  // Sanitize refuses: 500 with the error as a JSON string (models.Error).
  auto insane = put(json::array({{{"ingress", json::array()}}}));
  EXPECT_EQ(insane.status, 500);
  expect_conforms("PUT", insane);
  EXPECT_EQ(json::parse(insane.body), "rule must have one of EndpointSelector or NodeSelector");

  EXPECT_EQ(revision(), before);
  EXPECT_TRUE(rules().empty());
}

TEST_F(CiliumPolicyRest, NetreapsDeleteAllThenReimportCostsTwoRevisions) {
  start();
  json all = json::array();
  for (int i = 0; i < 3; ++i) all.push_back(rule("p" + std::to_string(i), "web", "lb"));
  ASSERT_EQ(put(all).status, 200);
  const std::uint64_t loaded = revision();

  auto deleted = call("DELETE", "/v1/policy");
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  expect_conforms("DELETE", deleted);
  EXPECT_EQ(json::parse(deleted.body)["revision"], loaded + 1);
  EXPECT_TRUE(rules().empty()) << "between the two calls the node has no policy at all";
  ASSERT_EQ(put(all).status, 200);
  EXPECT_EQ(revision(), loaded + 2);
  EXPECT_EQ(rules().size(), 3u);

  // Deleting everything from an empty repository succeeds and changes nothing.
  ASSERT_EQ(call("DELETE", "/v1/policy").status, 200);
  const std::uint64_t emptied = revision();
  auto again = call("DELETE", "/v1/policy");
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(revision(), emptied);
}

TEST_F(CiliumPolicyRest, DeleteByLabelsAndReplaceWithLabels) {
  start();
  ASSERT_EQ(put(json::array({rule("a", "web", "lb"), rule("b", "db", "web")})).status, 200);
  const std::uint64_t loaded = revision();

  auto none = call("DELETE", "/v1/policy", json::array({"netreap:policy=zzz"}).dump());
  EXPECT_EQ(none.status, 500) << "the handler wraps the not-found error as a failure";
  EXPECT_EQ(json::parse(none.body), "policy not found");
  EXPECT_EQ(revision(), loaded);

  auto one = call("DELETE", "/v1/policy", json::array({"netreap:policy=a"}).dump());
  ASSERT_EQ(one.status, 200);
  EXPECT_EQ(revision(), loaded + 1);
  ASSERT_EQ(rules().size(), 1u);
  EXPECT_EQ(rules()[0]["labels"][0]["value"], "b");

  // No source in a select label matches any source.
  auto replaced = put(json::array({rule("c", "cache", "web")}), "?replace-with-labels=policy=b");
  ASSERT_EQ(replaced.status, 200);
  EXPECT_EQ(revision(), loaded + 3) << "one revision for the deletion, one for the add";
  ASSERT_EQ(rules().size(), 1u);
  EXPECT_EQ(rules()[0]["labels"][0]["value"], "c");

  // replace=true: rules carrying the same labels as an imported one go first.
  ASSERT_EQ(put(json::array({rule("c", "cache", "lb")}), "?replace=true").status, 200);
  ASSERT_EQ(rules().size(), 1u);
  EXPECT_EQ(rules()[0]["ingress"][0]["fromEndpoints"][0]["matchLabels"]["nomad:nomad.job"], "lb");
}

TEST_F(CiliumPolicyRest, GoneFrom119) {
  start(CiliumVersion::v1_20);
  EXPECT_EQ(put(json::array({rule("a", "web", "lb")})).status, 404);
  EXPECT_EQ(call("DELETE", "/v1/policy").status, 404);
  EXPECT_TRUE(agent_->policies()["policies"].empty());
}

}  // namespace
}  // namespace cn::fakes
