// What the daemon keeps current between resyncs, with the in-memory APIs: the gauges of
// allocations waiting for their labels, the state entries gauge, and the identity of a reconcile's
// write once it resolves.
#include <gtest/gtest.h>

#include <unistd.h>

#include "common/notify/notify_client.h"
#include "common/state/state_store.h"
#include "labeler/daemon/labeler_daemon.h"
#include "tests/support/alloc_ids.h"
#include "tests/support/eventually.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/labeler/in_memory_apis.h"

namespace cn::labeler {
namespace {

using cn::testing::eventually;
using cn::testing::InMemoryCilium;
using cn::testing::InMemoryNomad;
using cn::testing::kWebLabels;
using cn::testing::make_alloc;

using cn::testing::kAllocId;

class UnlabeledDaemonTest : public ::testing::Test {
 protected:
  DaemonConfig config() const {
    DaemonConfig c;
    c.socket_path = dir_.file("run/labeler.sock");
    c.state_file = dir_.file("run/state.json");
    c.resync_interval = std::chrono::seconds{0};  // every reconcile below is the test's
    c.watch = WatchMode::kNone;
    c.metrics_addr = "";
    c.workers = 2;
    c.allowed_uids = {0, static_cast<unsigned>(::getuid())};
    return c;
  }

  state::StateStore store() { return {{dir_.file("run/state.json")}, system_clock(), nullptr}; }

  std::optional<state::StateEntry> entry() {
    auto doc = state::read_state_file(dir_.file("run/state.json"));
    if (!doc) return std::nullopt;
    auto it = doc->allocations.find(kAllocId);
    return it == doc->allocations.end() ? std::nullopt : std::optional(it->second);
  }

  // The plugin's ADD, `ago` before now.
  void plugin_added(std::chrono::milliseconds ago) {
    const WallTime added = system_clock().wall_now() - ago;
    state::StateEntry entry = cn::testing::plugin_entry();
    entry.added_at = rfc3339(added);
    entry.added_unix_ms = unix_millis(added);
    state::StateStore plugin_store = store();
    ASSERT_TRUE(cn::testing::record_plugin_add(plugin_store, kAllocId, std::move(entry)));
  }

