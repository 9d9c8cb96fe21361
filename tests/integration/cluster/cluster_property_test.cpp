// The cluster duties' safety property against a real etcd (Debian's, on loopback): across many
// randomized worlds (property_world.h), with the leader killed at a random etcd request and etcd
// itself killed and restarted in some runs, no key the world protects is ever deleted or changed.
//
// Each run: labeler A leads and runs every duty through ClusterDuties (the entry point `run
// --cluster-duties` uses, so a duty added there runs here too); A dies at a random request
// (property_doubles.h, KillableEtcd), before it is sent or with its answer lost; Nomad purges
// some nodes; A's leases are revoked from outside, which is what their expiry does in etcd (the
// keys on them deleted at once), without waiting for etcd's shortest TTL (1 s for the test
// member: etcd rounds 1.5 election timeouts up to whole seconds) a thousand times; labeler B takes
// over and runs every duty for 45 simulated seconds (a ManualClock pumped ~1000x: GC intervals,
// grace periods and the runner's schedule pass in milliseconds; etcd's own clock is real).
//
// CN_PROPERTY_RUNS (default 1000) sets the number of runs, split over the shards below;
// CN_PROPERTY_SEED=<n> replays one run alone (in shard 0). docs/testing.md has the figures.
#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "common/etcd/curl_etcd_client.h"
#include "labeler/cluster/cluster_duties.h"
#include "labeler/serve/metrics.h"
#include "tests/integration/cluster/property_doubles.h"
#include "tests/integration/cluster/property_world.h"
#include "tests/support/clock_pump.h"
#include "tests/support/etcd_server.h"
#include "tests/support/eventually.h"
#include "tests/support/manual_clock.h"

namespace cn::testing::property {
namespace {

using namespace std::chrono_literals;
using labeler::cluster::ClusterDuties;
using labeler::cluster::ClusterDutySettings;
using labeler::cluster::DutyName;
using labeler::cluster::PassEnd;

constexpr int kPropertyShards = 20;
// One run in this many kills etcd with SIGKILL and restarts it on its data dir mid-run.
constexpr std::uint64_t kEtcdRestartEvery = 25;

long long property_env(const char* name, long long fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoll(v, nullptr, 10);
}

Deadline property_soon() {
  return Deadline{std::chrono::steady_clock::now() + 20s};
}

std::unique_ptr<etcd::CurlEtcdClient> property_client(const EtcdServer& server, Clock* clock,
                                                      std::shared_ptr<spdlog::logger> log = {}) {
  etcd::EtcdConfig config;
  config.source = "property-test";
  config.endpoints = {server.endpoint()};
  etcd::EtcdClientOptions options;
  options.clock = clock;
  options.connect_timeout = 500ms;
  options.log = std::move(log);
  auto client = etcd::CurlEtcdClient::create(std::move(config), options);
  if (!client) return nullptr;
  return std::move(*client);
}

ClusterDutySettings property_settings(const World& world, const Labeler& labeler) {
  ClusterDutySettings s;
  s.enabled = true;
  s.node = labeler.node;
  // Never expires in real time during a run: expiry is modelled by revoking the lease.
  s.leader_lease_ttl = 60s;
  s.heartbeat_interval = 1min;
  s.identity_gc_interval = 30s;
  s.node_reap_grace = 30s;
  s.nomad_region = world.region;
  s.cluster_id = world.cluster_id;
  s.max_connected_clusters = world.max_connected_clusters;
  // Simulated time runs ~1000x faster than etcd answers: a call's deadline must cover a real
  // round trip of the loaded test machine (10 simulated minutes: ~0.6 s).
  s.call_timeout = 10min;
  return s;
}

// Complete passes of every key-deleting duty this labeler runs (a duty that never ran a pass of
// any end is not one it runs).
bool each_deleting_duty_completed(labeler::Metrics& metrics, double passes) {
  for (DutyName duty : labeler::cluster::kAllDutyNames) {
    if (!labeler::cluster::deletes_keys(duty)) continue;
    double any = 0;
    for (PassEnd end : labeler::cluster::kAllPassEnds)
      any += metrics.cluster_duty_passes(duty, end).Value();
    if (any > 0 && metrics.cluster_duty_passes(duty, PassEnd::complete).Value() < passes)
      return false;
  }
  return true;
}

struct RunResult {
  std::string failure;  // empty: the run held the property
  std::size_t deletable = 0;
  std::size_t deleted = 0;
  std::map<std::string, std::pair<std::size_t, std::size_t>> by_kind;
  bool restarted_etcd = false;
};

class PropertyRun {
 public:
  PropertyRun(EtcdServer& server, etcd::EtcdApi& admin, std::uint64_t seed)
      : server_(server), admin_(admin), seed_(seed), rng_(seed ^ 0x9e3779b97f4a7c15ULL) {}

