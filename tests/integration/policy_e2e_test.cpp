// Policy distribution end to end over real sockets: the fake Nomad's Variables API (loopback
// TCP), the labeler daemon with --policy-dir, and the fake Cilium agent watching that directory
// as its --static-cnp-path (inotify), with its selector injection and subject/peer reporting.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include "common/cilium/client/curl_cilium_client.h"
#include "common/nomad/client/curl_nomad_client.h"
#include "labeler/commands/policy_status_command.h"
#include "labeler/daemon/labeler_daemon.h"
#include "tests/fakes/cilium/fake_cilium_agent.h"
#include "tests/fakes/nomad/fake_nomad.h"
#include "tests/support/eventually.h"
#include "tests/support/manual_clock.h"
#include "tests/support/sample_policies.h"
#include "tests/support/temp_dir.h"

namespace cn::labeler {
namespace {

using nlohmann::json;
using testing::ccnp_web;
using testing::eventually;

constexpr const char* kCnpDefault = R"({"apiVersion": "cilium.io/v2",
  "kind": "CiliumNetworkPolicy",
  "metadata": {"name": "frontend-out", "namespace": "default"},
  "spec": {"endpointSelector": {"matchLabels": {"nomad:nomad.job": "frontend"}},
           "egress": [{"toEndpoints": [{"matchLabels": {"nomad:nomad.job": "web"}}]}]}})";

class PolicyE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    policy_dir_ = dir_.file("policies");
    std::filesystem::create_directories(policy_dir_);
    fakes::FakeCiliumAgentConfig ac;
    ac.socket_path = dir_.file("cilium.sock");
    ac.version = fakes::CiliumVersion::v1_20;  // injects the cluster into peer selectors too
    ac.static_cnp_path = policy_dir_;
    ac.identity_delay = std::chrono::milliseconds{10};
    agent_ = std::make_unique<fakes::FakeCiliumAgent>(ac);
    agent_->start();
    nomad_ = std::make_unique<fakes::FakeNomad>();
    ASSERT_TRUE(nomad_->start());
    for (const char* job : {"web", "frontend"}) {
      fakes::JobSpec spec;
      spec.id = job;
      spec.groups.push_back(fakes::GroupSpec{});
      ASSERT_TRUE(nomad_->register_job(spec));
    }
    nomad::NomadClientConfig nc;
    nc.address = nomad_->address();
    auto client = nomad::CurlNomadClient::create(nc);
    ASSERT_TRUE(client);
    nomad_client_ = std::move(*client);
    cilium::CiliumClientConfig cc;
    cc.socket_path = ac.socket_path;
    cilium_client_ = std::make_unique<cilium::CurlCiliumClient>(cc);
  }

  void TearDown() override {
    if (daemon_) daemon_->stop();
    if (agent_) agent_->stop();
    if (nomad_) nomad_->stop();
  }

  void start_daemon(cilium::ReportedAgentOptions overrides = {}) {
    DaemonConfig config;
    config.policies.agent_option_overrides = overrides;
    config.socket_path = dir_.file("run/labeler.sock");
    config.state_file = dir_.file("run/state.json");
    config.resync_interval = std::chrono::seconds{0};
    config.watch = WatchMode::kNone;
    config.metrics_addr = "";
    config.policies.dir = policy_dir_;
    config.policies.status_file = dir_.file("run/policy-status.json");
    config.policies.audit_file = dir_.file("run/policy-audit.json");
    config.policies.wait = std::chrono::seconds{5};
    daemon_ = std::make_unique<LabelerDaemon>(config, *nomad_client_, *cilium_client_,
                                              system_clock(), nullptr);
    std::stop_source never;
    ASSERT_TRUE(daemon_->start(never.get_token()));
  }

  // An allocation of `job` on this node with the endpoint cilium-cni would have created; the
  // daemon's first reconcile labels it.
  long long endpoint_of(const std::string& job, const std::string& ip) {
    fakes::PlaceRequest req;
    req.job_id = job;
    auto id = nomad_->place_alloc(req);
    EXPECT_TRUE(id);
    EXPECT_TRUE(nomad_->set_network_status(*id, {ip, "", "eth0"}));
    auto ep = agent_->create_endpoint({{"container-id", *id},
                                       {"container-interface-name", "eth0"},
                                       {"interface-name", "lxc" + id->substr(0, 8)},
                                       {"addressing", {{"ipv4", ip}}},
                                       {"state", "waiting-for-identity"},
                                       {"sync-build-endpoint", true}});
    EXPECT_TRUE(ep) << (ep ? "" : ep.error().message);
    return ep ? ep->value("id", -1LL) : -1;
  }

  void put(const std::string& name, const std::string& policy) {
    ASSERT_TRUE(nomad_->put_variable("default", "cilium/policies/" + name, {{"policy", policy}}));
  }
  std::string file(const std::string& name) const {
    return policy_dir_ + "/nomad-default." + name + ".yaml";
  }
  // The agent's view of one loaded file, or null: `name` of a variable in the operator's
  // namespace, or "<namespace>.<name>" with a dot.
  json loaded(const std::string& name) const {
    const std::string stem = name.find('.') == std::string::npos ? "default." + name : name;
    const json report = agent_->policies();
    for (const auto& p : report["policies"]) {
      if (p["file"] == "nomad-" + stem + ".yaml") return p;
    }
    return nullptr;
  }
  bool agent_alive() const { return !agent_->policies().contains("fatal"); }
  // A new agent process on the same directory: it re-reads every file, and a rule it refuses is
  // fatal there (start() throws).
  void restart_agent(bool node_selector_labels) {
    auto ac = agent_->config();
    agent_->stop();
    agent_.reset();
    ac.options.enable_node_selector_labels = node_selector_labels;
    agent_ = std::make_unique<fakes::FakeCiliumAgent>(ac);
    agent_->start();
  }
  std::optional<policy::PolicyRecord> record(const std::string& name) const {
    auto status = daemon_->policies()->status().policies;
    auto it = status.find("default/cilium/policies/" + name);
    if (it == status.end()) return std::nullopt;
    return it->second;
  }
  std::optional<policy::PolicyRecord> team_record(const std::string& name) const {
    auto status = daemon_->policies()->status().policies;
    auto it = status.find("team-a/cilium/policies/" + name);
    if (it == status.end()) return std::nullopt;
    return it->second;
  }

  testing::TempDir dir_;
  std::string policy_dir_;
  std::unique_ptr<fakes::FakeCiliumAgent> agent_;
  std::unique_ptr<fakes::FakeNomad> nomad_;
  std::unique_ptr<nomad::NomadApi> nomad_client_;
  std::unique_ptr<cilium::CurlCiliumClient> cilium_client_;
  std::unique_ptr<LabelerDaemon> daemon_;
};

