#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "common/state/state_store.h"
#include "labeler/commands/explain/explain.h"
#include "labeler/commands/explain/explain_verdict.h"
#include "labeler/commands/explain/policy_subjects.h"
#include "labeler/policy/policy_status.h"
#include "labeler/services/services_status.h"
#include "tests/support/alloc_ids.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/labeler/in_memory_apis.h"

namespace cn::labeler::explain {
namespace {

using cn::testing::InMemoryCilium;
using cn::testing::InMemoryNomad;
using cn::testing::kWebLabels;
using cn::testing::make_alloc;
using nlohmann::json;

using cn::testing::kAllocId;
constexpr const char* kOther = "4b1f0000-1111-2222-3333-444455556666";

class ExplainTest : public ::testing::Test {
 protected:
  ExplainTest() { settings_.state_file = dir_.file("state.json"); }

  void plugin_added(const std::string& id, std::optional<json> last_attempt = std::nullopt) {
    state::StateStore store({settings_.state_file}, system_clock(), nullptr);
    state::StateEntry entry = cn::testing::plugin_entry();
    if (last_attempt) {
      entry.last_attempt =
          state::LastAttempt{last_attempt->value("reason", ""), last_attempt->value("detail", ""),
                             last_attempt->value("at", "")};
    }
    ASSERT_TRUE(cn::testing::record_plugin_add(store, id, std::move(entry)));
  }

  // Runs explain and returns its exit code; text_ and json_ hold both renderings.
  int run(std::string_view query) {
    std::ostringstream text;
    std::ostringstream as_json;
    std::ostringstream err;
    int code = explain(query, false, settings_, nomad_, cilium_, system_clock(), text, err);
    int json_code = explain(query, true, settings_, nomad_, cilium_, system_clock(), as_json, err);
    EXPECT_EQ(code, json_code) << "text and JSON disagree";
    text_ = text.str();
    err_ = err.str();
    json_ = as_json.str().empty() ? json(nullptr) : json::parse(as_json.str());
    return code;
  }

  std::string verdict_kind() const { return json_["verdict"]["kind"].get<std::string>(); }

