#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/policy/policy_document.h"
#include "labeler/commands/policy_status_command.h"
#include "labeler/policy/policy_distributor.h"
#include "tests/support/eventually.h"
#include "tests/support/manual_clock.h"
#include "tests/support/sample_policies.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/labeler/in_memory_apis.h"

namespace cn::labeler::policy {
namespace {

using cn::testing::InMemoryNomad;
using cn::testing::NomadCall;
using cn::testing::read_file;
using cn::testing::TempDir;
using cn::testing::write_file;
using nlohmann::json;

using cn::testing::ccnp_web;

class PolicyDistributorTest : public ::testing::Test {
 protected:
  PolicyDistributorTest() {
    settings_.dir = dir_.path() + "/policies";
    std::filesystem::create_directory(settings_.dir);
    settings_.status_file = dir_.file("policy-status.json");
  }

  std::unique_ptr<PolicyDistributor> distributor() {
    return std::make_unique<PolicyDistributor>(settings_, nomad_, clock_, metrics_, calls_,
                                               nullptr);
  }
  // The file of a variable of the operator's namespace ("default").
  std::string file(const std::string& name) const {
    return settings_.dir + "/nomad-default." + name + ".yaml";
  }
  bool exists(const std::string& name) const { return std::filesystem::exists(file(name)); }
  json file_json(const std::string& name) const { return json::parse(read_file(file(name))); }
  void put(const std::string& path, const std::string& policy) {
    nomad_.put_variable("default", "cilium/policies/" + path, {{"policy", policy}});
  }
  void del(const std::string& path) {
    nomad_.delete_variable("default", "cilium/policies/" + path);
  }

  TempDir dir_;
  PolicySettings settings_;
  ManualClock clock_;
  InMemoryNomad nomad_;
  Metrics metrics_;
  CallRecorder calls_{metrics_};
};

TEST_F(PolicyDistributorTest, CreateUpdateAndDeleteInNomadReachTheDirectory) {
  auto d = distributor();
  put("web", ccnp_web());
  ASSERT_TRUE(d->reconcile());
  ASSERT_TRUE(exists("web"));
  json doc = file_json("web");
  EXPECT_EQ(doc["kind"], "CiliumClusterwideNetworkPolicy");
  EXPECT_EQ(doc["metadata"]["name"], "nomad-default.web");
  EXPECT_EQ(doc["metadata"]["annotations"][std::string(cn::policy::kAnnotationPath)],
            "cilium/policies/web");
  EXPECT_EQ(doc["spec"]["ingress"][0]["toPorts"][0]["ports"][0]["port"], "80");

  put("web", ccnp_web(8080));
  ASSERT_TRUE(d->reconcile());
  EXPECT_EQ(file_json("web")["spec"]["ingress"][0]["toPorts"][0]["ports"][0]["port"], "8080");

  del("web");
  ASSERT_TRUE(d->reconcile());
  EXPECT_FALSE(exists("web"));
  EXPECT_TRUE(d->status().policies.empty());
}

TEST_F(PolicyDistributorTest, NestedPathsBecomeDottedNames) {
  auto d = distributor();
  put("team-a/web", ccnp_web());
  ASSERT_TRUE(d->reconcile());
  EXPECT_TRUE(exists("team-a.web"));
}

TEST_F(PolicyDistributorTest, AnInvalidUpdateKeepsTheLastGoodFileAndSaysWhy) {
  auto d = distributor();
  put("web", ccnp_web());
  ASSERT_TRUE(d->reconcile());
  const std::string good = read_file(file("web"));

  put("web", ccnp_web(70000));
  ASSERT_TRUE(d->reconcile());
  EXPECT_EQ(read_file(file("web")), good);
  const auto rec = d->status().policies.at("default/cilium/policies/web");
  EXPECT_EQ(rec.state, PolicyState::invalid);
  EXPECT_NE(rec.reason.find("70000"), std::string::npos) << rec.reason;
  EXPECT_EQ(metrics_.policies_invalid().Value(), 1);
  EXPECT_EQ(metrics_.policy_errors(PolicyErrorReason::invalid).Value(), 1);

  // Refused once, not again at every pass while nothing changes.
  ASSERT_TRUE(d->reconcile());
  EXPECT_EQ(metrics_.policy_errors(PolicyErrorReason::invalid).Value(), 1);
}

// An agent whose GET /v1/config the test sets: nullopt answers an error (unreachable).
class OptionsReportingCilium : public cn::testing::InMemoryCilium {
 public:
  Result<cilium::ReportedAgentOptions> agent_options(Deadline) override {
    if (!reported) return fail(ErrorKind::transport, "connection refused");
    return *reported;
  }
  void node_selector_labels(std::optional<bool> on) {
    reported = cilium::ReportedAgentOptions{};
    (*reported)[static_cast<std::size_t>(cilium::AgentOption::node_selector_labels)] = on;
  }
  std::optional<cilium::ReportedAgentOptions> reported = cilium::ReportedAgentOptions{};
};

constexpr const char* kFromNodesDistributed = R"({"apiVersion": "cilium.io/v2",
  "kind": "CiliumClusterwideNetworkPolicy", "metadata": {"name": "x"},
  "spec": {"endpointSelector": {}, "ingress": [{"fromNodes": [{"matchLabels": {"role": "db"}}]}]}})";

