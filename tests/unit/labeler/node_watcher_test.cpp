// --watch node against the in-memory Nomad: blocking queries driven by a condition variable,
// time (backoff, pauses) driven by a ManualClock. No test sleeps to let something happen.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "labeler/watch/node_watcher.h"
#include "tests/support/eventually.h"
#include "tests/support/manual_clock.h"
#include "tests/support/recorder.h"
#include "tests/unit/labeler/in_memory_apis.h"

namespace cn::labeler {
namespace {

using namespace std::chrono_literals;
using cn::testing::InMemoryNomad;
using cn::testing::make_alloc;
using cn::testing::NomadCall;

using ::cn::testing::eventually;

using Recorder = ::cn::testing::Recorder<WorkItem>;

std::string uuid(int n) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "0b5e2a71-3b9d-4f21-8e6a-%012d", n);
  return buf;
}

class NodeWatch : public ::testing::Test {
 protected:
  NodeWatch() { nomad.set_blocking(true); }
  ~NodeWatch() override { stop(); }

  nomad::Allocation alloc(int n, std::uint64_t modify_index,
                          const std::string& address = "10.200.3.17",
                          const std::string& client_status = "running") {
    auto a = make_alloc(uuid(n), "web", "app", client_status);
    a.modify_index = modify_index;
    if (!address.empty()) a.network_status = nomad::NetworkStatus{"eth0", address, ""};
    return a;
  }

  static NodeWatchOptions seeded(std::uint64_t index) {
    NodeWatchOptions o;
    o.initial_index = index;
    return o;
  }

  void start(NodeWatchOptions options) {
    options.seed = 7;
    watcher = std::make_unique<NodeWatcher>(
        WatcherDeps{nomad, clock, metrics, calls, nomad.node_id, recorder.fn(),
                    [this] { resyncs.fetch_add(1); }, nullptr},
        options);
    thread = std::jthread([this](std::stop_token st) { watcher->run(st); });
  }
  void stop() {
    if (!thread.joinable()) return;
    thread.request_stop();
    nomad.set_blocking(false);  // a query parked in the double returns; later ones do not park
    thread.join();
  }
  // The watcher made `made` node calls and now sleeps on the clock (backoff or pause).
  bool sleeping_after(int made) {
    return eventually(
        [&] { return nomad.calls(NomadCall::node_allocations) == made && clock.sleepers() == 1; });
  }

  InMemoryNomad nomad;
  ManualClock clock;
  Metrics metrics;
  CallRecorder calls{metrics};
  Recorder recorder;
  std::atomic<int> resyncs{0};
  std::unique_ptr<NodeWatcher> watcher;
  std::jthread thread;
};

TEST_F(NodeWatch, WakesOnChangeAndEnqueuesExactlyTheChangedAlloc) {
  nomad.put(alloc(1, 100));
  nomad.put(alloc(2, 110));
  start(seeded(110));
  ASSERT_TRUE(nomad.wait_for_blocked(1));
  EXPECT_TRUE(recorder.items().empty()) << "the seed index covers what the first reconcile saw";

  nomad.put(alloc(2, 120, "10.200.3.18"));
  ASSERT_TRUE(recorder.wait_for(1));
  ASSERT_TRUE(eventually(
      [&] { return nomad.blocked() == 1 && nomad.node_allocation_indexes().size() == 2; }));
  EXPECT_EQ(nomad.node_allocation_indexes(), (std::vector<std::uint64_t>{110, 120}));

  auto items = recorder.items();
  ASSERT_EQ(items.size(), 1u);
  const WorkItem& item = items[0];
  EXPECT_EQ(item.alloc_id, uuid(2));
  EXPECT_EQ(item.source, WorkSource::kWatch);
  EXPECT_FALSE(item.confirm);
  EXPECT_EQ(item.ifname, "eth0");
  EXPECT_EQ(item.ips, (std::vector<std::string>{"10.200.3.18"}));
  ASSERT_TRUE(item.alloc.has_value())
      << "node allocations embed the Job: the worker needs no Nomad call";
  EXPECT_TRUE(item.alloc->job.has_value());
  EXPECT_EQ(resyncs.load(), 0);
  EXPECT_EQ(watcher->index(), 120u);
}