  cn::testing::TempDir dir_;
  InMemoryNomad nomad_;
  InMemoryCilium cilium_;
};

// Expected: a reconcile labels an endpoint without waiting for its identity, and the state file
// shows that identity shortly after, with no second reconcile; nothing is left waiting.
TEST_F(UnlabeledDaemonTest, ReconcileWriteIsRecordedWithItsIdentityWithoutAnotherResync) {
  nomad_.put(make_alloc(kAllocId));
  const long long ep = cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  cilium_.gets_until_resolved = 2;  // not resolved when the reconcile's worker writes
  LabelerDaemon daemon(config(), nomad_, cilium_, system_clock(), nullptr);
  std::stop_source never;
  ASSERT_TRUE(daemon.start(never.get_token()));

  ASSERT_TRUE(eventually([&] {
    auto e = entry();
    return e && e->labeled && e->labeled->identity != 0;
  })) << "identity still "
      << (entry() && entry()->labeled ? entry()->labeled->identity : -1);
  EXPECT_EQ(entry()->labeled->identity, cilium_.get(ep).identity_id);
  EXPECT_EQ(entry()->labeled->labels, kWebLabels);
  EXPECT_EQ(daemon.metrics().reconcile_duration_seconds().Collect().histogram.sample_count, 1u)
      << "one reconcile only";
  ASSERT_TRUE(eventually([&] { return daemon.metrics().unlabeled_allocations().Value() == 0; }));
  EXPECT_EQ(daemon.metrics().state_entries().Value(), 1);
  daemon.stop();
}

// Expected: an allocation held back by the agent's --labels filter is counted as waiting since
// the plugin's ADD, with its age growing at every scrape, its reason in the entry and in the
// failure counter; once the agent is fixed, the next reconcile labels it and the gauges go to 0.
TEST_F(UnlabeledDaemonTest, FilteredAllocationWaitsSinceItsAddUntilTheFix) {
  nomad_.put(make_alloc(kAllocId));
  const long long ep = cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  cilium_.set_filtered_labels(ep, kWebLabels);
  plugin_added(std::chrono::minutes{10});
  LabelerDaemon daemon(config(), nomad_, cilium_, system_clock(), nullptr);
  std::stop_source never;
  ASSERT_TRUE(daemon.start(never.get_token()));
  auto& metrics = daemon.metrics();

  EXPECT_EQ(metrics.unlabeled_allocations().Value(), 1);
  EXPECT_GE(metrics.unlabeled_oldest_seconds().Value(), 600);
  EXPECT_LT(metrics.unlabeled_oldest_seconds().Value(), 660);
  EXPECT_GE(metrics.label_failures(LabelFailure::labels_filtered).Value(), 1);
  ASSERT_TRUE(entry() && entry()->last_attempt);
  EXPECT_EQ(entry()->last_attempt->reason, "labels_filtered");
  EXPECT_FALSE(entry()->labeled);
  // The scrape recomputes the age: the gauge does not stay at the last change's value.
  metrics.unlabeled_oldest_seconds().Set(0);
  EXPECT_NE(metrics.render().find("cilium_nomad_unlabeled_oldest_seconds 6"), std::string::npos);

  cilium_.set_filtered_labels(ep, {});
  ASSERT_TRUE(daemon.reconcile_now());
  ASSERT_TRUE(eventually([&] {
    auto e = entry();
    return e && e->labeled && e->labeled->identity != 0 && !e->last_attempt;
  }));
  ASSERT_TRUE(eventually([&] { return metrics.unlabeled_allocations().Value() == 0; }));
  EXPECT_EQ(metrics.unlabeled_oldest_seconds().Value(), 0);
  daemon.stop();
}

// Expected: the entries gauge follows the plugin's ADD and DEL as the notifications arrive, not
// only at the next resync.
TEST_F(UnlabeledDaemonTest, StateEntriesFollowAddAndDelBetweenResyncs) {
  LabelerDaemon daemon(config(), nomad_, cilium_, system_clock(), nullptr);
  std::stop_source never;
  ASSERT_TRUE(daemon.start(never.get_token()));
  auto& metrics = daemon.metrics();
  EXPECT_EQ(metrics.state_entries().Value(), 0);

  nomad_.put(make_alloc(kAllocId));
  cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  plugin_added(std::chrono::milliseconds{0});
  auto send = [&](notify::Op op) {
    notify::Request r;
    r.op = op;
    r.alloc_id = kAllocId;
    r.ifname = "eth0";
    r.ips = {"10.200.3.17"};
    r.wait_ms = 5000;
    auto& clock = system_clock();
    auto reply = notify::send_request(dir_.file("run/labeler.sock"), r, clock,
                                      clock.now() + std::chrono::seconds{6});
    ASSERT_TRUE(reply && *reply);
    if (op == notify::Op::kAdd) {
      EXPECT_EQ((*reply)->status, notify::ReplyStatus::kLabeled);
    }
  };
  send(notify::Op::kAdd);
  ASSERT_TRUE(eventually([&] { return metrics.state_entries().Value() == 1; }));
  // The reply goes out first; the gauge follows the outcome right after.
  EXPECT_TRUE(eventually([&] { return metrics.unlabeled_allocations().Value() == 0; }));

  bool removed = false;
  ASSERT_TRUE(store().remove_entry(kAllocId, removed));  // the plugin's DEL, then its notification
  ASSERT_TRUE(removed);
  send(notify::Op::kDel);
  ASSERT_TRUE(eventually([&] { return metrics.state_entries().Value() == 0; }));
  daemon.stop();
}

}  // namespace
}  // namespace cn::labeler
