// The fake's ACL policies: the HCL a `nomad acl policy apply` takes, expanded and compiled the
// way hashicorp/nomad acl/policy.go and acl/acl.go do, then enforced per endpoint with Nomad's
// answers (403 "Permission denied", 500 for an allocation in an unreadable namespace, silent
// trimming of lists). Loads the shipped conf-examples/acl-policy.hcl, so a change there that
// Nomad would read differently shows up here.
#include <gtest/gtest.h>

#include "tests/fakes/nomad/acl_policy.h"
#include "tests/fakes/nomad/fake_nomad.h"
#include "tests/fakes/tests/nomad_test_util.h"
#include "tests/support/manual_clock.h"

namespace cn::fakes {
namespace {

using namespace nomad_testing;
using nlohmann::json;

std::string example_policy() {
  std::ifstream in(std::filesystem::path(CN_DEFAULT_SOURCE_DIR) / "conf-examples" /
                   "acl-policy.hcl");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

AclObject compile(std::initializer_list<std::string_view> texts) {
  std::vector<AclPolicy> policies;
  for (auto text : texts) {
    auto p = parse_acl_policy(text);
    EXPECT_TRUE(p) << text << ": " << (p ? "" : p.error().message);
    if (p) policies.push_back(*p);
  }
  return AclObject::compile(policies);
}

TEST(AclPolicyParse, TheShippedPolicyReadsAsNomadReadsIt) {
  const std::string text = example_policy();
  ASSERT_FALSE(text.empty());
  auto policy = parse_acl_policy(text);
  ASSERT_TRUE(policy) << policy.error().message;
  // Two blocks: read-job and the policy variables in every namespace (policies are read from
  // each namespace under the delegation rule, docs/policies.md "Delegation"), and "default",
  // which Nomad applies alone there, so it repeats them beside the services feature's table.
  ASSERT_EQ(policy->namespaces.size(), 2u);
  EXPECT_EQ(policy->namespaces[0].name, "*");
  EXPECT_EQ(policy->namespaces[1].name, "default");
  for (const auto& ns : policy->namespaces) {
    EXPECT_EQ(ns.capabilities, std::vector<std::string>{"read-job"}) << ns.name;
  }
  EXPECT_EQ(policy->node, "read");
  EXPECT_EQ(policy->agent, "") << "the example grants no agent access";

  AclObject acl = AclObject::compile({*policy});
  EXPECT_TRUE(acl.allow_ns_op("web", "read-job"));
  EXPECT_TRUE(acl.allow_ns_op("default", "read-job"));
  EXPECT_TRUE(acl.allow_ns_op("*", "read-job"));
  EXPECT_FALSE(acl.allow_ns_op("web", "list-jobs"));
  EXPECT_FALSE(acl.allow_ns_op("default", "submit-job"));
  EXPECT_TRUE(acl.allow_node_read());
  EXPECT_FALSE(acl.allow_agent_read());
  EXPECT_TRUE(variable_allowed(acl.variables(), "default", "cilium/policies/web", "read"));
  EXPECT_TRUE(variable_allowed(acl.variables(), "default", "cilium/policies/web", "list"));
  EXPECT_FALSE(variable_allowed(acl.variables(), "default", "cilium/policies/web", "write"));
  EXPECT_FALSE(variable_allowed(acl.variables(), "default", "nomad/jobs/web", "read"));
  EXPECT_TRUE(variable_allowed(acl.variables(), "web", "cilium/policies/web", "read"));
  EXPECT_FALSE(variable_allowed(acl.variables(), "web", "cilium/other/web", "read"));
  // The services feature: its table and reports in default only, the VIP a job reads in the
  // service's own namespace; nothing else is written.
  EXPECT_TRUE(
      variable_allowed(acl.variables(), "default", "cilium-nomad/services/vips/07", "write"));
  EXPECT_TRUE(
      variable_allowed(acl.variables(), "default", "cilium-nomad/services/nodes/n1", "list"));
  EXPECT_FALSE(variable_allowed(acl.variables(), "web", "cilium-nomad/services/vips/07", "write"));
  EXPECT_TRUE(variable_allowed(acl.variables(), "web", "cilium-nomad/vip/api", "write"));
  EXPECT_TRUE(variable_allowed(acl.variables(), "default", "cilium-nomad/vip/api", "destroy"));
  EXPECT_FALSE(variable_allowed(acl.variables(), "web", "cilium/policies/web", "write"));
}

TEST(AclPolicyParse, ShorthandsExpandAndReadImpliesListOnVariables) {
  AclObject acl = compile({R"(namespace "ro" { policy = "read" }
                              namespace "rw" { policy = "write" }
                              namespace "sc" { policy = "scale" }
                              namespace "v" {
                                variables { path "a/*" { capabilities = ["read"] } }
                              })"});
  for (const char* cap : {"list-jobs", "read-job", "read-job-scaling", "parse-job"}) {
    EXPECT_TRUE(acl.allow_ns_op("ro", cap)) << cap;
  }
  EXPECT_FALSE(acl.allow_ns_op("ro", "submit-job"));
  EXPECT_TRUE(acl.allow_ns_op("rw", "submit-job"));
  EXPECT_TRUE(acl.allow_ns_op("rw", "alloc-exec"));
  EXPECT_TRUE(acl.allow_ns_op("sc", "read-job"));
  EXPECT_FALSE(acl.allow_ns_op("sc", "list-jobs"));
  EXPECT_TRUE(variable_allowed(acl.variables(), "v", "a/b", "list"));
  EXPECT_FALSE(acl.allow_node_read()) << "no node block: no node access";
}

TEST(AclPolicyParse, StrictLikePolicyApply) {
  EXPECT_FALSE(parse_acl_policy(R"(namespace "x" { capabilities = ["read-everything"] })"));
  EXPECT_FALSE(parse_acl_policy(R"(namespace "x" { polcy = "read" })"));
  EXPECT_FALSE(parse_acl_policy(R"(namespace "bad name" { policy = "read" })"));
  EXPECT_FALSE(parse_acl_policy(R"(node { policy = "list" })"));
  EXPECT_FALSE(parse_acl_policy(R"(namespace "x" { variables { } })"));
  EXPECT_FALSE(
      parse_acl_policy(R"(namespace "x" { variables { path "/a" { capabilities = ["read"] } } })"));
  EXPECT_FALSE(parse_acl_policy(R"(namespace "x" { policy = "read" )"));
  EXPECT_FALSE(parse_acl_policy("# only a comment\n"));
  auto commented = parse_acl_policy(
      "/* block */ namespace \"x\" { // line\n capabilities = [\"read-job\",] }\n");
  EXPECT_TRUE(commented) << (commented ? "" : commented.error().message);
}

TEST(AclPolicyCompile, OnlyTheMostSpecificNamespaceRuleApplies) {
  AclObject acl = compile({R"(namespace "*" { policy = "read" }
                              namespace "web-*" { capabilities = ["list-jobs"] }
                              namespace "web-prod" { capabilities = ["submit-job"] })"});
  EXPECT_TRUE(acl.allow_ns_op("api", "read-job"));
  EXPECT_FALSE(acl.allow_ns_op("web-dev", "read-job")) << "web-* is closer than *";
  EXPECT_TRUE(acl.allow_ns_op("web-dev", "list-jobs"));
  EXPECT_FALSE(acl.allow_ns_op("web-prod", "list-jobs")) << "exact beats every glob";
  EXPECT_TRUE(acl.allow_ns_op("web-prod", "submit-job"));
}

TEST(AclPolicyCompile, PoliciesOfOneTokenUniteAndDenyWins) {
  AclObject acl = compile({R"(namespace "a" { capabilities = ["read-job"] }
                              node { policy = "read" }
                              agent { policy = "write" })",
                           R"(namespace "a" { capabilities = ["list-jobs"] }
                              namespace "b" { policy = "write" }
                              agent { policy = "deny" })",
                           R"(namespace "b" { policy = "deny" })"});
  EXPECT_TRUE(acl.allow_ns_op("a", "read-job"));
  EXPECT_TRUE(acl.allow_ns_op("a", "list-jobs"));
  EXPECT_FALSE(acl.allow_ns_op("b", "read-job"));
  EXPECT_TRUE(acl.allow_node_read());
  EXPECT_FALSE(acl.allow_agent_read());
}

class NomadAclPolicy : public ::testing::Test {
 protected:
  NomadAclPolicy() {
    for (const char* ns : {"default", "finance"}) {
      JobSpec job;
      job.id = "web";
      job.namespace_ = ns;
      EXPECT_TRUE(fake.register_job(job));
      PlaceRequest p;
      p.job_id = "web";
      p.namespace_ = ns;
      allocs.push_back(fake.place_alloc(p).value_or(""));
    }
    EXPECT_TRUE(fake.put_variable("default", "cilium/policies/web", {{"policy", "x"}}));
    EXPECT_TRUE(fake.put_variable("default", "other/secret", {{"k", "v"}}));
    auto token = token_with_policy("labeler", example_policy());
    EXPECT_TRUE(token) << (token ? "" : token.error().message);
    if (token) fake.add_token(*token);
    auto narrow = token_with_policy("narrow", R"(namespace "default" { policy = "read" })");
    EXPECT_TRUE(narrow);
    if (narrow) fake.add_token(*narrow);
    fake.set_acl_enabled(true);
  }
  HttpResponse as(const std::string& secret, const std::string& target) {
    return get(fake, target, {{"X-Nomad-Token", secret}});
  }

  ManualClock clock{wall_at(kRefStart)};
  FakeNomad fake{reference_config(&clock)};
  std::vector<std::string> allocs;
};

TEST_F(NomadAclPolicy, TheExamplePolicyAllowsEveryCallTheLabelerMakes) {
  const std::string node = std::string("/v1/node/") + kRefNode;
  for (const std::string& target :
       {"/v1/allocation/" + allocs[0], "/v1/allocation/" + allocs[1],
        std::string("/v1/job/web?namespace=finance"), std::string("/v1/job/web"), node,
        node + "/allocations", std::string("/v1/nodes"),
        std::string("/v1/vars?prefix=cilium/policies&namespace=default"),
        std::string("/v1/var/cilium/policies/web?namespace=default")}) {
    EXPECT_EQ(as("labeler", target).status, 200) << target;
  }
  EXPECT_EQ(json::parse(as("labeler", node + "/allocations").body).size(), 2u);
  StreamRun stream(fake, "/v1/event/stream?topic=Allocation&namespace=*",
                   {{"X-Nomad-Token", "labeler"}});
  EXPECT_EQ(stream.response().status, 200);
  EXPECT_TRUE(fake.acl_denials().empty()) << fake.acl_denials().front().reason;
}

TEST_F(NomadAclPolicy, CallsOutsideThePolicyAreDeniedAsNomadDeniesThemAndRecorded) {
  auto agent = as("labeler", "/v1/agent/self");
  EXPECT_EQ(agent.status, 403);
  EXPECT_EQ(agent.body, "Permission denied");
  EXPECT_EQ(as("labeler", "/v1/var/other/secret?namespace=default").status, 403);
  auto write =
      fake.handle(make_request("PUT", "/v1/var/cilium/policies/web?namespace=default",
                               {{"X-Nomad-Token", "labeler"}}, R"({"Items":{"policy":"y"}})"));
  EXPECT_EQ(write.status, 403);
  // Listing without the prefix: the entry outside the policy is left out, silently.
  auto all = as("labeler", "/v1/vars?namespace=default");
  EXPECT_EQ(all.status, 200);
  EXPECT_EQ(json::parse(all.body).size(), 1u);
  auto denials = fake.acl_denials();
  ASSERT_EQ(denials.size(), 4u);
  EXPECT_EQ(denials[0].route, "agent_self");
  EXPECT_EQ(denials[0].reason, "agent read");
  EXPECT_EQ(denials[1].route, "variable");
  EXPECT_EQ(denials[2].reason, "variables write on default/cilium/policies/web");
  EXPECT_TRUE(denials[3].silent);
}

TEST_F(NomadAclPolicy, ATokenWithLessIsDeniedWhereTheLabelerNeedsMore) {
  const std::string node = std::string("/v1/node/") + kRefNode;
  EXPECT_EQ(as("narrow", "/v1/allocation/" + allocs[0]).status, 200);
  auto hidden = as("narrow", "/v1/allocation/" + allocs[1]);
  EXPECT_EQ(hidden.status, 500);
  EXPECT_EQ(hidden.body, "Unknown allocation \"" + allocs[1] + "\"");
  EXPECT_EQ(as("narrow", "/v1/job/web?namespace=finance").status, 403);
  auto nodes = as("narrow", "/v1/nodes");
  EXPECT_EQ(nodes.status, 403);
  EXPECT_EQ(nodes.body, "Permission denied");
  EXPECT_EQ(as("narrow", node + "/allocations").status, 403);
  EXPECT_EQ(as("narrow", "/v1/var/cilium/policies/web?namespace=default").status, 403);
  EXPECT_EQ(json::parse(as("narrow", "/v1/vars?prefix=cilium/policies").body).size(), 0u);
  // "*" asks whether any namespace grants read-job: default does.
  StreamRun all(fake, "/v1/event/stream?topic=Allocation&namespace=*",
                {{"X-Nomad-Token", "narrow"}});
  EXPECT_EQ(all.response().status, 200);
  StreamRun finance(fake, "/v1/event/stream?topic=Allocation&namespace=finance",
                    {{"X-Nomad-Token", "narrow"}});
  EXPECT_EQ(finance.response().status, 403);
  EXPECT_EQ(fake.acl_denials().size(), 7u);
}

}  // namespace
}  // namespace cn::fakes