TEST_F(PolicyDistributorTest, AnUpdateTheAgentCannotTakeKeepsTheLastGoodFileAndOthersLand) {
  OptionsReportingCilium agent;  // reports nothing: upstream defaults, node selectors off
  PolicyDistributor d(settings_, nomad_, clock_, metrics_, calls_, nullptr, &agent);
  put("web", ccnp_web());
  ASSERT_TRUE(d.reconcile());
  const std::string good = read_file(file("web"));
  put("web", kFromNodesDistributed);
  put("db", ccnp_web(5432));
  ASSERT_TRUE(d.reconcile());
  EXPECT_EQ(read_file(file("web")), good);
  EXPECT_TRUE(exists("db"));
  const auto rec = d.status().policies.at("default/cilium/policies/web");
  EXPECT_EQ(rec.state, PolicyState::unsupported);
  EXPECT_EQ(rec.option, "enable-node-selector-labels");
  EXPECT_NE(rec.reason.find("/spec/ingress/0/fromNodes"), std::string::npos) << rec.reason;
  EXPECT_EQ(metrics_.policies_unsupported("enable-node-selector-labels").Value(), 1);
  EXPECT_EQ(metrics_.policies_invalid().Value(), 0) << "valid elsewhere: not invalid";
  auto parsed = parse_policy_status(read_file(settings_.status_file));
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->policies.at("default/cilium/policies/web").state, PolicyState::unsupported);
  EXPECT_EQ(parsed->policies.at("default/cilium/policies/web").option,
            "enable-node-selector-labels");
}

TEST_F(PolicyDistributorTest, ChangedAgentOptionsRecheckWrittenAndHeldBackPolicies) {
  OptionsReportingCilium agent;
  agent.node_selector_labels(true);
  PolicyDistributor d(settings_, nomad_, clock_, metrics_, calls_, nullptr, &agent);
  put("nodes", kFromNodesDistributed);
  ASSERT_TRUE(d.reconcile());
  ASSERT_TRUE(exists("nodes"));

  // Restarted without the option: the file would stop it at its next start, so it goes.
  agent.node_selector_labels(false);
  ASSERT_TRUE(d.reconcile());
  EXPECT_FALSE(exists("nodes"));
  EXPECT_EQ(d.status().policies.at("default/cilium/policies/nodes").state,
            PolicyState::unsupported);

  // Unreachable: the last answer stands, nothing flips.
  agent.reported.reset();
  ASSERT_TRUE(d.reconcile());
  EXPECT_FALSE(exists("nodes"));

  agent.node_selector_labels(true);
  ASSERT_TRUE(d.reconcile());
  EXPECT_TRUE(exists("nodes"));
  EXPECT_EQ(d.status().policies.at("default/cilium/policies/nodes").state, PolicyState::applied);
  EXPECT_EQ(metrics_.policies_unsupported("enable-node-selector-labels").Value(), 0);
}

