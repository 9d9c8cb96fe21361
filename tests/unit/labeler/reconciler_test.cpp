#include <gtest/gtest.h>

#include "labeler/daemon/work_queue.h"
#include "labeler/watch/reconciler.h"
#include "tests/support/netns.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/labeler/in_memory_apis.h"

namespace cn::labeler {
namespace {

using cn::testing::CiliumCall;
using cn::testing::InMemoryCilium;
using cn::testing::InMemoryNomad;
using cn::testing::make_alloc;
using cn::testing::NomadCall;
using cn::testing::random_alloc_id;

class ReconcilerTest : public ::testing::Test {
 protected:
  ReconcilerTest()
      : state_({dir_.file("state.json")}, system_clock(), nullptr),
        labeler_(LabelPathDeps{nomad_, cilium_, state_, system_clock(), metrics_, calls_, nullptr},
                 LabelSettings{}),
        reconciler_(
            LabelPathDeps{nomad_, cilium_, state_, system_clock(), metrics_, calls_, nullptr},
            LabelSettings{}),
        queue_(system_clock(), 4, 10000, [this](WorkItem w) { labeler_.label(w); }) {
    queue_.start();
  }

  Result<ReconcileReport> run() {
    auto r = reconciler_.run(nomad_.node_id,
                             [this](WorkItem w) { return queue_.enqueue(std::move(w)); });
    EXPECT_TRUE(queue_.wait_idle(std::chrono::seconds{30}));
    return r;
  }

  cn::testing::TempDir dir_;
  InMemoryNomad nomad_;
  InMemoryCilium cilium_;
  Metrics metrics_;
  CallRecorder calls_{metrics_};
  state::StateStore state_;
  AllocLabeler labeler_;
  Reconciler reconciler_;
  WorkQueue queue_;
};

TEST_F(ReconcilerTest, TwoHundredEndpointsCostOneListOneNodeCallNoJobCallsAndOneWriteEach) {
  cilium_.add_reserved_endpoints();
  std::vector<long long> eps;
  for (int i = 0; i < 200; ++i) {
    std::string id = random_alloc_id();
    nomad_.put(make_alloc(id, "job" + std::to_string(i % 7)));
    eps.push_back(cilium_.add_init_endpoint(
        id, "10.200." + std::to_string(i / 250) + "." + std::to_string(i % 250)));
  }
  auto report = run();
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->endpoints, 200u);
  EXPECT_EQ(report->enqueued, 200u);
  EXPECT_EQ(cilium_.calls(CiliumCall::list), 1);
  EXPECT_EQ(nomad_.calls(NomadCall::node_allocations), 1);
  EXPECT_EQ(nomad_.calls(NomadCall::allocation), 0);
  EXPECT_EQ(nomad_.calls(NomadCall::job), 0);
  EXPECT_EQ(cilium_.calls(CiliumCall::patch_endpoint), 200);
  for (auto ep : eps) EXPECT_FALSE(cilium::is_init(cilium_.get(ep)));
  EXPECT_EQ(cilium_.get(1).identity_labels, std::vector<std::string>{"reserved:host"})
      << "host untouched";

  // A second pass finds everything right: no write at all, and the state learns the identities.
  auto second = run();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->correct, 200u);
  EXPECT_EQ(second->enqueued, 0u);
  EXPECT_EQ(cilium_.calls(CiliumCall::patch_endpoint), 200);
  auto doc = state_.load();
  ASSERT_TRUE(doc);
  EXPECT_EQ(doc->allocations.size(), 200u) << "state rebuilt from Cilium and Nomad";
  for (const auto& [id, e] : doc->allocations) {
    ASSERT_TRUE(e.labeled) << id;
    EXPECT_GE(e.labeled->identity, 256);
  }
}

TEST_F(ReconcilerTest, DropsEntriesOfTerminalAndUnknownAllocationsOnly) {
  std::string live = random_alloc_id(), done = random_alloc_id(), gone = random_alloc_id(),
              elsewhere = random_alloc_id();
  nomad_.put(make_alloc(live));
  nomad_.put(make_alloc(done, "web", "app", "complete"));
  auto other_node = make_alloc(elsewhere);
  other_node.node_id = "11111111-2222-3333-4444-555555555555";
  nomad_.put(other_node);  // Nomad knows it, but not on this node: kept after the confirming GET
  cilium_.add_init_endpoint(live, "10.200.3.1");
  ASSERT_TRUE(state_.update([&](state::StateDoc& d) {
    for (const auto& id : {live, done, gone, elsewhere}) d.allocations[id].ifname = "eth0";
    return true;
  }));
  auto report = run();
  ASSERT_TRUE(report);
  EXPECT_EQ(report->dropped_entries, 2u);
  EXPECT_EQ(nomad_.calls(NomadCall::allocation), 2)
      << "one confirming GET per entry the node list lacks";
  auto doc = state_.load();
  ASSERT_TRUE(doc);
  EXPECT_TRUE(doc->allocations.contains(live));
  EXPECT_TRUE(doc->allocations.contains(elsewhere));
  EXPECT_FALSE(doc->allocations.contains(done));
  EXPECT_FALSE(doc->allocations.contains(gone));
}