  RunResult run() {
    RunResult result;
    World world = generate_world(seed_);
    auto agent_lease = admin_.grant_lease(15min, property_soon());
    if (!agent_lease) return fail(result, "agent lease: " + agent_lease.error().message);
    if (auto seeded = seed_world(admin_, world, agent_lease->id); !seeded)
      return fail(result, "seeding: " + seeded.error().message);
    const bool restart = seed_ % kEtcdRestartEvery == 0;
    result.restarted_etcd = restart;
    const bool restart_while_first_leads = rng_() % 2 == 0;

    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log_);
    auto log_a = std::make_shared<spdlog::logger>(world.first.node, sink);
    auto log_b = std::make_shared<spdlog::logger>(world.second.node, sink);
    ManualClock clock;
    auto client_a = property_client(server_, &clock, log_a);
    auto client_b = property_client(server_, &clock, log_b);
    if (!client_a || !client_b) return fail(result, "etcd client");
    KillableEtcd etcd_a(*client_a);
    KillableEtcd etcd_b(*client_b);
    etcd_a.arm(static_cast<long long>(rng_() % 60) + 1,
               rng_() % 2 == 0 ? KillableEtcd::CrashPoint::before_send
                               : KillableEtcd::CrashPoint::after_answer);
    WorldNomad nomad(world.nomad_before, world.nomad_after);
    WorldCilium cilium_a(world.first.in_use);
    WorldCilium cilium_b(world.second.in_use);
    labeler::Metrics metrics_a;
    labeler::Metrics metrics_b;
    const std::string id_a = world.first.nomad_id;
    const std::string id_b = world.second.nomad_id;
    ClusterDuties first(property_settings(world, world.first), etcd_a, cilium_a, nomad, clock,
                        metrics_a, log_a, [id_a] { return id_a; });
    ClusterDuties second(property_settings(world, world.second), etcd_b, cilium_b, nomad, clock,
                         metrics_b, log_b, [id_b] { return id_b; });
    std::stop_source stop_a;
    std::stop_source stop_b;
    auto end_run = [&] {
      stop_b.request_stop();
      second.join();
      etcd_a.release();
      stop_a.request_stop();
      first.join();
    };
    // Whatever way the run ends, no thread outlives it (a destructor would join forever).
    struct EndRunGuard {
      std::function<void()> end;
      ~EndRunGuard() { end(); }
    } guard{end_run};
    {
      ClockPump pump(clock, 2s, ClockPump::Mode::periodic);
      first.start(stop_a.get_token());
      if (!eventually([&] { return first.election()->view().leading || etcd_a.dead(); }, 30s)) {
        end_run();
        return fail(result, "labeler A neither led nor died");
      }
      second.start(stop_b.get_token());
      if (restart && restart_while_first_leads && !restart_etcd())
        return fail(result, "etcd did not come back");
      // A dies at its armed request, or after 45 simulated seconds at the latest.
      const MonoTime latest = clock.now() + 45s;
      if (!eventually([&] { return etcd_a.dead() || clock.now() >= latest; }, 60s)) {
        end_run();
        return fail(result, "labeler A's lead phase did not end");
      }
      etcd_a.kill_now();
      // Requests already on the wire land before a TTL could pass; then the leases expire.
      if (!eventually([&] { return etcd_a.in_flight() == 0; }, 30s)) {
        end_run();
        return fail(result, "labeler A's last requests never came back");
      }
      nomad.purge();
      for (etcd::LeaseId lease : etcd_a.leases())
        if (!revoke(lease)) return fail(result, "labeler A's lease could not be revoked");
      if (restart && !restart_while_first_leads && !restart_etcd())
        return fail(result, "etcd did not come back");
      if (!eventually([&] { return second.election()->view().leading; }, 30s)) {
        end_run();
        return fail(result, "labeler B did not take over");
      }
      // Long enough for the longest wait of a deletion: a reaped node's grace, plus a pass.
      const MonoTime until = clock.now() + 45s;
      if (!eventually(
              [&] { return clock.now() >= until && each_deleting_duty_completed(metrics_b, 2); },
              60s)) {
        end_run();
        return fail(result, "labeler B's duties did not complete two passes each");
      }
      end_run();
    }
    auto verdict = check_world(admin_, world, agent_lease->id);
    (void)revoke(agent_lease->id);
    if (!verdict) return fail(result, "reading the store: " + verdict.error().message);
    result.deletable = verdict->deletable;
    result.deleted = verdict->deletable_deleted;
    result.by_kind = verdict->deletable_by_kind;
    if (!verdict->violations.empty()) {
      std::string lines;
      for (const auto& v : verdict->violations) lines += "  " + v + "\n";
      return fail(result, "wrong deletions:\n" + lines);
    }
    return result;
  }

