// The shipped ACL policy is enough, and nothing more is asked: the real labeler binary runs its
// whole feature set (node ID discovery from the Nomad client's data directory, labeling on the
// plugin's notification and from the event-stream watch, periodic reconciles of the node's
// allocations, policy distribution from Variables, cluster duties with node reaping) against
// the fake Nomad enforcing conf-examples/acl-policy.hcl for its token. Any call outside that
// policy, refused or silently trimmed, is in the fake's denial list and fails the test. A token
// with less gets Nomad's 403 where the labeler needs more.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/reliability/support/background_process.h"
#include "tests/reliability/support/fake_node.h"
#include "tests/reliability/support/wait.h"
#include "tests/support/etcd_server.h"
#include "tests/support/process.h"
#include "tests/support/sample_policies.h"

namespace cn::reliability {
namespace {

using namespace std::chrono_literals;

constexpr const char* kToken = "3c1d9e2a-5b7f-4a60-8e1d-2f4b6c8a0e11";

std::string example_policy() {
  return testing::read_file(testing::source_dir() + "/conf-examples/acl-policy.hcl");
}

std::string denials_of(const fakes::FakeNomad& nomad) {
  std::string out;
  for (const auto& d : nomad.acl_denials()) {
    out += d.method + " " + d.target + ": " + d.reason + (d.silent ? " (trimmed)" : "") + "\n";
  }
  return out;
}

// The argv of FakeNode without --node-id: the daemon must find its node itself.
std::vector<std::string> without_node_id(std::vector<std::string> argv) {
  for (auto it = argv.begin(); it != argv.end(); ++it) {
    if (*it == "--node-id" && it + 1 != argv.end()) {
      argv.erase(it, it + 2);
      break;
    }
  }
  return argv;
}

// A Nomad client's data directory as the client leaves it: client/client-id holds the bare ID.
std::string nomad_data_dir(const FakeNode& node) {
  const std::string dir = node.dir().file("nomad-data");
  std::filesystem::create_directories(dir + "/client");
  std::ofstream(dir + "/client/client-id") << node.node_id();
  return dir;
}

TEST(AclPolicy, TheLabelerRunsEveryFeatureInsideTheExamplePolicy) {
  if (::geteuid() != 0) GTEST_SKIP() << "runs the labeler binary, which needs root for its socket";
  FakeNode node;
  auto token = fakes::token_with_policy(kToken, example_policy());
  ASSERT_TRUE(token) << token.error().message;
  node.nomad().add_token(*token);
  node.nomad().set_acl_enabled(true);
  ASSERT_TRUE(node.nomad().put_variable("default", "cilium/policies/web",
                                        {{"policy", testing::ccnp_web(8080)}}));
  const std::string policy_dir = node.dir().file("policies");
  std::filesystem::create_directories(policy_dir);

  std::vector<std::string> flags = {
      "--watch",      "events",   "--resync-interval", "1",
      "--policy-dir", policy_dir, "--nomad-data-dir",  nomad_data_dir(node)};
  std::unique_ptr<testing::EtcdServer> etcd;
  if (testing::EtcdServer::available()) {
    etcd = std::make_unique<testing::EtcdServer>();
    ASSERT_TRUE(etcd->started()) << etcd->log();
    const std::string config = etcd->dir().file("etcd.config");
    std::ofstream(config) << "endpoints:\n  - " << etcd->endpoint() << "\n";
    flags.insert(flags.end(), {"--cluster-duties", "--kvstore-config", config, "--node-name",
                               "worker-1", "--leader-lease-ttl", "2s", "--heartbeat-interval",
                               "300ms", "--node-reap-grace", "1s"});
  }
  BackgroundProcess labeler(without_node_id(node.labeler_argv(flags)),
                            node.labeler_env({{"NOMAD_TOKEN", kToken}}),
                            node.dir().file("labeler.log"));
  ASSERT_TRUE(labeler.wait_for_log("ready: node=" + node.node_id())) << labeler.log();
  EXPECT_TRUE(labeler.wait_for_log("source=\"client-id file " + node.dir().file("nomad-data")))
      << labeler.log();

  // Labeling on the plugin's word, then one the event-stream watch finds on its own.
  std::string notified = node.running_alloc("10.200.91.1");
  auto add = node.plugin_add(notified, "10.200.91.1", 3000);
  EXPECT_NE(add.err.find("labeler=labeled"), std::string::npos) << add.err << labeler.log();
  std::string watched = node.running_alloc("10.200.91.2");
  EXPECT_TRUE(node.wait_labeled(watched, kWebLabels)) << labeler.log();
  // The policy from Variables, and an update of it.
  const std::string file = policy_dir + "/nomad-default.web.yaml";
  EXPECT_TRUE(eventually([&] { return std::filesystem::exists(file); })) << labeler.log();
  ASSERT_TRUE(node.nomad().put_variable("default", "cilium/policies/web",
                                        {{"policy", testing::ccnp_web(9090)}}));
  EXPECT_TRUE(eventually([&] {
    return testing::read_file(file).find("9090") != std::string::npos;
  })) << labeler.log();
  // Periodic reconciles read the node's allocations again; the duties read the node list.
  const int reconciles = node.nomad().request_count("node_allocations");
  EXPECT_TRUE(eventually([&] {
    return node.nomad().request_count("node_allocations") >= reconciles + 2;
  })) << labeler.log();
  if (etcd) {
    EXPECT_TRUE(eventually([&] { return node.nomad().request_count("nodes") >= 2; }))
        << labeler.log();
  }
  labeler.kill_and_wait(SIGTERM);

  EXPECT_EQ(denials_of(node.nomad()), "") << "calls outside conf-examples/acl-policy.hcl";
  EXPECT_EQ(node.nomad().request_count("agent_self"), 0);
  EXPECT_GE(node.nomad().request_count("event_stream"), 1);
  EXPECT_GE(node.nomad().request_count("allocation") + node.nomad().request_count("job"), 1);
  EXPECT_GE(node.nomad().request_count("variable"), 2);
  EXPECT_EQ(sanitizer_report(labeler.log()), "");
}

TEST(AclPolicy, ATokenWithoutNodeReadIsDeniedAsNomadDeniesIt) {
  if (::geteuid() != 0) GTEST_SKIP() << "runs the labeler binary, which needs root for its socket";
  FakeNode node;
  auto token = fakes::token_with_policy(kToken, R"(namespace "*" { capabilities = ["read-job"] })");
  ASSERT_TRUE(token) << token.error().message;
  node.nomad().add_token(*token);
  node.nomad().set_acl_enabled(true);
  BackgroundProcess labeler(
      without_node_id(node.labeler_argv({"--watch", "none", "--resync-interval", "0",
                                         "--nomad-data-dir", "", "--node-name", "worker-1"})),
      node.labeler_env({{"NOMAD_TOKEN", kToken}}), node.dir().file("labeler.log"));
  // Neither the node list nor the agent answers: the warning names both refusals.
  ASSERT_TRUE(labeler.wait_for_log("GET /v1/nodes: Permission denied")) << labeler.log();
  EXPECT_TRUE(labeler.wait_for_log("GET /v1/agent/self: Permission denied (needs agent read)"))
      << labeler.log();
  labeler.kill_and_wait(SIGTERM);
  EXPECT_EQ(labeler.log().find("ready: node="), std::string::npos) << labeler.log();
  bool nodes_denied = false;
  for (const auto& r : node.nomad().requests()) {
    if (r.route == "nodes" || r.route == "agent_self") {
      EXPECT_EQ(r.status, 403) << r.target;
      nodes_denied = nodes_denied || r.route == "nodes";
    }
  }
  EXPECT_TRUE(nodes_denied);
  EXPECT_NE(denials_of(node.nomad()).find("GET /v1/nodes: node read"), std::string::npos)
      << denials_of(node.nomad());
}

}  // namespace
}  // namespace cn::reliability