  cn::testing::TempDir dir_;
  InMemoryNomad nomad_;
  InMemoryCilium cilium_;
  ExplainSettings settings_;
  std::string text_;
  std::string err_;
  json json_;
};

TEST_F(ExplainTest, LabeledAllocationIsOk) {
  nomad_.put(make_alloc(kAllocId));
  auto ep = cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  cilium_.set_identity_labels(ep, kWebLabels);
  plugin_added(kAllocId);
  EXPECT_EQ(run(kAllocId), 0) << text_;
  EXPECT_EQ(verdict_kind(), "labeled");
  EXPECT_NE(text_.find("not looked at (give --policy-dir)"), std::string::npos) << text_;
  EXPECT_TRUE(json_["policies"].is_null());
  EXPECT_NE(text_.find("verdict     OK labeled"), std::string::npos) << text_;
  EXPECT_NE(text_.find("found by cni-attachment-id:" + std::string(kAllocId) + ":eth0"),
            std::string::npos)
      << text_;
  EXPECT_EQ(json_["endpoint"]["id"], ep);
  EXPECT_EQ(json_["derived_labels"], json(kWebLabels));
  EXPECT_EQ(json_["difference"]["missing"], json::array());
  EXPECT_EQ(json_["nomad"]["job"], "web");
  EXPECT_EQ(json_["state"]["ifname"], "eth0");
}

TEST_F(ExplainTest, UnlabeledAllocationShowsTheRecordedReasonAndTheFix) {
  nomad_.put(make_alloc(kAllocId));
  cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  plugin_added(kAllocId, json{{"reason", "nomad_unreachable"},
                              {"detail", "Nomad: connection refused"},
                              {"at", "2026-12-01T20:00:00Z"}});
  EXPECT_EQ(run(kAllocId), 1);
  EXPECT_EQ(verdict_kind(), "unlabeled");
  EXPECT_NE(text_.find("nomad_unreachable"), std::string::npos) << text_;
  EXPECT_NE(text_.find("missing "), std::string::npos) << text_;
  EXPECT_NE(text_.find("NOMAD_TOKEN"), std::string::npos) << "the fix for a Nomad reason\n"
                                                          << text_;
  EXPECT_EQ(json_["last_attempt"]["reason"], "nomad_unreachable");
  EXPECT_FALSE(json_["verdict"]["ok"].get<bool>());
}

TEST_F(ExplainTest, TheFixTheLabelerRecordedIsTheVerdictsFix) {
  nomad_.put(make_alloc(kAllocId));
  cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  plugin_added(kAllocId,
               json{{"reason", "label_write_refused"},
                    {"detail", "label write failed: 403; fix: enable the agent's API access"},
                    {"at", "2026-12-01T20:00:00Z"}});
  EXPECT_EQ(run(kAllocId), 1);
  EXPECT_EQ(json_["verdict"]["fix"], "enable the agent's API access");
}

TEST_F(ExplainTest, LabelsFilterTrapIsNamedWithItsFix) {
  nomad_.put(make_alloc(kAllocId));
  auto ep = cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  cilium_.set_filtered_labels(ep, kWebLabels);
  plugin_added(kAllocId);
  EXPECT_EQ(run(kAllocId), 1);
  EXPECT_EQ(verdict_kind(), "labels_filtered");
  EXPECT_NE(text_.find("--labels"), std::string::npos) << text_;
  EXPECT_NE(json_["verdict"]["fix"].get<std::string>().find("cilium-agent-flags.md"),
            std::string::npos);
}

TEST_F(ExplainTest, StoppedAllocationWithoutEndpointIsOk) {
  auto alloc = make_alloc(kAllocId, "web", "app", "complete");
  alloc.desired_status = "stop";
  nomad_.put(alloc);
  EXPECT_EQ(run(kAllocId), 0) << text_;
  EXPECT_EQ(verdict_kind(), "stopped");
  EXPECT_NE(text_.find("client status complete"), std::string::npos) << text_;
}

TEST_F(ExplainTest, StoppedAllocationWithALeftoverEndpointNeedsAFix) {
  nomad_.put(make_alloc(kAllocId, "web", "app", "failed"));
  cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  EXPECT_EQ(run(kAllocId), 1);
  EXPECT_EQ(verdict_kind(), "stopped");
  EXPECT_NE(text_.find("--gc-endpoints"), std::string::npos) << text_;
}

TEST_F(ExplainTest, AllocationUnknownToNomadWithAnEndpointIsAnOrphan) {
  cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  plugin_added(kAllocId);
  EXPECT_EQ(run(kAllocId), 1);
  EXPECT_EQ(verdict_kind(), "unknown_to_nomad");
  EXPECT_TRUE(json_["nomad"]["not_found"].get<bool>());
  EXPECT_NE(text_.find("unknown (404)"), std::string::npos) << text_;
}

TEST_F(ExplainTest, NomadUnreachableCannotTell) {
  nomad_.put(make_alloc(kAllocId));
  cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  nomad_.fail_next(100, 0);
  EXPECT_EQ(run(kAllocId), 1);
  EXPECT_EQ(verdict_kind(), "cannot_tell");
  EXPECT_NE(text_.find("nomad       unreachable"), std::string::npos) << text_;
}

TEST_F(ExplainTest, RunningAllocationWithoutEndpointPointsAtTheCniChain) {
  nomad_.put(make_alloc(kAllocId));
  plugin_added(kOther);
  EXPECT_EQ(run(kAllocId), 1);
  EXPECT_EQ(verdict_kind(), "no_endpoint");
  EXPECT_NE(text_.find("cilium.conflist"), std::string::npos) << text_;
  EXPECT_NE(text_.find("no entry"), std::string::npos) << text_;
}

TEST_F(ExplainTest, PrefixResolvesWhenUniqueAndIsRefusedWhenAmbiguous) {
  nomad_.put(make_alloc(kAllocId));
  auto ep = cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  cilium_.set_identity_labels(ep, kWebLabels);
  EXPECT_EQ(run("4b1f6c2e"), 0) << err_;
  EXPECT_EQ(json_["allocation"], kAllocId);

  plugin_added(kOther);
  EXPECT_EQ(run("4b1f"), 1);
  EXPECT_NE(err_.find("matches 2 allocations"), std::string::npos) << err_;
  EXPECT_EQ(run("ffff"), 1);
  EXPECT_NE(err_.find("no allocation on this node starts with"), std::string::npos) << err_;
}

TEST_F(ExplainTest, NeverWritesAndSaysWhenTheStateFileIsMissing) {
  settings_.state_file = dir_.file("missing/state.json");
  nomad_.put(make_alloc(kAllocId));
  auto ep = cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  cilium_.set_identity_labels(ep, kWebLabels);
  EXPECT_EQ(run(kAllocId), 0);
  EXPECT_NE(text_.find("no such file: " + settings_.state_file), std::string::npos) << text_;
  EXPECT_FALSE(std::filesystem::exists(dir_.file("missing")));
  EXPECT_EQ(cilium_.calls(cn::testing::CiliumCall::patch_endpoint), 0);
  EXPECT_EQ(cilium_.calls(cn::testing::CiliumCall::patch_labels), 0);
  EXPECT_EQ(cilium_.calls(cn::testing::CiliumCall::del), 0);
}

// Expected: a missing state file and a missing notification socket are said first, before the
// allocation's own lines, and before the "no allocation matches" of a prefix.
TEST_F(ExplainTest, SaysFirstWhenTheStateFileOrTheSocketIsMissing) {
  settings_.state_file = dir_.file("missing/state.json");
  settings_.socket_path = dir_.file("missing/labeler.sock");
  nomad_.put(make_alloc(kAllocId));
  cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  run(kAllocId);
  EXPECT_EQ(text_.rfind("node        state file " + settings_.state_file + " does not exist", 0),
            0u)
      << text_;
  const auto socket_line = text_.find("node        notification socket " + settings_.socket_path +
                                      " does not exist: the labeler is not running");
  EXPECT_NE(socket_line, std::string::npos) << text_;
  EXPECT_LT(socket_line, text_.find("allocation  ")) << text_;
  EXPECT_EQ(json_["node_problems"].size(), 2u) << json_.dump();

  EXPECT_EQ(run("ffff"), 1);
  EXPECT_EQ(err_.rfind("cilium-nomad-labeler: explain: state file " + settings_.state_file, 0), 0u)
      << err_;
  EXPECT_LT(err_.find("notification socket"), err_.find("no allocation on this node starts"))
      << err_;
}

// Expected: an allocation whose entry the plugin's DEL replaced by a tombstone is shown as
// removed, with when, not as never recorded; its prefix still resolves.
TEST_F(ExplainTest, TombstonedAllocationShowsWhenDelRemovedIt) {
  plugin_added(kAllocId);
  state::StateStore store({settings_.state_file}, system_clock(), nullptr);
  bool removed = false;
  ASSERT_TRUE(store.remove_entry(kAllocId, removed));
  ASSERT_TRUE(removed);
  auto alloc = make_alloc(kAllocId, "web", "app", "complete");
  alloc.desired_status = "stop";
  nomad_.put(alloc);
  run("4b1f6c2e");
  EXPECT_NE(text_.find("state       removed by DEL at 20"), std::string::npos) << text_;
  EXPECT_EQ(text_.find("never recorded"), std::string::npos) << text_;
  EXPECT_TRUE(json_["state"]["removed_by_del_at"].is_string()) << json_.dump();
}

// Expected: the daemon wrote meta labels that explain, run without --meta-labels, does not
// derive: the fix is to give explain the daemon's --meta-labels, not to wait for a relabel
// (which would change nothing).
TEST_F(ExplainTest, MetaLabelsTheDaemonWroteButExplainWasNotGivenAreNamedAsSuch) {
  nomad_.put(make_alloc(kAllocId));
  auto ep = cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  auto labels = kWebLabels;
  labels.push_back("nomad:team=payments");
  labels.push_back("nomad:tier=frontend");
  cilium_.set_identity_labels(ep, labels);
  plugin_added(kAllocId);
  EXPECT_EQ(run(kAllocId), 1);
  const std::string fix = json_["verdict"]["fix"].get<std::string>();
  EXPECT_NE(fix.find("--meta-labels"), std::string::npos) << fix;
  EXPECT_EQ(fix.find("next resync"), std::string::npos) << fix;
  EXPECT_NE(json_["verdict"]["summary"].get<std::string>().find("nomad:team=payments"),
            std::string::npos);

  // Given the same --meta-labels as the daemon, the endpoint is labeled.
  settings_.label_policy.meta_keys = {"team", "tier"};
  EXPECT_EQ(run(kAllocId), 0) << text_;
  EXPECT_EQ(verdict_kind(), "labeled");
}

TEST_F(ExplainTest, ListsTheDistributedPoliciesSelectingTheEndpoint) {
  settings_.policy_dir = dir_.file("policies");
  std::filesystem::create_directories(settings_.policy_dir);
  json selecting = {{"apiVersion", "cilium.io/v2"},
                    {"kind", "CiliumClusterwideNetworkPolicy"},
                    {"metadata", {{"name", "nomad-web"}}},
                    {"spec",
                     {{"endpointSelector", {{"matchLabels", {{"nomad:nomad.job", "web"}}}}},
                      {"ingress", json::array({json::object()})}}}};
  json other = selecting;
  other["metadata"]["name"] = "nomad-db";
  other["spec"]["endpointSelector"]["matchLabels"] = {{"nomad:nomad.job", "db"}};
  cn::testing::write_file(settings_.policy_dir + "/nomad-web.yaml", selecting.dump());
  cn::testing::write_file(settings_.policy_dir + "/nomad-db.yaml", other.dump());
  nomad_.put(make_alloc(kAllocId));
  auto ep = cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  cilium_.set_identity_labels(ep, kWebLabels);
  EXPECT_EQ(run(kAllocId), 0);
  ASSERT_EQ(json_["policies"].size(), 1U) << json_.dump(2);
  EXPECT_EQ(json_["policies"][0]["name"], "nomad-web");
  EXPECT_NE(text_.find("nomad-web (CiliumClusterwideNetworkPolicy)"), std::string::npos) << text_;
}

// A file the distributor wrote names its variable's namespace in its annotations.
TEST_F(ExplainTest, ADistributedPolicyNamesItsNomadNamespace) {
  settings_.policy_dir = dir_.file("policies");
  std::filesystem::create_directories(settings_.policy_dir);
  json team = {{"apiVersion", "cilium.io/v2"},
               {"kind", "CiliumNetworkPolicy"},
               {"metadata",
                {{"name", "nomad-default.web"},
                 {"namespace", "default"},
                 {"annotations",
                  {{"cilium-nomad/variable-namespace", "default"},
                   {"cilium-nomad/variable-path", "cilium/policies/web"},
                   {"cilium-nomad/modify-index", "7"}}}}},
               {"spec",
                {{"endpointSelector", {{"matchLabels", {{"nomad:nomad.job", "web"}}}}},
                 {"ingress", json::array({json::object()})}}}};
  cn::testing::write_file(settings_.policy_dir + "/nomad-default.web.yaml", team.dump());
  nomad_.put(make_alloc(kAllocId));
  auto ep = cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  cilium_.set_identity_labels(ep, kWebLabels);
  EXPECT_EQ(run(kAllocId), 0);
  ASSERT_EQ(json_["policies"].size(), 1U) << json_.dump(2);
  EXPECT_EQ(json_["policies"][0]["nomad_namespace"], "default");
  EXPECT_NE(text_.find("nomad-default.web (CiliumNetworkPolicy, from Nomad namespace default)"),
            std::string::npos)
      << text_;
}

TEST_F(ExplainTest, SaysWhichPoliciesTheNodeDoesNotEnforce) {
  settings_.policy_dir = dir_.file("policies");
  std::filesystem::create_directories(settings_.policy_dir);
  cn::testing::write_file(settings_.policy_dir + "/nomad-broken.yaml", "{not json");
  policy::PolicyStatus status;
  policy::PolicyRecord refused;
  refused.variable_path = "cilium/policies/big";
  refused.state = policy::PolicyState::invalid;
  refused.reason = "/spec: required";
  status.policies[refused.variable_path] = refused;
  policy::PolicyRecord applied = refused;
  applied.variable_path = "cilium/policies/web";
  applied.state = policy::PolicyState::applied;
  applied.reason.clear();
  status.policies[applied.variable_path] = applied;
  policy::PolicyRecord team = refused;
  team.nomad_namespace = "team-a";
  team.variable_path = "cilium/policies/wide";
  team.state = policy::PolicyState::not_delegated;
  team.reason = "/kind: not the operator's namespace";
  status.policies["team-a/" + team.variable_path] = team;
  cn::testing::write_file(policy::policy_status_path(settings_.state_file),
                          policy::to_text(status));
  nomad_.put(make_alloc(kAllocId));
  auto ep = cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  cilium_.set_identity_labels(ep, kWebLabels);
  EXPECT_EQ(run(kAllocId), 0);
  const json& not_applied = json_["policies_not_applied"];
  ASSERT_EQ(not_applied.size(), 3U) << json_.dump(2);
  EXPECT_EQ(not_applied[0]["state"], "unreadable");
  EXPECT_EQ(not_applied[1]["source"], "cilium/policies/big");
  EXPECT_EQ(not_applied[1]["reason"], "/spec: required");
  EXPECT_NE(text_.find("cilium/policies/big (invalid: /spec: required)"), std::string::npos)
      << text_;
  EXPECT_NE(text_.find("nomad-broken.yaml (unreadable: "), std::string::npos) << text_;
  EXPECT_EQ(text_.find("cilium/policies/web ("), std::string::npos) << "applied is not listed";
  // Each policy names the Nomad namespace of its variable.
  EXPECT_EQ(not_applied[2]["nomad_namespace"], "team-a");
  EXPECT_NE(text_.find("cilium/policies/wide in namespace team-a (not_delegated: /kind: "),
            std::string::npos)
      << text_;
}

TEST_F(ExplainTest, SaysOfWhichServicesTheAllocationIsABackendAndHowTheAgentIsFed) {
  nomad_.put(make_alloc(kAllocId));
  auto ep = cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  cilium_.set_identity_labels(ep, kWebLabels);
  EXPECT_EQ(run(kAllocId), 0);
  EXPECT_TRUE(json_["services"].is_null()) << "no status file: the feature is off";
  EXPECT_EQ(text_.find("services "), std::string::npos) << text_;

  ServicesStatus status;
  status.lb_target = "/var/run/cilium/nomad-services.json";
  ServiceStatus api;
  api.nomad_namespace = "default";
  api.name = "api";
  api.vip = "10.96.0.17";
  api.state = ServiceState::served;
  ServiceBackendStatus mine;
  mine.alloc_id = kAllocId;
  mine.address = "10.200.3.17";
  mine.state = ServiceBackendState::not_ready;
  mine.reason = "check api-alive: failure";
  ServiceBackendStatus other = mine;
  other.alloc_id = "0b1c2d3e-0000-4000-8000-000000000000";
  api.backends = {other, mine};
  status.services = {api};
  cn::testing::write_file(services_status_path(settings_.state_file), services_status_json(status));
  EXPECT_EQ(run(kAllocId), 0);
  EXPECT_NE(text_.find("services    default/api 10.96.0.17 not-ready: check api-alive: failure "
                       "(state file /var/run/cilium/nomad-services.json)"),
            std::string::npos)
      << text_;
  ASSERT_EQ(json_["services"]["backends"].size(), 1U) << json_.dump(2);
  EXPECT_EQ(json_["services"]["backends"][0]["vip"], "10.96.0.17");
}

// ---- selectors, judged as the agent translates them

labels::LabelSet web() {
  return labels::LabelSet::from_strings(kWebLabels);
}

TEST(PolicySubjectsTest, SourcesAndOperators) {
  EXPECT_TRUE(selector_matches(json::object(), web()));
  EXPECT_TRUE(selector_matches({{"matchLabels", {{"nomad.job", "web"}}}}, web()))
      << "no source is any source";
  EXPECT_TRUE(selector_matches({{"matchLabels", {{"any:nomad.job", "web"}}}}, web()));
  EXPECT_FALSE(selector_matches({{"matchLabels", {{"k8s:nomad.job", "web"}}}}, web()))
      << "another source";
  EXPECT_FALSE(selector_matches({{"matchLabels", {{"nomad:nomad.job", "db"}}}}, web()));
  auto expr = [](std::string key, std::string op, json values) {
    json req = {{"key", std::move(key)}, {"operator", std::move(op)}};
    if (!values.is_null()) req["values"] = std::move(values);
    return json{{"matchExpressions", json::array({req})}};
  };
  EXPECT_TRUE(selector_matches(expr("nomad:nomad.job", "In", {"db", "web"}), web()));
  EXPECT_FALSE(selector_matches(expr("nomad:nomad.job", "NotIn", {"web"}), web()));
  EXPECT_TRUE(selector_matches(expr("nomad:team", "NotIn", {"x"}), web())) << "absent key";
  EXPECT_TRUE(selector_matches(expr("nomad:nomad.group", "Exists", nullptr), web()));
  EXPECT_TRUE(selector_matches(expr("nomad:team", "DoesNotExist", nullptr), web()));
  EXPECT_FALSE(selector_matches(expr("nomad:nomad.job", "Bogus", {"web"}), web()))
      << "an unreadable selector selects nothing";
}

TEST(PolicySubjectsTest, NamespacedPolicyAlsoRequiresItsNamespace) {
  json cnp = {{"kind", "CiliumNetworkPolicy"},
              {"metadata", {{"name", "nomad-web"}, {"namespace", "default"}}},
              {"spec", {{"endpointSelector", json::object()}}}};
  EXPECT_TRUE(policy_selects(cnp, web()));
  cnp["metadata"]["namespace"] = "prod";
  EXPECT_FALSE(policy_selects(cnp, web()));
  json host = {{"kind", "CiliumClusterwideNetworkPolicy"},
               {"spec", {{"nodeSelector", json::object()}}}};
  EXPECT_FALSE(policy_selects(host, web())) << "host policies select nodes";
  json specs = {{"kind", "CiliumClusterwideNetworkPolicy"},
                {"specs", json::array({{{"endpointSelector", {{"matchLabels", {{"a", "b"}}}}}},
                                       {{"endpointSelector", nullptr}}})}};
  EXPECT_TRUE(policy_selects(specs, web())) << "a null selector selects every endpoint";
}

}  // namespace
}  // namespace cn::labeler::explain