// A Job is decoded once per allocation and ModifyIndex (the rest of each answer's Job
// bytes are skipped undecoded): everything on the first answer, then the new and changed ones,
// which include every allocation enqueued.
TEST_F(NodeWatch, DecodesTheJobOnlyOfNewAndChangedAllocations) {
  nomad.put(alloc(1, 100));
  nomad.put(alloc(2, 110));
  start(seeded(0));
  ASSERT_TRUE(recorder.wait_for(2));
  ASSERT_TRUE(nomad.wait_for_blocked(1));
  nomad.put(alloc(2, 120, "10.200.3.18"));
  ASSERT_TRUE(recorder.wait_for(3));
  ASSERT_TRUE(eventually([&] { return nomad.blocked() == 1 && watcher->index() == 120; }));
  nomad.put(alloc(3, 130, "10.200.3.19"));
  ASSERT_TRUE(recorder.wait_for(4));
  ASSERT_TRUE(eventually([&] { return nomad.blocked() == 1 && watcher->index() == 130; }));

  EXPECT_EQ(nomad.node_allocation_jobs(),
            (std::vector<std::vector<std::string>>{{uuid(1), uuid(2)}, {uuid(2)}, {uuid(3)}}));
  for (const auto& item : recorder.items()) {
    ASSERT_TRUE(item.alloc.has_value());
    EXPECT_TRUE(item.alloc->job.has_value()) << item.alloc_id;
  }
}

// With a seed the first answer enqueues only what changed since, yet decodes every Job once (what
// the node runs, for whoever reads the answer); a terminal allocation, never tracked, is not
// decoded again.
TEST_F(NodeWatch, SeededFirstAnswerDecodesEveryJobOnceTerminalOnesIncluded) {
  nomad.put(alloc(1, 100));
  nomad.put(alloc(2, 105, "10.200.3.20", "complete"));
  start(seeded(105));
  ASSERT_TRUE(nomad.wait_for_blocked(1));
  nomad.put(alloc(3, 110, "10.200.3.21"));  // the seeded query parks: this ends it
  ASSERT_TRUE(recorder.wait_for(1));
  ASSERT_TRUE(eventually([&] { return nomad.blocked() == 1 && watcher->index() == 110; }));
  nomad.put(alloc(4, 120, "10.200.3.22"));
  ASSERT_TRUE(recorder.wait_for(2));
  ASSERT_TRUE(eventually([&] { return nomad.blocked() == 1 && watcher->index() == 120; }));
  EXPECT_EQ(nomad.node_allocation_jobs(),
            (std::vector<std::vector<std::string>>{{uuid(1), uuid(2), uuid(3)}, {uuid(4)}}));
}

TEST_F(NodeWatch, SkipsAllocsWithoutAddressAndTerminalOnes) {
  nomad.put(alloc(1, 100));
  start(seeded(100));
  ASSERT_TRUE(nomad.wait_for_blocked(1));
  nomad.put(alloc(2, 101, ""));  // placed, the client has not reported NetworkStatus yet
  ASSERT_TRUE(eventually([&] { return watcher->index() == 101 && nomad.blocked() == 1; }));
  nomad.put(alloc(3, 102, "10.200.3.20", "complete"));
  ASSERT_TRUE(eventually([&] { return watcher->index() == 102 && nomad.blocked() == 1; }));
  auto stopped = alloc(4, 103, "10.200.3.21");
  stopped.desired_status = "stop";
  nomad.put(stopped);
  ASSERT_TRUE(eventually([&] { return watcher->index() == 103 && nomad.blocked() == 1; }));
  EXPECT_TRUE(recorder.items().empty());

  nomad.put(alloc(2, 104, "10.200.3.19"));  // now it has its address
  ASSERT_TRUE(recorder.wait_for(1));
  EXPECT_EQ(recorder.ids(), (std::vector<std::string>{uuid(2)}));
}

TEST_F(NodeWatch, WithoutSeedTheFirstListingEnqueuesEverythingThatWantsLabels) {
  nomad.put(alloc(1, 100));
  nomad.put(alloc(2, 101, ""));
  nomad.put(alloc(3, 102, "10.200.3.20", "failed"));
  start(NodeWatchOptions{});
  ASSERT_TRUE(nomad.wait_for_blocked(1));
  EXPECT_EQ(recorder.ids(), (std::vector<std::string>{uuid(1)}));
  EXPECT_EQ(nomad.node_allocation_indexes(), (std::vector<std::uint64_t>{0, 102}));
}