TEST_F(PolicyE2E, APolicyFromNomadSelectsNomadEndpointsAsSubjectsAndAsPeers) {
  const long long web = endpoint_of("web", "10.200.1.1");
  const long long frontend = endpoint_of("frontend", "10.200.1.2");
  start_daemon();
  put("web", ccnp_web(8080));
  put("frontend-out", kCnpDefault);
  ASSERT_TRUE(eventually([&] {
    return !loaded("web").is_null() && !loaded("frontend-out").is_null() &&
           loaded("web")["peer_endpoints"].size() == 1;
  })) << agent_->policies().dump(2);
  // The clusterwide policy: web is its subject; frontend matches the peer selector only because
  // it carries the namespace and cluster labels the agent injected into it.
  EXPECT_EQ(loaded("web")["subject_endpoints"], json::array({web}));
  EXPECT_EQ(loaded("web")["peer_endpoints"], json::array({frontend}));
  // The namespaced one (Nomad namespace default) works the same way in both directions.
  EXPECT_EQ(loaded("frontend-out")["subject_endpoints"], json::array({frontend}));
  EXPECT_EQ(loaded("frontend-out")["peer_endpoints"], json::array({web}));
}

// docs/policies.md "Audit before enforce": mode=audit puts the policy's subjects (the agent's
// own subject list of the file says which) in PolicyAuditMode; back to enforce turns it off
// again only where the labeler turned it on.
TEST_F(PolicyE2E, AuditModeReachesTheSubjectsAndIsTurnedOffOnlyWhereTheLabelerTurnedItOn) {
  const long long web = endpoint_of("web", "10.200.1.1");
  const long long frontend = endpoint_of("frontend", "10.200.1.2");
  const long long by_hand = endpoint_of("web", "10.200.1.3");
  auto local = cilium::EndpointRef::local(by_hand);
  ASSERT_TRUE(local);
  // An operator's own audit, before the labeler runs: never ours to switch off.
  ASSERT_TRUE(cilium_client_->set_endpoint_options(
      *local, {{"PolicyAuditMode", "Enabled"}},
      Deadline{system_clock().now() + std::chrono::seconds{10}}));
  const auto audit_of = [&](long long id) -> std::string {
    const auto ep = agent_->endpoint(std::to_string(id));
    return ep ? ep->at("spec").at("options").value("PolicyAuditMode", "") : "gone";
  };
  start_daemon();
  ASSERT_TRUE(nomad_->put_variable("default", "cilium/policies/web",
                                   {{"policy", ccnp_web()}, {"mode", "audit"}}));
  ASSERT_TRUE(eventually([&] { return audit_of(web) == "Enabled"; })) << "web: " << audit_of(web);
  const json subjects = json::array({std::min(web, by_hand), std::max(web, by_hand)});
  EXPECT_TRUE(eventually([&] { return loaded("web")["subject_endpoints"] == subjects; }))
      << "the agent's own subjects of the file: " << loaded("web").dump();
  EXPECT_EQ(audit_of(frontend), "Disabled");
  ASSERT_TRUE(record("web"));
  EXPECT_EQ(record("web")->mode, "audit");
  ASSERT_TRUE(eventually([&] { return daemon_->policy_auditor()->record().claims.size() == 1; }));
  EXPECT_EQ(daemon_->policy_auditor()->record().claims[0].id, web);

  put("web", ccnp_web());  // the mode item removed: enforce
  ASSERT_TRUE(eventually([&] { return audit_of(web) == "Disabled"; })) << "web: " << audit_of(web);
  EXPECT_EQ(audit_of(by_hand), "Enabled") << "an audit the labeler did not set is never undone";
  EXPECT_EQ(audit_of(frontend), "Disabled");
  EXPECT_EQ(record("web")->mode, "enforce");
  EXPECT_TRUE(eventually([&] { return daemon_->policy_auditor()->record().claims.empty(); }));
}