 private:
  // What etcd does when a lease expires. The admin client's connection may be the one an etcd
  // restart broke: the first call then fails, the next reconnects.
  bool revoke(etcd::LeaseId lease) {
    return eventually(
        [&] {
          auto r = admin_.revoke_lease(lease, property_soon());
          return r || r.error().kind == ErrorKind::not_found;
        },
        20s, 10ms);
  }

  bool restart_etcd() {
    server_.kill();
    if (!server_.restart()) return false;
    // The admin client's kept-alive connection died with etcd; its first call reconnects.
    return eventually(
        [&] {
          etcd::RangeRequest probe;
          probe.key = "cilium/";
          return admin_.range(probe, property_soon()).has_value();
        },
        20s, 10ms);
  }

  RunResult fail(RunResult& result, std::string why) {
    std::string text = log_.str();
    constexpr std::size_t kTail = 12'000;
    if (text.size() > kTail) text = "...\n" + text.substr(text.size() - kTail);
    result.failure = "seed " + std::to_string(seed_) +
                     " (replay: CN_PROPERTY_SEED=" + std::to_string(seed_) + "): " + why +
                     "\n---- labelers' log ----\n" + text;
    return result;
  }

  EtcdServer& server_;
  etcd::EtcdApi& admin_;
  std::uint64_t seed_;
  std::mt19937_64 rng_;
  std::ostringstream log_;
};

class ClusterPropertyTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (!EtcdServer::available()) GTEST_SKIP() << EtcdServer::kBinary << " is not installed";
    server_ = std::make_unique<EtcdServer>();
    ASSERT_TRUE(server_->started()) << server_->log();
    admin_ = property_client(*server_, nullptr);
    ASSERT_TRUE(admin_);
  }

  std::unique_ptr<EtcdServer> server_;
  std::unique_ptr<etcd::CurlEtcdClient> admin_;
};

// Expected: in every run, every key the world protects is still there with its value; and the
// duties did act (deletable keys were deleted), so the property is not held by doing nothing.
TEST_P(ClusterPropertyTest, ZeroWrongDeletionsWithLeaderKillAndEtcdRestarts) {
  const int shard = GetParam();
  const long long replay = property_env("CN_PROPERTY_SEED", -1);
  const long long runs = property_env("CN_PROPERTY_RUNS", 1000);
  std::vector<std::uint64_t> seeds;
  if (replay >= 0) {
    if (shard != 0) GTEST_SKIP() << "CN_PROPERTY_SEED replays in shard 0 only";
    seeds.push_back(static_cast<std::uint64_t>(replay));
  } else {
    for (long long s = shard + 1; s <= runs; s += kPropertyShards)
      seeds.push_back(static_cast<std::uint64_t>(s));
  }
  std::size_t deletable = 0;
  std::size_t deleted = 0;
  int restarts = 0;
  std::map<std::string, std::pair<std::size_t, std::size_t>> by_kind;
  const auto started = std::chrono::steady_clock::now();
  for (std::uint64_t seed : seeds) {
    RunResult r = PropertyRun(*server_, *admin_, seed).run();
    ASSERT_TRUE(r.failure.empty()) << r.failure;
    deletable += r.deletable;
    deleted += r.deleted;
    restarts += r.restarted_etcd ? 1 : 0;
    for (const auto& [kind, n] : r.by_kind) {
      by_kind[kind].first += n.first;
      by_kind[kind].second += n.second;
    }
  }
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  std::printf(
      "property shard %d: %zu runs, %d with an etcd restart, %zu of %zu deletable keys "
      "deleted, %lld ms\n",
      shard, seeds.size(), restarts, deleted, deletable, static_cast<long long>(took.count()));
  // How much of each kind of deletable key the duties collected, so a duty that stopped
  // collecting shows in the log even while the property holds.
  for (const auto& [kind, n] : by_kind)
    std::printf("  %s: %zu of %zu deleted\n", kind.c_str(), n.first, n.second);
  if (seeds.size() >= 10) {
    EXPECT_GT(deleted, 0U) << "the duties deleted nothing deletable: the property held vacuously";
  }
}