// Nomad's GC deletes the newest allocation: GetAllocs answers the max ModifyIndex of what is
// left, below the index asked with, once the wait runs out. Normal operation, not a restore.
TEST_F(NodeWatch, GarbageCollectionLoweringTheIndexIsNotAReset) {
  nomad.put(alloc(1, 100));
  nomad.put(alloc(2, 110, "10.200.3.18", "complete"));
  start(seeded(110));
  ASSERT_TRUE(nomad.wait_for_blocked(1));
  nomad.put(alloc(3, 120, "10.200.3.19"));
  ASSERT_TRUE(recorder.wait_for(1));
  ASSERT_TRUE(eventually([&] { return watcher->index() == 120 && nomad.blocked() == 1; }));

  nomad.remove(uuid(3), 130);  // stopped and collected: the newest left is alloc 1 at 100
  nomad.remove(uuid(2), 130);
  nomad.expire_blocking();
  // The double answers at once where Nomad waits the query out: the quiet pause applies.
  ASSERT_TRUE(sleeping_after(2));
  clock.advance(1s);
  ASSERT_TRUE(eventually([&] { return watcher->index() == 100 && nomad.blocked() == 1; }));
  EXPECT_EQ(nomad.node_allocation_indexes(), (std::vector<std::uint64_t>{110, 120, 100}))
      << "blocks from the server's index, no index-0 listing";
  EXPECT_EQ(resyncs.load(), 0);
  EXPECT_EQ(metrics.errors(ErrorKindLabel::nomad_index_reset).Value(), 0);
  EXPECT_EQ(metrics.watch_reconnects(WatchMode::kNode).Value(), 0);

  nomad.put(alloc(4, 140, "10.200.3.20"));  // and later changes still wake it
  ASSERT_TRUE(recorder.wait_for(2));
  EXPECT_EQ(recorder.ids(), (std::vector<std::string>{uuid(3), uuid(4)}));
}

// The first blocking query after start parks up to 5 minutes on the daemon's reconcile index,
// with nothing remembered yet: a GC in that window must not look like a restore either.
TEST_F(NodeWatch, GarbageCollectionBeforeTheFirstAnswerIsNotAReset) {
  nomad.put(alloc(1, 100));
  nomad.put(alloc(2, 110, "10.200.3.18", "failed"));
  start(seeded(110));
  ASSERT_TRUE(nomad.wait_for_blocked(1));
  nomad.remove(uuid(2), 115);
  nomad.expire_blocking();
  ASSERT_TRUE(sleeping_after(1));
  clock.advance(1s);
  ASSERT_TRUE(eventually([&] { return watcher->index() == 100 && nomad.blocked() == 1; }));
  EXPECT_EQ(nomad.node_allocation_indexes(), (std::vector<std::uint64_t>{110, 100}));
  EXPECT_EQ(resyncs.load(), 0);
  EXPECT_EQ(metrics.errors(ErrorKindLabel::nomad_index_reset).Value(), 0);
  EXPECT_TRUE(recorder.items().empty());
}

// With none left, GetAllocs answers the allocs table index, which the GC moved up.
TEST_F(NodeWatch, CollectingEveryAllocationMovesTheIndexUp) {
  nomad.put(alloc(1, 100, "10.200.3.17", "complete"));
  start(seeded(100));
  ASSERT_TRUE(nomad.wait_for_blocked(1));
  nomad.remove(uuid(1), 150);
  nomad.expire_blocking();
  // The removal itself may already have woken the parked query; the expiry then ends the next
  // one early and unchanged, which the watcher follows with its quiet pause on the clock: move
  // the clock past it whenever the watcher sleeps, until it parks again.
  ASSERT_TRUE(eventually([&] {
    if (watcher->index() == 150 && nomad.blocked() == 1) return true;
    if (clock.sleepers() == 1) clock.advance(1s);
    return false;
  }));
  EXPECT_EQ(watcher->index(), 150U);
  EXPECT_EQ(resyncs.load(), 0);
}