TEST_F(PolicyDistributorTest, TheOperatorsOverrideWinsOverTheAgent) {
  OptionsReportingCilium agent;
  agent.node_selector_labels(false);
  settings_
      .agent_option_overrides[static_cast<std::size_t>(cilium::AgentOption::node_selector_labels)] =
      true;
  PolicyDistributor d(settings_, nomad_, clock_, metrics_, calls_, nullptr, &agent);
  put("nodes", kFromNodesDistributed);
  ASSERT_TRUE(d.reconcile());
  EXPECT_TRUE(exists("nodes"));
}

TEST_F(PolicyDistributorTest, AFailedOrForbiddenListDeletesNothing) {
  auto d = distributor();
  put("web", ccnp_web());
  ASSERT_TRUE(d->reconcile());
  del("web");
  for (int code : {0, 500, 403}) {
    nomad_.fail_next(1, code);
    EXPECT_FALSE(d->reconcile()) << code;
    EXPECT_TRUE(exists("web")) << code;
  }
  EXPECT_EQ(metrics_.policy_errors(PolicyErrorReason::list).Value(), 3);
}

// A token that may list but not read the policies: the line names NOMAD_TOKEN and the ACL policy.
TEST_F(PolicyDistributorTest, AForbiddenReadNamesTheTokenAndTheAclPolicy) {
  std::ostringstream text;
  auto d = std::make_unique<PolicyDistributor>(
      settings_, nomad_, clock_, metrics_, calls_,
      std::make_shared<spdlog::logger>("t",
                                       std::make_shared<spdlog::sinks::ostream_sink_st>(text)));
  put("web", ccnp_web());
  for (int status : {401, 403}) {
    text.str("");
    nomad_.fail_call(NomadCall::variable, 1, status, "Permission denied");
    ASSERT_TRUE(d->reconcile());
    EXPECT_FALSE(exists("web"));
    const std::string line = text.str();
    EXPECT_NE(line.find("policy read failed namespace=default path=cilium/policies/web"),
              std::string::npos)
        << line;
    EXPECT_NE(line.find("NOMAD_TOKEN"), std::string::npos) << line;
    EXPECT_NE(line.find("conf-examples/acl-policy.hcl"), std::string::npos) << line;
  }
}

TEST_F(PolicyDistributorTest, AListThatLeavesAReadableVariableOutDeletesNothing) {
  auto d = distributor();
  put("web", ccnp_web());
  ASSERT_TRUE(d->reconcile());
  // As a token with `read` but without `list` on the path sees Nomad's list.
  nomad_.hidden_from_list.insert("cilium/policies/web");
  ASSERT_TRUE(d->reconcile());
  EXPECT_TRUE(exists("web"));
}

TEST_F(PolicyDistributorTest, OnlyNomadsVariableNotFoundProvesADeletion) {
  auto d = distributor();
  put("web", ccnp_web());
  ASSERT_TRUE(d->reconcile());
  del("web");
  // The list succeeds, then the direct read fails: 500, a 404 that is not Nomad's, a 403.
  const std::vector<std::pair<int, std::string>> doubts = {
      {500, "No cluster leader"}, {404, "404 page not found"}, {403, "Permission denied"}};
  for (const auto& [code, text] : doubts) {
    nomad_.fail_call(NomadCall::variable, 1, code, text);
    ASSERT_TRUE(d->reconcile());
    EXPECT_TRUE(exists("web")) << code << " " << text;
  }
  ASSERT_TRUE(d->reconcile());
  EXPECT_FALSE(exists("web"));
}