INSTANTIATE_TEST_SUITE_P(Shards, ClusterPropertyTest, ::testing::Range(0, kPropertyShards));

// Expected: the checker fails a run whose keys a duty deleted wrongly. A deleting stub (a duty
// gone mad: everything under cilium/state/ at once) must be caught, naming protected keys;
// before it ran, the same world checks clean.
TEST(ClusterPropertyCheckerTest, CatchesADeletingStub) {
  if (!EtcdServer::available()) GTEST_SKIP() << EtcdServer::kBinary << " is not installed";
  EtcdServer server;
  ASSERT_TRUE(server.started()) << server.log();
  auto admin = property_client(server, nullptr);
  ASSERT_TRUE(admin);
  const World world = generate_world(7);
  ASSERT_GT(world.protected_count(), 0U);
  auto lease = admin->grant_lease(60s, property_soon());
  ASSERT_TRUE(lease);
  ASSERT_TRUE(seed_world(*admin, world, lease->id));
  auto clean = check_world(*admin, world, lease->id);
  ASSERT_TRUE(clean);
  EXPECT_TRUE(clean->violations.empty());

  etcd::TxnRequest wrong;
  wrong.success.push_back(etcd::TxnOp{
      etcd::TxnOp::Kind::delete_range, "cilium/state/", etcd::prefix_end("cilium/state/"), {}, 0});
  ASSERT_TRUE(admin->txn(wrong, property_soon()));
  auto caught = check_world(*admin, world, lease->id);
  ASSERT_TRUE(caught);
  EXPECT_FALSE(caught->violations.empty());
  bool named_an_identity_in_use = false;
  for (const auto& v : caught->violations)
    named_an_identity_in_use |= v.find("an identity in use") != std::string::npos;
  EXPECT_TRUE(named_an_identity_in_use) << ::testing::PrintToString(caught->violations);
  EXPECT_GT(caught->deletable_deleted, 0U);
}

// Expected: a changed value of a protected key is caught too (a duty that rewrote another
// writer's key), and an unprotected key's deletion is not a violation.
TEST(ClusterPropertyCheckerTest, CatchesAChangedValueButNotADeletableDeletion) {
  if (!EtcdServer::available()) GTEST_SKIP() << EtcdServer::kBinary << " is not installed";
  EtcdServer server;
  ASSERT_TRUE(server.started()) << server.log();
  auto admin = property_client(server, nullptr);
  ASSERT_TRUE(admin);
  World world;
  world.keys.push_back(SeededKey{"cilium/state/identities/v1/id/300", "k8s:app=a;", false, true,
                                 "an identity in use"});
  world.keys.push_back(SeededKey{"cilium/state/identities/v1/id/301", "k8s:app=b;", false, false,
                                 "an unused identity of this cluster"});
  ASSERT_TRUE(seed_world(*admin, world, 0));
  ASSERT_TRUE(admin->put("cilium/state/identities/v1/id/300", "k8s:app=z;", 0, property_soon()));
  etcd::TxnRequest del;
  del.success.push_back(
      etcd::TxnOp{etcd::TxnOp::Kind::delete_range, "cilium/state/identities/v1/id/301", {}, {}, 0});
  ASSERT_TRUE(admin->txn(del, property_soon()));
  auto verdict = check_world(*admin, world, 0);
  ASSERT_TRUE(verdict);
  ASSERT_EQ(verdict->violations.size(), 1U);
  EXPECT_NE(verdict->violations[0].find("changed: cilium/state/identities/v1/id/300"),
            std::string::npos);
  EXPECT_EQ(verdict->deletable_deleted, 1U);
}

}  // namespace
}  // namespace cn::testing::property