TEST_F(NodeWatch, IndexResetRequestsResyncAndRestartsFromZero) {
  nomad.put(alloc(1, 1200));
  start(seeded(1200));
  ASSERT_TRUE(nomad.wait_for_blocked(1));
  nomad.put(alloc(2, 1240, "10.200.3.18"));
  ASSERT_TRUE(recorder.wait_for(1));
  ASSERT_TRUE(eventually([&] { return watcher->index() == 1240 && nomad.blocked() == 1; }));

  // Servers restored from an older snapshot into a younger Raft log: alloc 1 is back to an
  // older version, which no GC can produce.
  nomad.remove(uuid(2));
  nomad.put(alloc(1, 40));
  nomad.set_index(50);
  nomad.expire_blocking();
  ASSERT_TRUE(eventually([&] { return resyncs.load() == 1 && nomad.blocked() == 1; }));
  EXPECT_EQ(nomad.node_allocation_indexes(), (std::vector<std::uint64_t>{1200, 1240, 0, 50}));
  EXPECT_EQ(recorder.items().size(), 1u) << "the resync labels what the baseline listing showed";
  EXPECT_EQ(metrics.errors(ErrorKindLabel::nomad_index_reset).Value(), 1);

  // And it keeps watching from the new index.
  nomad.set_index(std::nullopt);
  nomad.put(alloc(3, 60, "10.200.3.30"));
  ASSERT_TRUE(recorder.wait_for(2));
  EXPECT_EQ(recorder.ids(), (std::vector<std::string>{uuid(2), uuid(3)}));
  EXPECT_EQ(resyncs.load(), 1);
}

// A younger log (a cluster rebuilt, its index restarted near zero) shows a live allocation this
// node never had below the index it asked with: impossible after a GC, so a reset.
TEST_F(NodeWatch, UnknownLiveAllocationBelowTheAskedIndexIsAReset) {
  nomad.put(alloc(1, 1200));
  start(seeded(1200));
  ASSERT_TRUE(nomad.wait_for_blocked(1));
  nomad.put(alloc(2, 1240, "10.200.3.18"));
  ASSERT_TRUE(recorder.wait_for(1));
  ASSERT_TRUE(eventually([&] { return watcher->index() == 1240 && nomad.blocked() == 1; }));

  nomad.remove(uuid(1));
  nomad.remove(uuid(2));
  nomad.put(alloc(7, 30, "10.200.3.70"));
  nomad.expire_blocking();
  ASSERT_TRUE(eventually([&] { return resyncs.load() == 1 && nomad.blocked() == 1; }));
  EXPECT_EQ(nomad.node_allocation_indexes(), (std::vector<std::uint64_t>{1200, 1240, 0, 30}));
  EXPECT_EQ(metrics.errors(ErrorKindLabel::nomad_index_reset).Value(), 1);
}

TEST_F(NodeWatch, BacksOffOnServerErrorsAndRecovers) {
  nomad.put(alloc(1, 100));
  nomad.fail_next(3, 500);
  auto options = seeded(100);
  options.backoff = BackoffPolicy{1s, 4s, 250ms};
  start(options);
  for (int call = 1; call <= 3; ++call) {
    // Each failure is followed by exactly one sleep on the clock: no call until time moves.
    ASSERT_TRUE(sleeping_after(call)) << "call " << call;
    EXPECT_EQ(nomad.calls(NomadCall::node_allocations), call);
    clock.advance(4s);
  }
  ASSERT_TRUE(nomad.wait_for_blocked(1));
  EXPECT_EQ(nomad.calls(NomadCall::node_allocations), 4);
  EXPECT_EQ(metrics.errors(ErrorKindLabel::nomad_watch).Value(), 3);
  EXPECT_EQ(metrics.watch_reconnects(WatchMode::kNode).Value(), 3);

  nomad.put(alloc(1, 130, "10.200.3.40"));
  ASSERT_TRUE(recorder.wait_for(1));
  EXPECT_EQ(recorder.ids(), (std::vector<std::string>{uuid(1)}));
}

TEST_F(NodeWatch, InstantUnchangedAnswersPauseInsteadOfSpinning) {
  nomad.set_blocking(false);  // a server (or proxy) that ignores ?index=
  nomad.put(alloc(1, 100));
  auto options = seeded(100);
  options.min_quiet_interval = 1s;
  start(options);
  ASSERT_TRUE(sleeping_after(1));
  clock.advance(1s);
  ASSERT_TRUE(sleeping_after(2));
  EXPECT_TRUE(recorder.items().empty());
}