TEST_F(PolicyDistributorTest, FilesThatAreNotOursAreNeverTouched) {
  write_file(settings_.dir + "/other.yaml", "kind: CiliumNetworkPolicy\n");
  write_file(settings_.dir + "/nomad-hand.yaml", "{\"kind\": \"CiliumNetworkPolicy\"}\n");
  auto d = distributor();
  put("web", ccnp_web());
  ASSERT_TRUE(d->reconcile());
  EXPECT_EQ(read_file(settings_.dir + "/other.yaml"), "kind: CiliumNetworkPolicy\n");
  // Named like ours but without our annotations: kept, since nothing proves its variable gone.
  EXPECT_EQ(read_file(settings_.dir + "/nomad-hand.yaml"), "{\"kind\": \"CiliumNetworkPolicy\"}\n");
}

TEST_F(PolicyDistributorTest, ARestartFindsTheDirectoryCurrentAndReadsNoVariable) {
  put("web", ccnp_web());
  put("db", ccnp_web());
  ASSERT_TRUE(distributor()->reconcile());
  const auto before = std::filesystem::last_write_time(file("web"));
  const int reads = nomad_.calls(NomadCall::variable);

  auto restarted = distributor();
  ASSERT_TRUE(restarted->reconcile());
  EXPECT_EQ(nomad_.calls(NomadCall::variable), reads);
  EXPECT_EQ(std::filesystem::last_write_time(file("web")), before);
  EXPECT_EQ(restarted->status().policies.at("default/cilium/policies/db").state,
            PolicyState::applied);
}

TEST_F(PolicyDistributorTest, AnEditedOrRemovedFileIsRestoredAtTheNextPass) {
  auto d = distributor();
  put("web", ccnp_web());
  ASSERT_TRUE(d->reconcile());
  const std::string good = read_file(file("web"));
  std::filesystem::remove(file("web"));
  ASSERT_TRUE(d->reconcile());
  EXPECT_EQ(read_file(file("web")), good);
}

TEST_F(PolicyDistributorTest, NetreapRuleArraysBecomeClusterwidePolicies) {
  auto d = distributor();
  put("legacy", R"([{"endpointSelector": {"matchLabels": {"nomad:nomad.job": "web"}},
                     "ingress": [{"fromEntities": ["cluster"]}]}])");
  ASSERT_TRUE(d->reconcile());
  ASSERT_TRUE(exists("legacy"));
  json doc = file_json("legacy");
  EXPECT_EQ(doc["kind"], "CiliumClusterwideNetworkPolicy");
  ASSERT_TRUE(doc["specs"].is_array());
  EXPECT_EQ(doc["specs"].size(), 1u);
}

TEST_F(PolicyDistributorTest, SizeCountAndNameBoundsRefuseWithTheReason) {
  settings_.max_policies = 1;
  auto d = distributor();
  put("a", ccnp_web());
  put("b", ccnp_web());
  put("big", std::string(cn::policy::kMaxPolicyBytes + 1, ' '));
  put("Not_DNS", ccnp_web());
  nomad_.put_variable("default", "cilium/policies/noitem", {{"other", ccnp_web()}});
  ASSERT_TRUE(d->reconcile());
  const auto status = d->status();
  EXPECT_TRUE(exists("a"));
  EXPECT_FALSE(exists("b"));
  EXPECT_NE(status.policies.at("default/cilium/policies/b").reason.find("--policy-max-count"),
            std::string::npos);
  EXPECT_NE(status.policies.at("default/cilium/policies/big").reason.find("limit"),
            std::string::npos);
  EXPECT_EQ(status.policies.at("default/cilium/policies/Not_DNS").state, PolicyState::invalid);
  EXPECT_NE(status.policies.at("default/cilium/policies/noitem").reason.find("\"policy\""),
            std::string::npos);
}

TEST_F(PolicyDistributorTest, VariablesBesideThePrefixAreNeitherPoliciesNorInvalid) {
  auto d = distributor();
  put("web", ccnp_web());
  nomad_.put_variable("default", "cilium/policies-old/web", {{"policy", ccnp_web()}});
  nomad_.put_variable("default", "cilium/policiesx", {{"policy", ccnp_web()}});
  ASSERT_TRUE(d->reconcile());
  const auto status = d->status();
  EXPECT_EQ(status.policies.size(), 1U);
  EXPECT_TRUE(status.policies.contains("default/cilium/policies/web"));
  EXPECT_EQ(metrics_.policies_invalid().Value(), 0);
  EXPECT_EQ(metrics_.policy_errors(PolicyErrorReason::invalid).Value(), 0);
}