// Expected: what a pass finds unlabeled is reported with the plugin's ADD time, handed to the
// tracker before any work runs, and a filtered endpoint's reason is counted and recorded in its
// entry; an endpoint found correct clears an old reason.
TEST_F(ReconcilerTest, ReportsWhatWaitsSinceWhenAndRecordsWhyItCannotBeLabeled) {
  const std::string filtered = random_alloc_id(), unlabeled = random_alloc_id(),
                    correct = random_alloc_id();
  for (const auto& id : {filtered, unlabeled, correct}) nomad_.put(make_alloc(id));
  const std::vector<std::string> web = {
      "k8s:io.cilium.k8s.policy.cluster=default", "k8s:io.kubernetes.pod.namespace=default",
      "nomad:nomad.group=app", "nomad:nomad.job=web", "nomad:nomad.namespace=default"};
  cilium_.set_filtered_labels(cilium_.add_init_endpoint(filtered, "10.200.3.1"), web);
  cilium_.add_init_endpoint(unlabeled, "10.200.3.2");
  cilium_.set_identity_labels(cilium_.add_init_endpoint(correct, "10.200.3.3"), web);
  ASSERT_TRUE(state_.update([&](state::StateDoc& d) {
    for (const auto& id : {filtered, unlabeled, correct}) d.allocations[id].added_unix_ms = 1000;
    d.allocations[correct].last_attempt = state::LastAttempt{"endpoint_not_found", "x", "y"};
    return true;
  }));
  UnlabeledTracker tracker(system_clock(), metrics_);
  reconciler_.track_unlabeled(tracker);
  std::size_t tracked_at_first_work = 0;
  auto report = reconciler_.run(nomad_.node_id, [&](WorkItem) {
    if (tracked_at_first_work == 0) tracked_at_first_work = tracker.size();
    return true;  // taken, not run: the entries stay as the pass left them
  });
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->unlabeled,
            (std::map<std::string, long long>{{filtered, 1000}, {unlabeled, 1000}}));
  EXPECT_EQ(tracked_at_first_work, 2u) << "the tracker had the view before the work ran";
  EXPECT_EQ(metrics_.label_failures(LabelFailure::labels_filtered).Value(), 1);
  auto doc = state_.load();
  ASSERT_TRUE(doc);
  ASSERT_TRUE(doc->allocations.at(filtered).last_attempt);
  EXPECT_EQ(doc->allocations.at(filtered).last_attempt->reason, "labels_filtered");
  EXPECT_FALSE(doc->allocations.at(unlabeled).last_attempt);
  EXPECT_FALSE(doc->allocations.at(correct).last_attempt);
  EXPECT_TRUE(doc->allocations.at(correct).labeled);
}

TEST_F(ReconcilerTest, DeletedAllocationIsNotRebuiltFromListsThatStillShowItAlive) {
  // The plugin's DEL runs before cilium-cni's DEL (the chain unwinds in reverse) and before the
  // client tells Nomad the allocation stopped: for a while both lists still show it alive.
  const std::string id = random_alloc_id();
  nomad_.put(make_alloc(id));
  auto ep = cilium_.add_init_endpoint(id, "10.200.3.1");
  cilium_.set_identity_labels(
      ep, {"k8s:io.cilium.k8s.policy.cluster=default", "k8s:io.kubernetes.pod.namespace=default",
           "nomad:nomad.group=app", "nomad:nomad.job=web", "nomad:nomad.namespace=default"});
  bool removed = false;
  ASSERT_TRUE(state_.remove_entry(id, removed));
  auto report = run();
  ASSERT_TRUE(report);
  EXPECT_EQ(report->correct, 1u);
  auto doc = state_.load();
  ASSERT_TRUE(doc);
  EXPECT_FALSE(doc->allocations.contains(id)) << "resurrected by the reconcile";
  EXPECT_TRUE(doc->deleted.contains(id));
}

TEST_F(ReconcilerTest, TombstonesExpireAfterTheirTtl) {
  const std::string old_id = random_alloc_id(), recent_id = random_alloc_id();
  const long long now_ms = unix_millis(system_clock().wall_now());
  const long long ttl_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(state::kTombstoneTtl).count();
  ASSERT_TRUE(state_.update([&](state::StateDoc& d) {
    d.deleted[old_id] = now_ms - ttl_ms - 1000;
    d.deleted[recent_id] = now_ms - 1000;
    return true;
  }));
  ASSERT_TRUE(run());
  auto doc = state_.load();
  ASSERT_TRUE(doc);
  EXPECT_FALSE(doc->deleted.contains(old_id));
  EXPECT_TRUE(doc->deleted.contains(recent_id));
}

TEST_F(ReconcilerTest, OrphanEndpointsAreReportedNeverDeleted) {
  cilium_.add_init_endpoint(random_alloc_id(), "10.200.3.9");
  auto report = run();
  ASSERT_TRUE(report);
  EXPECT_EQ(report->orphans, 1u);
  EXPECT_EQ(cilium_.calls(CiliumCall::del), 0);
  EXPECT_EQ(metrics_.orphan_endpoints().Value(), 1);
}

TEST_F(ReconcilerTest, FailsCleanlyWhenNomadIsDown) {
  nomad_.fail_next(1, 500);
  auto report = run();
  ASSERT_FALSE(report);
  EXPECT_EQ(cilium_.calls(CiliumCall::patch_endpoint), 0);
}

}  // namespace
}  // namespace cn::labeler