TEST_F(PolicyE2E, UpdatesReachTheAgentAndAnInvalidOneIsRefusedWhileTheAgentStaysUp) {
  start_daemon();
  put("web", ccnp_web(8080));
  ASSERT_TRUE(eventually([&] { return !loaded("web").is_null(); }));
  put("web", ccnp_web(9090));
  ASSERT_TRUE(eventually([&] { return loaded("web").dump().find("9090") != std::string::npos; }));
  const json before = loaded("web");

  // A port out of range: the agent would refuse it; an unquoted port: the agent would exit.
  put("web", ccnp_web(70000));
  auto unquoted = ccnp_web(7070);
  unquoted.replace(unquoted.find("\"7070\""), 6, "7070");
  put("web", unquoted);
  ASSERT_TRUE(eventually([&] {
    auto status = daemon_->policies()->status().policies;
    auto it = status.find("default/cilium/policies/web");
    return it != status.end() && it->second.state == policy::PolicyState::invalid;
  }));
  EXPECT_EQ(loaded("web"), before);
  EXPECT_TRUE(agent_alive());
}

// Refused before any file is written (docs/policies.md): a misspelt field (the agent would drop
// it and allow every port), a path the agent's regexp refuses, and a namespace its endpoints do
// not carry as a label value, each with its pointer; none reaches the directory, and a good policy
// beside them still does.
TEST_F(PolicyE2E, MisspeltFieldsBadRegexesAndUnlabelableNamespacesNeverReachTheAgent) {
  start_daemon();
  std::string typo = ccnp_web(8080);
  typo.replace(typo.find("toPorts"), 7, "toPortz");
  std::string regex = R"({"apiVersion": "cilium.io/v2", "kind": "CiliumClusterwideNetworkPolicy",
    "metadata": {"name": "x"}, "spec": {"endpointSelector": {}, "ingress": [{"toPorts": [{
    "ports": [{"port": "80", "protocol": "TCP"}], "rules": {"http": [{"path": "/["}]}}]}]}})";
  std::string ns = kCnpDefault;
  ns.replace(ns.find("\"default\""), 9, "\"payments-\"");
  put("typo", typo);
  put("regex", regex);
  put("ns", ns);
  put("ok", ccnp_web(8080));
  ASSERT_TRUE(eventually([&] { return !loaded("ok").is_null(); }));
  const std::map<std::string, std::string> pointers = {
      {"typo", "toPortz: unknown field"},
      {"regex", "/spec/ingress/0/toPorts/0/rules/http/0/path: "},
      {"ns", "/metadata/namespace: namespace \"payments-\""}};
  ASSERT_TRUE(eventually([&] {
    auto status = daemon_->policies()->status().policies;
    for (const auto& [name, pointer] : pointers) {
      auto it = status.find("default/cilium/policies/" + name);
      if (it == status.end() || it->second.state != policy::PolicyState::invalid) return false;
    }
    return true;
  }));
  auto status = daemon_->policies()->status().policies;
  for (const auto& [name, pointer] : pointers) {
    EXPECT_NE(status["default/cilium/policies/" + name].reason.find(pointer), std::string::npos)
        << status["default/cilium/policies/" + name].reason;
    EXPECT_FALSE(std::filesystem::exists(file(name))) << name;
    EXPECT_TRUE(loaded(name).is_null()) << name;
  }
  EXPECT_TRUE(agent_alive());
}