// Nomad takes an item of up to 64 KiB; pretty-printing once turned a 39 KB item into a 106 KB
// file. The file is compact JSON, about the item's size.
TEST_F(PolicyDistributorTest, ALargeItemNomadAcceptsIsWrittenCompact) {
  std::string yaml = R"(apiVersion: cilium.io/v2
kind: CiliumClusterwideNetworkPolicy
metadata:
  name: many
spec:
  endpointSelector:
    matchLabels:
      nomad:nomad.job: web
  ingress:
)";
  std::size_t rules = 0;
  for (; yaml.size() < 39000; ++rules) {
    yaml += "  - fromEndpoints:\n    - matchLabels:\n        nomad:nomad.job: client-" +
            std::to_string(rules) + "\n";
  }
  ASSERT_LT(yaml.size(), cn::policy::kMaxPolicyBytes);
  auto d = distributor();
  put("many", yaml);
  ASSERT_TRUE(d->reconcile());
  ASSERT_EQ(d->status().policies.at("default/cilium/policies/many").state, PolicyState::applied)
      << d->status().policies.at("default/cilium/policies/many").reason;
  const std::string written = read_file(file("many"));
  // JSON of this YAML is about as long as the YAML; the annotations add a few hundred bytes.
  EXPECT_LT(written.size(), yaml.size() + 1024);
  EXPECT_EQ(std::count(written.begin(), written.end(), '\n'), 1) << "one line";
  EXPECT_EQ(file_json("many")["spec"]["ingress"].size(), rules);
}

TEST_F(PolicyDistributorTest, StatusFileFeedsThePolicyStatusCommand) {
  auto d = distributor();
  put("web", ccnp_web());
  put("bad", ccnp_web(70000));
  ASSERT_TRUE(d->reconcile());
  auto table = render_policy_status(settings_.status_file, StatusView::table, clock_);
  ASSERT_TRUE(table) << table.error().message;
  EXPECT_NE(table->find("cilium/policies/web"), std::string::npos) << *table;
  EXPECT_NE(table->find("applied"), std::string::npos) << *table;
  EXPECT_NE(table->find("invalid: "), std::string::npos) << *table;
  auto as_json = render_policy_status(settings_.status_file, StatusView::json, clock_);
  ASSERT_TRUE(as_json);
  EXPECT_EQ(json::parse(*as_json)["policies"].size(), 2u);

  auto missing = render_policy_status(dir_.file("nope.json"), StatusView::table, clock_);
  ASSERT_FALSE(missing);
  EXPECT_FALSE(std::filesystem::exists(dir_.file("nope.json")));
}

// A blocking list is held by Nomad for up to wait + wait/16: a deadline shorter than that made
// every quiet watch fail and back off (found by bench/policy_bench.cpp).
TEST_F(PolicyDistributorTest, ABlockingListGetsADeadlineBeyondNomadsHold) {
  settings_.wait = std::chrono::seconds{300};
  settings_.resync_interval = std::chrono::seconds{0};
  auto d = distributor();
  std::jthread watch([&](std::stop_token st) { d->run(st); });
  ASSERT_TRUE(cn::testing::eventually([&] { return nomad_.variables_calls().size() >= 2; }));
  const auto calls = nomad_.variables_calls();
  watch.request_stop();
  EXPECT_EQ(calls[0].first, 0u);  // the full pass does not block
  EXPECT_GT(calls[1].first, 0u);
  EXPECT_GE(calls[1].second - clock_.now(),
            std::chrono::seconds{300} + std::chrono::seconds{300} / 16);
}

// ---- Delegation (docs/policies.md) ----------------------------------------------------------