TEST_F(NodeWatch, EmptyNodeIndexZeroIsNotAReset) {
  nomad.set_blocking(false);
  nomad.set_index(0);
  start(NodeWatchOptions{});
  ASSERT_TRUE(sleeping_after(2));  // index 0, then 1 (never 0 again), then the quiet pause
  EXPECT_EQ(nomad.node_allocation_indexes(), (std::vector<std::uint64_t>{0, 1}));
  EXPECT_EQ(resyncs.load(), 0);
}

TEST_F(NodeWatch, StopIsPromptWhileBackingOff) {
  nomad.fail_next(1000, 0);
  auto options = seeded(100);
  options.backoff = BackoffPolicy{1h, 1h, 1h};
  start(options);
  ASSERT_TRUE(sleeping_after(1));
  auto before = std::chrono::steady_clock::now();
  stop();
  EXPECT_LT(std::chrono::steady_clock::now() - before, 5s);
  EXPECT_EQ(nomad.calls(NomadCall::node_allocations), 1);
}

TEST(WatchBackoff, FullJitterWithinFloorAndExponentialCeiling) {
  BackoffPolicy policy{1s, 60s, 250ms};
  BackoffJitter jitter(42);
  for (int attempt = 0; attempt < 12; ++attempt) {
    auto ceiling = std::min<long long>(60'000, 1'000LL << std::min(attempt, 20));
    long long max_seen = 0;
    for (int i = 0; i < 500; ++i) {
      long long d = policy.delay(attempt, jitter).count();
      ASSERT_GE(d, 250);
      ASSERT_LE(d, ceiling);
      max_seen = std::max(max_seen, d);
    }
    EXPECT_GT(max_seen, ceiling * 8 / 10) << "attempt " << attempt << ": the range is used";
  }
  EXPECT_LE(policy.delay(1'000'000, jitter), 60s) << "no overflow on a huge attempt count";
}

}  // namespace
}  // namespace cn::labeler

namespace cn::labeler {
namespace {

// The watch's allocation cache: filled before the plugin's ADD, refreshed by an
// in-place job update within one round trip, forgotten on a reset.
TEST_F(NodeWatch, KeepsTheCacheOfEveryLiveAllocationItAnswersWith) {
  AllocCache cache({"team"});
  NodeWatchOptions options = seeded(0);
  options.cache = &cache;
  nomad.put(alloc(1, 100, ""));  // placed, no network yet: nothing to label, but cached
  start(options);
  ASSERT_TRUE(nomad.wait_for_blocked(1));
  ASSERT_TRUE(cache.identity(uuid(1)));
  EXPECT_EQ(cache.identity(uuid(1))->job_meta.at("team"), "payments");
  EXPECT_TRUE(recorder.items().empty());

  // A job update Nomad applies in place: the allocation's ModifyIndex goes up with the new Job.
  auto updated = alloc(1, 120);
  updated.job->meta["team"] = "search";
  nomad.put(updated);
  ASSERT_TRUE(recorder.wait_for(1));
  EXPECT_EQ(cache.identity(uuid(1))->job_meta.at("team"), "search");
  ASSERT_TRUE(recorder.items()[0].alloc) << "the relabel carries Nomad's new answer";
  EXPECT_EQ(recorder.items()[0].alloc->job->meta.at("team"), "search");

  // Stopped and collected: gone from the cache with the next answer.
  nomad.put(alloc(1, 130, "10.200.3.17", "complete"));
  ASSERT_TRUE(eventually([&] { return cache.size() == 0; }));
}

TEST_F(NodeWatch, AnIndexResetEmptiesTheCacheUntilTheBaseline) {
  AllocCache cache({});
  NodeWatchOptions options = seeded(0);
  options.cache = &cache;
  nomad.put(alloc(1, 1200));
  start(options);
  ASSERT_TRUE(nomad.wait_for_blocked(1));
  ASSERT_EQ(cache.size(), 1u);
  nomad.remove(uuid(1));
  nomad.put(alloc(2, 40));  // a live allocation never seen, below the asked index: a restore
  nomad.set_index(50);
  nomad.expire_blocking();
  ASSERT_TRUE(eventually([&] { return resyncs.load() == 1; }));
  EXPECT_FALSE(cache.identity(uuid(1)));
  EXPECT_TRUE(cache.identity(uuid(2))) << "rebuilt from the baseline listing";
}

}  // namespace
}  // namespace cn::labeler