TEST_F(PolicyE2E, DeletingTheVariableRemovesThePolicyButNomadTroubleDeletesNothing) {
  start_daemon();
  put("web", ccnp_web(8080));
  put("db", ccnp_web(5432));
  ASSERT_TRUE(eventually([&] { return !loaded("web").is_null() && !loaded("db").is_null(); }));

  // Every direct read refused (a token without read, an outage): a list without "db" proves
  // nothing.
  nomad_->fail_next(1000, 403, "/v1/var/");
  nomad_->delete_variable("default", "cilium/policies/db");
  put("web", ccnp_web(8081));  // wakes the list; its read fails too
  ASSERT_TRUE(eventually([&] {
    for (const auto& r : nomad_->requests()) {
      if (r.target.starts_with("/v1/var/cilium/policies/db") && r.status == 403) return true;
    }
    return false;
  }));
  EXPECT_TRUE(std::filesystem::exists(file("db")));
  nomad_->clear_faults();

  ASSERT_TRUE(eventually([&] { return loaded("db").is_null(); }));
  EXPECT_FALSE(std::filesystem::exists(file("db")));
  EXPECT_FALSE(loaded("web").is_null());
}

TEST_F(PolicyE2E, NoReaderEverSeesAPartialFileAcrossAThousandUpdates) {
  start_daemon();
  put("web", ccnp_web(1));
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(file("web")); }));
  std::atomic<bool> done{false};
  std::atomic<int> reads{0};
  std::atomic<int> partial{0};
  std::thread reader([&] {
    while (!done) {
      std::ifstream in(file("web"));
      std::stringstream text;
      text << in.rdbuf();
      if (!json::accept(text.str())) ++partial;
      ++reads;
    }
  });
  // Each update waits until the reader has read once more, so the reads overlap the whole run
  // of updates however fast the distributor coalesces them (a bare count raced the machine).
  bool paced = true;
  for (int port = 2; port <= 1000 && paced; ++port) {
    const int before = reads;
    put("web", ccnp_web(port));
    paced = eventually([&] { return reads > before; });
  }
  const bool applied = eventually(
      [&] {
        std::ifstream in(file("web"));
        std::stringstream text;
        text << in.rdbuf();
        return text.str().find("\"1000\"") != std::string::npos;
      },
      std::chrono::seconds{60});
  done = true;
  reader.join();
  ASSERT_TRUE(paced) << "the reader stopped reading";
  ASSERT_TRUE(applied);
  EXPECT_EQ(partial, 0) << "of " << reads << " reads";
  EXPECT_GT(reads, 100);
  EXPECT_TRUE(agent_alive());
}

TEST_F(PolicyE2E, ALabelerRestartConvergesTheDirectory) {
  start_daemon();
  put("web", ccnp_web(8080));
  put("old", ccnp_web(1234));
  ASSERT_TRUE(eventually([&] { return !loaded("web").is_null() && !loaded("old").is_null(); }));
  daemon_->stop();
  daemon_.reset();

  nomad_->delete_variable("default", "cilium/policies/old");
  put("new", ccnp_web(4321));
  start_daemon();
  ASSERT_TRUE(eventually([&] { return loaded("old").is_null() && !loaded("new").is_null(); }));
  EXPECT_FALSE(loaded("web").is_null());
}