const char* const kTeamCnp = R"({"apiVersion": "cilium.io/v2", "kind": "CiliumNetworkPolicy",
  "metadata": {"name": "x"NAMESPACE},
  "spec": {"endpointSelector": {"matchLabels": {"nomad:nomad.job": "web"}}, "ingress": [{}]}})";

std::string team_cnp(const std::string& ns = "") {
  std::string text = kTeamCnp;
  text.replace(text.find("NAMESPACE"), 9, ns.empty() ? "" : ", \"namespace\": \"" + ns + "\"");
  return text;
}

TEST_F(PolicyDistributorTest, ATeamNamespaceWritesOnlyItsOwnNamespacedPolicies) {
  std::ostringstream text;
  auto d = std::make_unique<PolicyDistributor>(
      settings_, nomad_, clock_, metrics_, calls_,
      std::make_shared<spdlog::logger>("t",
                                       std::make_shared<spdlog::sinks::ostream_sink_st>(text)));
  nomad_.put_variable("team-a", "cilium/policies/web", {{"policy", team_cnp()}});
  nomad_.put_variable("team-a", "cilium/policies/db", {{"policy", team_cnp("team-a")}});
  nomad_.put_variable("team-a", "cilium/policies/other", {{"policy", team_cnp("team-b")}});
  nomad_.put_variable("team-a", "cilium/policies/wide", {{"policy", ccnp_web()}});
  put("web", ccnp_web());  // the same path in the operator's namespace: another file
  ASSERT_TRUE(d->reconcile());

  const std::string team_web = settings_.dir + "/nomad-team-a.web.yaml";
  ASSERT_TRUE(std::filesystem::exists(team_web));
  const json written = json::parse(read_file(team_web));
  EXPECT_EQ(written["metadata"]["namespace"], "team-a") << "carried explicitly";
  EXPECT_EQ(written["metadata"]["name"], "nomad-team-a.web");
  EXPECT_EQ(written["metadata"]["annotations"][std::string(cn::policy::kAnnotationNamespace)],
            "team-a");
  EXPECT_TRUE(std::filesystem::exists(settings_.dir + "/nomad-team-a.db.yaml"));
  EXPECT_TRUE(exists("web"));
  EXPECT_EQ(file_json("web")["kind"], "CiliumClusterwideNetworkPolicy");
  EXPECT_FALSE(std::filesystem::exists(settings_.dir + "/nomad-team-a.other.yaml"));
  EXPECT_FALSE(std::filesystem::exists(settings_.dir + "/nomad-team-a.wide.yaml"));

  const auto status = d->status();
  EXPECT_EQ(status.policies.at("team-a/cilium/policies/web").state, PolicyState::applied);
  EXPECT_EQ(status.policies.at("team-a/cilium/policies/web").nomad_namespace, "team-a");
  const auto other = status.policies.at("team-a/cilium/policies/other");
  EXPECT_EQ(other.state, PolicyState::not_delegated);
  EXPECT_TRUE(other.reason.starts_with("/metadata/namespace: ")) << other.reason;
  const auto wide = status.policies.at("team-a/cilium/policies/wide");
  EXPECT_EQ(wide.state, PolicyState::not_delegated);
  EXPECT_TRUE(wide.reason.starts_with("/kind: ")) << wide.reason;
  EXPECT_EQ(metrics_.policy_errors(PolicyErrorReason::not_delegated).Value(), 2);
  EXPECT_EQ(metrics_.policies_invalid().Value(), 2);
  const std::string log = text.str();
  EXPECT_NE(log.find("policy not delegated to its namespace, not written namespace=team-a "
                     "path=cilium/policies/wide"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("pointer=/kind kept_file=false"), std::string::npos) << log;

  // A refused update keeps that variable's last good file; a second pass logs nothing new.
  const std::string good = read_file(team_web);
  nomad_.put_variable("team-a", "cilium/policies/web", {{"policy", team_cnp("default")}});
  ASSERT_TRUE(d->reconcile());
  ASSERT_TRUE(d->reconcile());
  EXPECT_EQ(read_file(team_web), good);
  EXPECT_EQ(d->status().policies.at("team-a/cilium/policies/web").state,
            PolicyState::not_delegated);
  EXPECT_EQ(d->status().policies.at("team-a/cilium/policies/web").file, team_web);
  EXPECT_EQ(metrics_.policy_errors(PolicyErrorReason::not_delegated).Value(), 3);

  // The status file round-trips the namespace; the table shows it.
  auto parsed = read_policy_status(settings_.status_file);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->policies.at("team-a/cilium/policies/wide").nomad_namespace, "team-a");
  auto table = render_policy_status(settings_.status_file, StatusView::wide, clock_);
  ASSERT_TRUE(table);
  EXPECT_NE(table->find("team-a"), std::string::npos) << *table;
  EXPECT_NE(table->find("not_delegated: /kind: "), std::string::npos) << *table;

  // Deleting a team's variable removes its file, proven by a read in its own namespace.
  nomad_.delete_variable("team-a", "cilium/policies/db");
  ASSERT_TRUE(d->reconcile());
  EXPECT_FALSE(std::filesystem::exists(settings_.dir + "/nomad-team-a.db.yaml"));
  EXPECT_TRUE(exists("web"));
}

