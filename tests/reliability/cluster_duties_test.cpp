// Cluster duties (docs/cluster-duties.md) with the real labeler binary against a real etcd on
// loopback, seeded with keys in the exact formats the Cilium agent writes (docs/cluster-duties.md),
// and the fake Nomad's node states. Short intervals make passes quick; every wait is on a
// condition.
//
// Expected: unused identities go after two passes and in-use ones never; dry-run deletes
// nothing; a SIGKILLed leader is replaced within its lease TTL plus a pass; a leader stalled
// with SIGSTOP gets no write applied once another leads; etcd restarted under load crashes
// nothing and deletes nothing in use; node entries follow Nomad's node states, and only nodes
// Nomad listed are ever reaped.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <set>

#include <spdlog/fmt/fmt.h>

#include "common/etcd/curl_etcd_client.h"
#include "common/etcd/etcd_config.h"
#include "tests/reliability/support/background_process.h"
#include "tests/reliability/support/fake_node.h"
#include "tests/reliability/support/wait.h"
#include "tests/support/etcd_server.h"

namespace cn::reliability {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view kIdPrefix = "cilium/state/identities/v1/id/";
constexpr std::string_view kValuePrefix = "cilium/state/identities/v1/value/";

// The label string the agent stores for app=<app> in namespace default.
std::string labels_of(const std::string& app) {
  return "k8s:app=" + app + ";k8s:io.kubernetes.pod.namespace=default;";
}

void add_nomad_node(fakes::FakeNomad& nomad, const std::string& id, const std::string& name,
                    const std::string& status) {
  fakes::NodeRecord node;
  node.id = id;
  node.name = name;
  node.status = status;
  nomad.add_node(node);
}

Deadline soon() {
  return Deadline{std::chrono::steady_clock::now() + 5s};
}

class ClusterDutiesTest : public ::testing::Test {
 protected:
  void start_etcd(bool tls = false) {
    if (!testing::EtcdServer::available()) GTEST_SKIP() << "no " << testing::EtcdServer::kBinary;
    etcd_ = std::make_unique<testing::EtcdServer>(testing::EtcdServer::Options{tls});
    ASSERT_TRUE(etcd_->started()) << etcd_->log();
    config_file_ = etcd_->dir().file("etcd.config");
    std::ofstream out(config_file_);
    out << "endpoints:\n  - " << etcd_->endpoint() << "\n";
    if (tls) {
      out << "trusted-ca-file: " << etcd_->tls().ca << "\n"
          << "cert-file: " << etcd_->tls().client_cert << "\n"
          << "key-file: " << etcd_->tls().client_key << "\n";
    }
    out.close();
    auto config = etcd::load_etcd_config(config_file_);
    ASSERT_TRUE(config) << config.error().message;
    auto client = etcd::CurlEtcdClient::create(*config);
    ASSERT_TRUE(client) << client.error().message;
    client_ = std::move(*client);
    auto lease = client_->grant_lease(600s, soon());
    ASSERT_TRUE(lease) << lease.error().message;
    agent_lease_ = lease->id;
  }

  void put(const std::string& key, const std::string& value, etcd::LeaseId lease = 0) {
    auto done = client_->put(key, value, lease, soon());
    ASSERT_TRUE(done) << key << ": " << done.error().message;
  }
  // An identity as an agent allocates it: the master key (no lease) and, when `user_ip` is set,
  // that node's value key on the agent lease.
  void seed_identity(int id, const std::string& app, const std::string& user_ip = "") {
    put(std::string(kIdPrefix) + std::to_string(id), labels_of(app));
    if (!user_ip.empty())
      put(std::string(kValuePrefix) + labels_of(app) + "/" + user_ip, std::to_string(id),
          agent_lease_);
  }
  bool exists(const std::string& key) {
    etcd::RangeRequest r;
    r.key = key;
    auto page = client_->range(r, soon());
    return !page || !page->kvs.empty();  // an unanswered read proves nothing gone
  }
  bool identity_exists(int id) { return exists(std::string(kIdPrefix) + std::to_string(id)); }
  std::string value_of(const std::string& key) {
    etcd::RangeRequest r;
    r.key = key;
    auto page = client_->range(r, soon());
    if (!page || page->kvs.empty()) return {};
    return page->kvs.front().value;
  }