TEST_F(PolicyE2E, NetreapRuleArraysAreAcceptedAsClusterwidePolicies) {
  const long long web = endpoint_of("web", "10.200.1.1");
  start_daemon();
  put("netreap",
      R"([{"endpointSelector": {"matchLabels": {"nomad:nomad.job": "web"}},
           "ingress": [{"fromEndpoints": [{"matchLabels": {"nomad:nomad.job": "frontend"}}]}]}])");
  ASSERT_TRUE(eventually([&] { return !loaded("netreap").is_null(); }));
  EXPECT_EQ(loaded("netreap")["kind"], "CiliumClusterwideNetworkPolicy");
  ASSERT_TRUE(eventually([&] { return loaded("netreap")["subject_endpoints"].size() == 1; }));
  EXPECT_EQ(loaded("netreap")["subject_endpoints"], json::array({web}));
}

// fromNodes needs enable-node-selector-labels (off by default, cilium/cilium
// pkg/policy/api/rule_validation.go); the fake agent refuses it as the real one does.
constexpr const char* kFromNodesPolicy = R"({"apiVersion": "cilium.io/v2",
  "kind": "CiliumClusterwideNetworkPolicy",
  "metadata": {"name": "db-nodes"},
  "spec": {"endpointSelector": {"matchLabels": {"nomad:nomad.job": "web"}},
           "ingress": [{"fromNodes": [{"matchLabels": {"role": "db"}}]}]}})";

// One variable must not turn into a crash loop of agents at their next start (docs/policies.md,
// "Agent options").
TEST_F(PolicyE2E, APolicyNeedingAnOptionTheAgentLacksIsHeldBackAndTheAgentSurvivesARestart) {
  start_daemon();
  put("web", ccnp_web(8080));
  put("db-nodes", kFromNodesPolicy);
  ASSERT_TRUE(eventually([&] {
    auto rec = record("db-nodes");
    return rec && rec->state == policy::PolicyState::unsupported && !loaded("web").is_null();
  }));
  EXPECT_FALSE(std::filesystem::exists(file("db-nodes")));
  const auto rec = *record("db-nodes");
  EXPECT_EQ(rec.option, "enable-node-selector-labels");
  EXPECT_NE(rec.reason.find("/spec/ingress/0/fromNodes"), std::string::npos) << rec.reason;
  // The gauges and the status file are published at the end of the pass that made the record.
  ASSERT_TRUE(eventually([&] {
    auto shown = policy::render_policy_status(dir_.file("run/policy-status.json"),
                                              policy::StatusView::wide, system_clock());
    return shown && shown->find("unsupported: /spec/ingress/0/fromNodes") != std::string::npos;
  }));
  EXPECT_EQ(daemon_->metrics().policies_unsupported("enable-node-selector-labels").Value(), 1);
  EXPECT_EQ(daemon_->metrics().policies_unsupported("enable-l7-proxy").Value(), 0);

  EXPECT_NO_THROW(restart_agent(false)) << "the next start reads every file of the directory";
  EXPECT_TRUE(agent_alive());
  EXPECT_FALSE(loaded("web").is_null());
}

TEST_F(PolicyE2E, AnAgentWithTheOptionGetsThePolicy) {
  restart_agent(true);
  start_daemon();
  put("db-nodes", kFromNodesPolicy);
  ASSERT_TRUE(eventually([&] { return !loaded("db-nodes").is_null(); }))
      << agent_->policies().dump(2);
  EXPECT_EQ(record("db-nodes")->state, policy::PolicyState::applied);
  EXPECT_EQ(daemon_->metrics().policies_unsupported("enable-node-selector-labels").Value(), 0);
}

// --agent-option wins over what the agent says: the operator takes the responsibility.
TEST_F(PolicyE2E, TheOperatorsOverrideWinsOverTheAgent) {
  cilium::ReportedAgentOptions overrides{};
  overrides[static_cast<std::size_t>(cilium::AgentOption::node_selector_labels)] = true;
  start_daemon(overrides);
  put("db-nodes", kFromNodesPolicy);
  ASSERT_TRUE(eventually([&] {
    auto rec = record("db-nodes");
    return rec && rec->state == policy::PolicyState::applied;
  }));
  EXPECT_TRUE(std::filesystem::exists(file("db-nodes")));
}