// The previous release wrote nomad-<name>.yaml for the operator's namespace. Each such file is
// replaced by nomad-default.<name>.yaml, written before the old one goes, and only a file whose
// annotations name the variable is taken for its old copy.
TEST_F(PolicyDistributorTest, UpgradeRenamesThePreviousReleasesFilesWithoutAGap) {
  put("web", ccnp_web());
  put("team-a/web", ccnp_web(9090));
  const auto previous = [&](const std::string& name, const std::string& path) {
    const auto v = *nomad_.variable("default", "cilium/policies/" + path, Deadline{clock_.now()});
    auto object = cn::policy::policy_object_from_item(
        v.items.at("policy"), "nomad-" + name, {"default", v.meta.path, v.meta.modify_index});
    EXPECT_TRUE(object);
    write_file(settings_.dir + "/nomad-" + name + ".yaml", object->dump() + "\n");
  };
  previous("web", "web");
  previous("team-a.web", "team-a/web");  // the name team-a's own "web" now maps to
  // Named like the previous release's but annotated with another variable: not this one's.
  previous("stray", "web");
  nomad_.put_variable("team-a", "cilium/policies/web", {{"policy", team_cnp()}});

  // The read fails: nothing new is written, so the old file stays and is what the agent has.
  nomad_.fail_call(NomadCall::variable, 100, 500, "No cluster leader");
  auto d = distributor();
  ASSERT_TRUE(d->reconcile());
  EXPECT_TRUE(std::filesystem::exists(settings_.dir + "/nomad-web.yaml"));
  EXPECT_FALSE(exists("web"));
  nomad_.fail_call(NomadCall::variable, 0, 500, "");

  ASSERT_TRUE(d->reconcile());
  EXPECT_TRUE(exists("web"));
  EXPECT_FALSE(std::filesystem::exists(settings_.dir + "/nomad-web.yaml"));
  EXPECT_TRUE(exists("team-a.web"));
  EXPECT_EQ(file_json("team-a.web")["spec"]["ingress"][0]["toPorts"][0]["ports"][0]["port"],
            "9090");
  // team-a's variable waited one pass for its name, then got it.
  EXPECT_EQ(d->status().policies.at("team-a/cilium/policies/web").state, PolicyState::pending);
  ASSERT_TRUE(d->reconcile());
  EXPECT_EQ(d->status().policies.at("team-a/cilium/policies/web").state, PolicyState::applied);
  const json team = json::parse(read_file(settings_.dir + "/nomad-team-a.web.yaml"));
  EXPECT_EQ(team["kind"], "CiliumNetworkPolicy");
  EXPECT_EQ(team["metadata"]["namespace"], "team-a");
  // The stray file names a listed, readable variable: kept, never removed on a guess.
  EXPECT_TRUE(std::filesystem::exists(settings_.dir + "/nomad-stray.yaml"));
}

}  // namespace
}  // namespace cn::labeler::policy