  // Fast passes: the lease and every interval in seconds or less.
  std::vector<std::string> duty_flags(const std::string& node_name,
                                      const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> flags = {"--watch",
                                      "none",
                                      "--resync-interval",
                                      "0",
                                      "--cluster-duties",
                                      "--kvstore-config",
                                      config_file_,
                                      "--node-name",
                                      node_name,
                                      "--leader-lease-ttl",
                                      "2s",
                                      "--heartbeat-interval",
                                      "300ms",
                                      "--identity-gc-interval",
                                      "1s",
                                      "--lock-gc-interval",
                                      "1s",
                                      "--node-reap-grace",
                                      "1s",
                                      "--cluster-id",
                                      "0",
                                      "--max-connected-clusters",
                                      "255"};
    flags.insert(flags.end(), extra.begin(), extra.end());
    return flags;
  }

  std::unique_ptr<BackgroundProcess> start_labeler(FakeNode& node, const std::string& name,
                                                   const std::vector<std::string>& extra = {}) {
    auto p =
        std::make_unique<BackgroundProcess>(node.labeler_argv(duty_flags(name, extra)),
                                            node.labeler_env(), node.dir().file(name + ".log"));
    return p;
  }

  std::unique_ptr<testing::EtcdServer> etcd_;
  std::string config_file_;
  std::unique_ptr<etcd::CurlEtcdClient> client_;
  etcd::LeaseId agent_lease_ = 0;
};

TEST_F(ClusterDutiesTest, UnusedIdentitiesGoAfterTwoPassesInUseOnesAndOneThatGainsAUserStay) {
  if (::geteuid() != 0) GTEST_SKIP() << "the labeler's socket directory needs root";
  start_etcd();
  seed_identity(1000, "web", "10.0.0.1");
  seed_identity(1001, "old-a");
  seed_identity(1002, "old-b");
  seed_identity(1003, "late-user");
  put(std::string(kIdPrefix) + "not-a-number", labels_of("odd"));  // unknown shape: kept
  // Unused, but cluster 1's (its range with 255 starts at 65536): never this cluster's to collect.
  seed_identity(65536, "other-cluster");
  seed_identity(70000, "other-cluster-b");
  FakeNode node;
  auto labeler = start_labeler(node, "node-a");
  ASSERT_TRUE(labeler->wait_for_log("cluster duties: leading")) << labeler->log();
  // After the first pass has remembered the candidates, 1003 gains a user: the second pass (or,
  // if it already read, etcd's compare in its delete txn) must spare it.
  ASSERT_TRUE(labeler->wait_for_log("cluster duty pass: duty=identity_gc", 20s, 1))
      << labeler->log();
  seed_identity(1003, "late-user", "10.0.0.2");
  EXPECT_TRUE(eventually([&] { return !identity_exists(1001) && !identity_exists(1002); }, 20s))
      << labeler->log();
  ASSERT_TRUE(labeler->wait_for_log("cluster duty pass: duty=identity_gc", 20s, 4));
  EXPECT_TRUE(identity_exists(1000));
  EXPECT_TRUE(identity_exists(1003));
  EXPECT_TRUE(exists(std::string(kIdPrefix) + "not-a-number"));
  EXPECT_TRUE(identity_exists(65536));
  EXPECT_TRUE(identity_exists(70000));
  EXPECT_FALSE(value_of("cilium/.heartbeat").empty()) << "the leader writes the heartbeat";
  EXPECT_EQ(value_of("cilium-nomad/default/leader"), "node-a");
  // `cluster status` reads the same from etcd: the leader, the node's in-use report, the counts.
  ASSERT_TRUE(eventually([&] { return exists("cilium-nomad/default/in-use/node-a"); }, 10s));
  auto status = testing::run_process(
      {testing::bin_dir() + "/cilium-nomad-labeler", "cluster", "status", "--kvstore-config",
       config_file_, "--json", "--cluster-id", "0", "--max-connected-clusters", "255"},
      node.labeler_env(), "", 30s);
  ASSERT_EQ(status.exit_code, 0) << status.out << status.err;
  auto doc = nlohmann::json::parse(status.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << status.out;
  EXPECT_EQ(doc["leader"]["holder"], "node-a");
  EXPECT_EQ(doc["in_use_reports"], nlohmann::json::array({"node-a"}));
  EXPECT_EQ(doc["counts"]["identities"], 5);    // 1000, 1003, cluster 1's two, the odd key
  EXPECT_EQ(doc["identity_range"]["used"], 2);  // 1000 and 1003
  EXPECT_EQ(doc["identity_range"]["size"], 65280);
  EXPECT_TRUE(labeler->kill_and_wait(SIGTERM).has_value());
  EXPECT_TRUE(labeler->wait_for_log("cluster duties: resigned"));
  EXPECT_FALSE(exists("cilium-nomad/default/leader")) << "resigning deletes the leader key";
  EXPECT_EQ(sanitizer_report(labeler->log()), "");
}

TEST_F(ClusterDutiesTest, DryRunOverTlsDeletesNothingAndSaysWhatItWouldDelete) {
  if (::geteuid() != 0) GTEST_SKIP() << "the labeler's socket directory needs root";
  start_etcd(/*tls=*/true);
  seed_identity(2000, "web", "10.0.0.1");
  seed_identity(2001, "gone");
  put("cilium/state/nodes/v1/default/ghost", R"({"Name":"ghost","Cluster":"default"})");
  FakeNode node;
  auto labeler = start_labeler(node, "node-a", {"--dry-run"});
  ASSERT_TRUE(labeler->wait_for_log("would_delete=1", 30s)) << labeler->log();
  ASSERT_TRUE(labeler->wait_for_log("cluster duty pass: duty=identity_gc", 20s, 3));
  EXPECT_TRUE(identity_exists(2000));
  EXPECT_TRUE(identity_exists(2001));
  EXPECT_TRUE(exists("cilium/state/nodes/v1/default/ghost"));
  EXPECT_TRUE(value_of("cilium/.heartbeat").empty()) << "dry-run writes no heartbeat either";
  labeler->kill_and_wait(SIGTERM);
  EXPECT_EQ(sanitizer_report(labeler->log()), "");
}

// The lease, in hex as the election logs it, of the labeler that leads now.
std::string leading_lease(const std::string& log) {
  auto at = log.rfind("cluster duties: leading:");
  if (at == std::string::npos) return {};
  auto lease = log.find("lease=", at);
  auto end = log.find_first_of(" \n", lease);
  return log.substr(lease + 6, end - lease - 6);
}

TEST_F(ClusterDutiesTest, ThreeLabelersOneLeadsAKilledLeaderIsReplacedAStalledOneIsFencedOut) {
  if (::geteuid() != 0) GTEST_SKIP() << "the labeler's socket directory needs root";
  start_etcd();
  for (int id = 3000; id < 3200; ++id) seed_identity(id, "churn-" + std::to_string(id));
  std::vector<std::unique_ptr<FakeNode>> nodes;
  std::map<std::string, std::unique_ptr<BackgroundProcess>> labelers;
  for (const char* name : {"node-a", "node-b", "node-c"}) {
    nodes.push_back(std::make_unique<FakeNode>());
    labelers[name] = start_labeler(*nodes.back(), name, {"--identity-gc-rate-limit", "60"});
  }
  auto leader = [&] { return value_of("cilium-nomad/default/leader"); };
  std::string first;
  ASSERT_TRUE(eventually(
      [&] {
        first = leader();
        return labelers.contains(first);
      },
      20s));
  // Exactly one believes it leads.
  auto leading = [&] {
    int n = 0;
    for (auto& [name, p] : labelers) n += count_occurrences(p->log(), "cluster duties: leading:");
    return n;
  };
  // The key is written before its holder logs it.
  EXPECT_TRUE(eventually([&] { return leading() >= 1; }, 5s));
  EXPECT_EQ(leading(), 1);

  // kill -9 mid-pass (the rate limit keeps its identity GC deleting): another leads within the
  // lease TTL (2 s) plus a round, measured with margin for the sanitizers.
  ASSERT_TRUE(labelers[first]->wait_for_log("cluster duty pass: duty=identity_gc", 20s));
  labelers[first]->kill_and_wait(SIGKILL);
  std::string second;
  ASSERT_TRUE(eventually(
      [&] {
        second = leader();
        return labelers.contains(second) && second != first;
      },
      2s + 1s + 5s))
      << "no new leader after the kill";

  // SIGSTOP the new leader until a third labeler leads, then SIGCONT: every write the stalled one
  // still tries must be refused. Its heartbeat writes carry its lease; none may land after the
  // third labeler's term began.
  BackgroundProcess& stalled = *labelers[second];
  ASSERT_TRUE(stalled.wait_for_log("cluster duties: leading:"));
  const std::string stalled_lease = leading_lease(stalled.log());
  ASSERT_FALSE(stalled_lease.empty());
  ASSERT_TRUE(stalled.signal(SIGSTOP));
  std::string third;
  ASSERT_TRUE(eventually(
      [&] {
        third = leader();
        return labelers.contains(third) && third != second && third != first;
      },
      15s));
  etcd::RangeRequest leader_read;
  leader_read.key = "cilium-nomad/default/leader";
  auto third_term = client_->range(leader_read, soon());
  ASSERT_TRUE(third_term && !third_term->kvs.empty());
  const etcd::Revision third_since = third_term->kvs.front().create_revision;
  ASSERT_TRUE(stalled.signal(SIGCONT));
  ASSERT_TRUE(stalled.wait_for_log("no longer leading", 15s)) << stalled.log();
  // Let the third leader write a few heartbeats, then walk the heartbeat's history.
  etcd::RangeRequest hb;
  hb.key = "cilium/.heartbeat";
  auto heartbeat_revision = [&]() -> etcd::Revision {
    auto page = client_->range(hb, soon());
    return page && !page->kvs.empty() ? page->kvs.front().mod_revision : 0;
  };
  const etcd::Revision resumed_at = heartbeat_revision();
  ASSERT_TRUE(eventually([&] { return heartbeat_revision() > resumed_at; }, 10s));
  ASSERT_TRUE(eventually([&] { return heartbeat_revision() > resumed_at + 1; }, 10s));
  auto now = client_->range(hb, soon());
  ASSERT_TRUE(now && !now->kvs.empty());
  for (etcd::Revision rev = third_since; rev <= now->revision; ++rev) {
    etcd::RangeRequest at = hb;
    at.revision = rev;
    auto page = client_->range(at, soon());
    ASSERT_TRUE(page) << page.error().message;
    if (page->kvs.empty() || page->kvs.front().mod_revision != rev) continue;
    EXPECT_NE(fmt::format("{:x}", page->kvs.front().lease), stalled_lease)
        << "the stalled ex-leader wrote the heartbeat at revision " << rev;
  }
  for (auto& [name, p] : labelers) {
    if (name == first) continue;
    p->kill_and_wait(SIGTERM);
    EXPECT_EQ(sanitizer_report(p->log()), "") << name;
  }
}

TEST_F(ClusterDutiesTest, EtcdRestartedUnderLoadNoCrashAndNothingInUseDeleted) {
  if (::geteuid() != 0) GTEST_SKIP() << "the labeler's socket directory needs root";
  start_etcd();
  // 2,500 identities, every other one in use: several pages per scan, so restarts land mid-scan.
  for (int id = 4000; id < 6500; ++id) {
    const std::string app = "svc-" + std::to_string(id);
    seed_identity(id, app, id % 2 == 0 ? "10.0.0.7" : "");
  }
  FakeNode node;
  auto labeler = start_labeler(node, "node-a", {"--identity-gc-rate-limit", "6000"});
  ASSERT_TRUE(labeler->wait_for_log("cluster duties: leading")) << labeler->log();
  auto identities = [&]() -> std::int64_t {
    etcd::RangeRequest r;
    r.key = std::string(kIdPrefix);
    r.range_end = etcd::prefix_end(r.key);
    r.count_only = true;
    auto page = client_->range(r, soon());
    return page ? page->count : -1;
  };
  // Each restart lands while the leader deletes (at 100 a second): mid-pass, under load.
  std::int64_t last = 2500;
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(eventually(
        [&] {
          auto n = identities();
          return n >= 0 && n <= last - 50;
        },
        30s))
        << labeler->log();
    last = identities();
    if (round % 2 == 0)
      etcd_->kill();
    else
      etcd_->stop();
    ASSERT_TRUE(etcd_->restart()) << etcd_->log();
    EXPECT_TRUE(labeler->running()) << labeler->log();
  }
  // Once etcd stays up, the unused ones go, and every identity in use is still there.
  EXPECT_TRUE(eventually([&] { return identities() == 1250; }, 60s)) << labeler->log();
  for (int id = 4000; id < 6500; id += 2) ASSERT_TRUE(identity_exists(id)) << id;
  EXPECT_TRUE(labeler->running());
  labeler->kill_and_wait(SIGTERM);
  EXPECT_EQ(sanitizer_report(labeler->log()), "");
}

TEST_F(ClusterDutiesTest, NodeEntriesFollowNomadsNodeStatesAndOnlyNodesNomadListed) {
  if (::geteuid() != 0) GTEST_SKIP() << "the labeler's socket directory needs root";
  start_etcd();
  FakeNode node;
  auto& nomad = node.nomad();
  const std::string self = nomad.node(node.node_id())->name;
  const std::string ready_id = "11111111-0000-4000-8000-000000000003";
  add_nomad_node(nomad, "11111111-0000-4000-8000-000000000002", "down-1", "down");
  add_nomad_node(nomad, ready_id, "ready-1", "ready");
  auto entry = [](const std::string& name) { return "cilium/state/nodes/v1/default/" + name; };
  auto marker = [](const std::string& name) { return "cilium-nomad/default/nomad-nodes/" + name; };
  auto node_json = [](const std::string& name) {
    return R"({"Name":")" + name +
           R"(","Cluster":"default","IPAddresses":[{"Type":"InternalIP","IP":"10.0.1.9"}],)"
           R"("ClusterID":0,"Source":"local"})";
  };
  // gateway-1: a Cilium node that never ran Nomad (or another region's): never listed here.
  for (const std::string& name :
       {self, std::string("down-1"), std::string("ready-1"), std::string("gateway-1")})
    put(entry(name), node_json(name), agent_lease_);
  auto labeler = start_labeler(node, "node-a");
  EXPECT_TRUE(eventually([&] { return !exists(entry("down-1")); }, 30s)) << labeler->log();
  EXPECT_TRUE(eventually([&] { return exists(marker("ready-1")); }, 30s)) << labeler->log();
  EXPECT_TRUE(exists(entry(self)));
  EXPECT_TRUE(exists(entry("ready-1")));
  // A new leader, once Nomad purged ready-1, knows from etcd that this region listed it.
  labeler->kill_and_wait(SIGTERM);
  EXPECT_EQ(sanitizer_report(labeler->log()), "");
  ASSERT_TRUE(nomad.remove_node(ready_id));
  auto next = start_labeler(node, "node-b");
  EXPECT_TRUE(eventually([&] { return !exists(entry("ready-1")); }, 30s)) << next->log();
  EXPECT_TRUE(eventually([&] { return !exists(marker("ready-1")); }, 30s)) << next->log();
  // Many passes later (a pass a second), the never-listed node is still there, logged once.
  ASSERT_TRUE(next->wait_for_log("never listed: node=gateway-1", 10s)) << next->log();
  EXPECT_TRUE(exists(entry("gateway-1")));
  EXPECT_FALSE(exists(marker("gateway-1")));
  EXPECT_TRUE(exists(entry(self)));
  next->kill_and_wait(SIGTERM);
  const std::string log = next->log();
  std::size_t logged = 0;
  for (auto at = log.find("never listed: node=gateway-1"); at != std::string::npos;
       at = log.find("never listed: node=gateway-1", at + 1))
    ++logged;
  EXPECT_EQ(logged, 1U) << log;
  EXPECT_EQ(sanitizer_report(log), "");
}

}  // namespace
}  // namespace cn::reliability