// Delegation (docs/policies.md): a team's namespace writes CiliumNetworkPolicies for itself only;
// clusterwide policies come from the operator's namespace. A refused one is reported and leaves
// the others landing.
TEST_F(PolicyE2E, ATeamNamespaceWritesPoliciesForItselfOnlyAndTheOperatorWritesClusterwide) {
  fakes::JobSpec job;
  job.namespace_ = "team-a";
  job.id = "web";
  job.groups.push_back(fakes::GroupSpec{});
  ASSERT_TRUE(nomad_->register_job(job));
  fakes::PlaceRequest req;
  req.job_id = "web";
  req.namespace_ = "team-a";
  auto team_alloc = nomad_->place_alloc(req);
  ASSERT_TRUE(team_alloc);
  ASSERT_TRUE(nomad_->set_network_status(*team_alloc, {"10.200.1.9", "", "eth0"}));
  auto team_ep = agent_->create_endpoint({{"container-id", *team_alloc},
                                          {"container-interface-name", "eth0"},
                                          {"interface-name", "lxc" + team_alloc->substr(0, 8)},
                                          {"addressing", {{"ipv4", "10.200.1.9"}}},
                                          {"state", "waiting-for-identity"},
                                          {"sync-build-endpoint", true}});
  ASSERT_TRUE(team_ep);
  const long long team_web = team_ep->value("id", -1LL);
  const long long default_web = endpoint_of("web", "10.200.1.1");
  start_daemon();
  // No namespace in the document: it is team-a's, as `kubectl apply -n team-a` would make it.
  const std::string own = R"({"apiVersion": "cilium.io/v2", "kind": "CiliumNetworkPolicy",
    "metadata": {"name": "web-in"},
    "spec": {"endpointSelector": {"matchLabels": {"nomad:nomad.job": "web"}},
             "ingress": [{}]}})";
  std::string other = kCnpDefault;  // names namespace default
  ASSERT_TRUE(nomad_->put_variable("team-a", "cilium/policies/web", {{"policy", own}}));
  ASSERT_TRUE(nomad_->put_variable("team-a", "cilium/policies/other", {{"policy", other}}));
  ASSERT_TRUE(nomad_->put_variable("team-a", "cilium/policies/wide", {{"policy", ccnp_web()}}));
  put("wide", ccnp_web(8080));

  ASSERT_TRUE(eventually([&] {
    return !loaded("team-a.web").is_null() && !loaded("default.wide").is_null() &&
           team_record("other") &&
           team_record("other")->state == policy::PolicyState::not_delegated &&
           team_record("wide") && team_record("wide")->state == policy::PolicyState::not_delegated;
  })) << agent_->policies().dump(2);
  // The team's policy selects the team's endpoint, not the same job in another namespace.
  EXPECT_EQ(loaded("team-a.web")["subject_endpoints"], json::array({team_web}));
  EXPECT_EQ(
      json::parse(std::ifstream(policy_dir_ + "/nomad-team-a.web.yaml"))["metadata"]["namespace"],
      "team-a");
  json wide_subjects = loaded("default.wide")["subject_endpoints"];
  std::sort(wide_subjects.begin(), wide_subjects.end());
  EXPECT_EQ(wide_subjects,
            json::array({std::min(default_web, team_web), std::max(default_web, team_web)}));
  EXPECT_NE(team_record("other")->reason.find("/metadata/namespace: "), std::string::npos)
      << team_record("other")->reason;
  EXPECT_NE(team_record("wide")->reason.find("/kind: "), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(policy_dir_ + "/nomad-team-a.other.yaml"));
  EXPECT_FALSE(std::filesystem::exists(policy_dir_ + "/nomad-team-a.wide.yaml"));
  // `policy status` names each policy's namespace and the refusal. The records above are the
  // distributor's memory; the status file is published at the end of its pass, so wait for it.
  ManualClock clock;
  std::string table;
  ASSERT_TRUE(eventually([&] {
    auto rendered = policy::render_policy_status(dir_.file("run/policy-status.json"),
                                                 policy::StatusView::wide, clock);
    if (!rendered) return false;
    table = std::move(*rendered);
    return table.find("not_delegated: /kind: ") != std::string::npos;
  })) << table;
  EXPECT_NE(table.find("team-a"), std::string::npos) << table;
  EXPECT_TRUE(agent_alive());
}

}  // namespace
}  // namespace cn::labeler
