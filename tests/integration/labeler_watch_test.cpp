// The two watch modes against the faithful fake Nomad over real sockets, through the real curl
// client: blocking queries, index resets, injected 500s, event streams dropped after N events,
// denied streams that end before their first heartbeat, and unusable lines.
//
// Clocks: the fake runs on its own ManualClock (its blocking waits end only when a test moves
// it); the watcher and its client share either the system clock (with millisecond backoff) or a
// ManualClock when a test counts what happens per backoff step. Waits are bounded and on
// conditions, never fixed sleeps.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "common/nomad/client/curl_nomad_client.h"
#include "labeler/watch/event_watcher.h"
#include "labeler/watch/node_watcher.h"
#include "tests/fakes/nomad/fake_nomad.h"
#include "tests/support/eventually.h"
#include "tests/support/manual_clock.h"
#include "tests/support/recorder.h"

namespace cn::labeler {
namespace {

using namespace std::chrono_literals;
using fakes::FakeNomad;
using fakes::FakeNomadConfig;

constexpr const char* kNode = "f2c1e0b9-3a4d-5e6f-7a8b-9c0d1e2f3a4b";
constexpr const char* kOtherNode = "7e9a1c3b-5d2f-4a6e-8b0c-1d3e5f7a9b2c";

using ::cn::testing::eventually;

using Recorder = ::cn::testing::Recorder<WorkItem>;

FakeNomadConfig fake_config(Clock& clock) {
  FakeNomadConfig cfg;
  cfg.clock = &clock;
  cfg.node_id = kNode;
  cfg.initial_index = 1000;
  cfg.blocking_jitter = false;
  return cfg;
}

std::uint64_t query_index(const std::string& target) {
  auto at = target.find("index=");
  if (at == std::string::npos) return 0;
  return std::stoull(target.substr(at + 6));
}

class LabelerWatch : public ::testing::Test {
 protected:
  LabelerWatch() : fake(fake_config(fake_clock)) {}

  void SetUp() override { setup(fake); }

  void setup(FakeNomad& nomad) {
    ASSERT_TRUE(nomad.start());
    fakes::NodeRecord other;
    other.id = kOtherNode;
    other.name = "worker-2";
    other.ip = "10.0.1.16";
    nomad.add_node(other);
    fakes::JobSpec job;
    job.id = "web";
    job.meta = {{"team", "payments"}};
    ASSERT_TRUE(nomad.register_job(job));
  }

  ~LabelerWatch() override {
    if (thread.joinable()) thread.request_stop();
    // Wakes a parked blocking query so the watcher's call returns and it sees the stop.
    fake.stop();
    if (modern) modern->stop();
    if (thread.joinable()) thread.join();
  }

  // Owned by the fixture: the watcher thread uses it until the destructor joined it.
  nomad::CurlNomadClient& client(FakeNomad& nomad, Clock& clock, std::string token = "") {
    nomad::NomadClientConfig cfg;
    cfg.address = nomad.address();
    cfg.token = std::move(token);
    cfg.retry.max_attempts = 1;  // the watcher's own backoff is under test, not the client's
    cfg.retry_seed = 3;
    auto c = nomad::CurlNomadClient::create(cfg, clock);
    if (!c) throw std::runtime_error(c.error().message);
    api_ = std::move(*c);
    return *api_;
  }

  std::string place(const std::string& node = kNode) {
    fakes::PlaceRequest p;
    p.job_id = "web";
    p.node_id = node;
    auto id = fake.place_alloc(p);
    EXPECT_TRUE(id) << (id ? "" : id.error().message);
    return id.value_or("");
  }
  void network(const std::string& id, const std::string& address) {
    ASSERT_TRUE(fake.set_network_status(id, fakes::NetworkStatusSpec{address, "", "eth0"}));
  }
  std::uint64_t modify_index(const std::string& id) const {
    auto a = fake.alloc(id);
    return a ? a->modify_index : 0;
  }
  std::vector<std::uint64_t> asked_indexes(const FakeNomad& nomad, const std::string& route) const {
    std::vector<std::uint64_t> out;
    for (const auto& r : nomad.requests()) {
      if (r.route == route) out.push_back(query_index(r.target));
    }
    return out;
  }

  void run(std::unique_ptr<Watcher> w) {
    watcher = std::move(w);
    thread = std::jthread([this](std::stop_token st) { watcher->run(st); });
  }
  NodeWatcher& start_node(nomad::NomadApi& api, Clock& clock, NodeWatchOptions options) {
    options.seed = 5;
    auto w =
        std::make_unique<NodeWatcher>(WatcherDeps{api, clock, metrics, calls, kNode, recorder.fn(),
                                                  [this] { resyncs.fetch_add(1); }, nullptr},
                                      options);
    auto& ref = *w;
    run(std::move(w));
    return ref;
  }
  EventWatcher& start_events(nomad::NomadApi& api, Clock& clock, EventWatchOptions options) {
    options.seed = 5;
    auto w =
        std::make_unique<EventWatcher>(WatcherDeps{api, clock, metrics, calls, kNode, recorder.fn(),
                                                   [this] { resyncs.fetch_add(1); }, nullptr},
                                       options);
    auto& ref = *w;
    run(std::move(w));
    return ref;
  }
  static BackoffPolicy fast_backoff() { return BackoffPolicy{20ms, 100ms, 5ms}; }
  double errors(ErrorKindLabel kind) { return metrics.errors(kind).Value(); }

  ManualClock fake_clock;
  FakeNomad fake;
  ManualClock watch_clock;  // the watcher's and its client's, when a test counts backoff steps
  ManualClock modern_clock;
  std::unique_ptr<FakeNomad> modern;  // a second fake, configured as Nomad >= 1.11.2
  std::unique_ptr<nomad::CurlNomadClient> api_;
  Metrics metrics;
  CallRecorder calls{metrics};
  Recorder recorder;
  std::atomic<int> resyncs{0};
  std::unique_ptr<Watcher> watcher;
  std::jthread thread;  // last: stopped and joined before the rest goes
};

// ---- node

TEST_F(LabelerWatch, NodeWatchWakesOnChangeAndEnqueuesOnlyThisNodesLabelableAlloc) {
  auto& api = client(fake, system_clock());
  NodeWatchOptions options;
  options.initial_index = fake.current_index();
  options.backoff = fast_backoff();
  auto& w = start_node(api, system_clock(), options);
  ASSERT_TRUE(fake.wait_for_blocked(1));

  std::string mine = place();  // pending: no address yet
  ASSERT_TRUE(
      eventually([&] { return w.index() == modify_index(mine) && fake.blocked_queries() == 1; }));
  std::string theirs = place(kOtherNode);
  network(theirs, "10.200.9.9");
  EXPECT_TRUE(recorder.items().empty());

  network(mine, "10.200.3.17");
  ASSERT_TRUE(recorder.wait_for(1));
  ASSERT_TRUE(
      eventually([&] { return w.index() == modify_index(mine) && fake.blocked_queries() == 1; }));
  auto items = recorder.items();
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].alloc_id, mine);
  EXPECT_EQ(items[0].ips, (std::vector<std::string>{"10.200.3.17"}));
  EXPECT_EQ(items[0].ifname, "eth0");
  EXPECT_EQ(items[0].source, WorkSource::kWatch);
  EXPECT_FALSE(items[0].confirm);
  ASSERT_TRUE(items[0].alloc && items[0].alloc->job);
  EXPECT_EQ(items[0].alloc->job->meta.at("team"), "payments");
  EXPECT_EQ(resyncs.load(), 0);
}

// Against the fake's GC: the node's index goes down to the allocation left, the watch follows it
// without a reset and still sees the next change.
TEST_F(LabelerWatch, NodeWatchFollowsTheIndexDownAfterGarbageCollection) {
  std::string kept = place();
  network(kept, "10.200.3.17");
  std::string done = place();
  auto& api = client(fake, system_clock());
  NodeWatchOptions options;
  options.initial_index = modify_index(done);
  options.backoff = fast_backoff();
  options.min_quiet_interval =
      std::chrono::milliseconds{0};  // the fake's wait runs on its own clock
  auto& w = start_node(api, system_clock(), options);
  ASSERT_TRUE(fake.wait_for_blocked(1));
  fakes::StopOptions stop;
  stop.client_status = "";
  ASSERT_TRUE(fake.stop_alloc(done, stop));
  const std::uint64_t stopped = modify_index(done);
  ASSERT_TRUE(eventually([&] { return w.index() == stopped && fake.blocked_queries() == 1; }));

  ASSERT_TRUE(fake.gc_allocs({done}));
  fake_clock.advance(400s);  // the parked query's wait runs out: it answers the lower index
  const std::uint64_t kept_index = modify_index(kept);
  ASSERT_TRUE(eventually([&] { return w.index() == kept_index && fake.blocked_queries() == 1; }));
  EXPECT_EQ(resyncs.load(), 0);
  EXPECT_EQ(errors(ErrorKindLabel::nomad_index_reset), 0);
  EXPECT_TRUE(recorder.items().empty());

  network(kept, "10.200.3.18");
  ASSERT_TRUE(recorder.wait_for(1));
  EXPECT_EQ(recorder.ids(), (std::vector<std::string>{kept}));
}

TEST_F(LabelerWatch, NodeWatchSurvivesAnIndexReset) {
  std::string id = place();
  network(id, "10.200.3.17");
  auto& api = client(fake, system_clock());
  NodeWatchOptions options;
  options.initial_index = modify_index(id);
  options.backoff = fast_backoff();
  auto& w = start_node(api, system_clock(), options);
  ASSERT_TRUE(fake.wait_for_blocked(1));
  // One answer first: only what the watcher has seen can show that the state went back.
  std::string pending = place();
  const std::uint64_t pending_index = modify_index(pending);
  ASSERT_TRUE(
      eventually([&] { return w.index() == pending_index && fake.blocked_queries() == 1; }));

  fake.reset_index(900);     // servers restored from an older snapshot
  fake_clock.advance(400s);  // the parked query's wait runs out: it answers with index 900
  ASSERT_TRUE(eventually(
      [&] { return resyncs.load() == 1 && w.index() == 900 && fake.blocked_queries() == 1; }));
  // The fake records a request when it answers: the one parked at index 900 is not listed yet.
  auto asked = asked_indexes(fake, "node_allocations");
  EXPECT_EQ(asked, (std::vector<std::uint64_t>{options.initial_index, pending_index, 0}))
      << "restarted from index 0";
  EXPECT_TRUE(recorder.items().empty());
  EXPECT_EQ(errors(ErrorKindLabel::nomad_index_reset), 1);

  network(id, "10.200.3.18");  // and it keeps watching
  ASSERT_TRUE(recorder.wait_for(1));
  EXPECT_EQ(recorder.ids(), (std::vector<std::string>{id}));
}

TEST_F(LabelerWatch, NodeWatchBacksOffOnServerErrorsAndRecovers) {
  ManualClock& clock = watch_clock;
  auto& api = client(fake, clock);
  fake.fail_next(3, 500, "/v1/node/");
  NodeWatchOptions options;
  options.initial_index = fake.current_index();
  options.backoff = BackoffPolicy{1s, 4s, 250ms};
  start_node(api, clock, options);
  for (int n = 1; n <= 3; ++n) {
    // One request per backoff step: nothing more until the watcher's clock moves.
    ASSERT_TRUE(eventually([&] {
      return fake.request_count("node_allocations") == n && clock.sleepers() == 1;
    })) << "request "
        << n;
    clock.advance(4s);
  }
  ASSERT_TRUE(fake.wait_for_blocked(1));  // the fourth request, parked (recorded once answered)
  EXPECT_EQ(fake.request_count("node_allocations"), 3);
  EXPECT_EQ(errors(ErrorKindLabel::nomad_watch), 3);
  EXPECT_EQ(metrics.watch_reconnects(WatchMode::kNode).Value(), 3);

  std::string id = place();
  network(id, "10.200.3.17");
  ASSERT_TRUE(recorder.wait_for(1));
  EXPECT_EQ(recorder.ids(), (std::vector<std::string>{id}));
}

// ---- events

// The daemon's reconcile index here is the allocs table index a GC moved (no event), above the
// fake's newest frame: the stream asked for the next one replays that frame (StartAtClosest).
// It is already seen, not a restore; the next frame is used.
TEST_F(LabelerWatch, EventStreamReplayBelowTheReconciledIndexIsNotAReset) {
  std::string done = place();
  fakes::StopOptions stop;
  stop.client_status = "";
  ASSERT_TRUE(fake.stop_alloc(done, stop));
  const std::uint64_t newest_frame = fake.current_index();
  ASSERT_TRUE(fake.gc_allocs({done}));
  auto& api = client(fake, system_clock());
  auto listed = api.node_allocations(kNode, 0, std::chrono::seconds{0}, system_clock().now() + 10s);
  ASSERT_TRUE(listed);
  ASSERT_GT(listed->index, newest_frame);
  EventWatchOptions options;
  options.initial_index = listed->index;
  options.backoff = fast_backoff();
  auto& w = start_events(api, system_clock(), options);
  ASSERT_TRUE(fake.wait_for_streams(1));

  std::string mine = place();
  network(mine, "10.200.3.21");
  ASSERT_TRUE(recorder.wait_for(1));
  ASSERT_TRUE(eventually([&] { return w.last_index() == fake.current_index(); }));
  EXPECT_EQ(recorder.ids(), (std::vector<std::string>{mine}));
  EXPECT_EQ(errors(ErrorKindLabel::nomad_index_reset), 0);
  EXPECT_EQ(resyncs.load(), 0);
}

TEST_F(LabelerWatch, EventStreamDroppedAfterNEventsResumesWithoutLossOrDoubleApply) {
  fake.set_stream_drop_after(2);
  auto& api = client(fake, system_clock());
  EventWatchOptions options;
  options.initial_index = fake.current_index();
  options.backoff = fast_backoff();
  auto& w = start_events(api, system_clock(), options);
  ASSERT_TRUE(fake.wait_for_streams(1));

  std::vector<std::string> mine;
  for (int i = 0; i < 3; ++i) mine.push_back(place());
  std::string theirs = place(kOtherNode);
  for (int i = 0; i < 3; ++i)
    network(mine[static_cast<std::size_t>(i)], "10.200.3." + std::to_string(10 + i));
  network(theirs, "10.200.9.9");
  ASSERT_TRUE(fake.set_client_status(mine[0], "running", "health"));  // same endpoint: no new work

  ASSERT_TRUE(recorder.wait_for(3));
  ASSERT_TRUE(eventually([&] { return w.last_index() == fake.current_index(); }));
  for (const auto& id : mine) EXPECT_EQ(recorder.count(id), 1) << id;
  EXPECT_EQ(recorder.count(theirs), 0);
  for (const auto& item : recorder.items()) EXPECT_FALSE(item.alloc) << "events carry no Job";

  // Every reconnect asked for the index after the last frame it had, and was followed by a resync.
  ASSERT_TRUE(eventually([&] {
    return fake.active_streams() == 1 &&
           resyncs.load() == static_cast<int>(asked_indexes(fake, "event_stream").size()) - 1;
  }));
  auto asked = asked_indexes(fake, "event_stream");
  ASSERT_GE(asked.size(), 5u) << "9 events, 2 per stream";
  EXPECT_EQ(asked.front(), options.initial_index + 1);
  for (std::size_t i = 1; i < asked.size(); ++i) EXPECT_GT(asked[i], asked[i - 1]);
}

TEST_F(LabelerWatch, StreamEndingBeforeItsFirstHeartbeatIsAnErrorRetriedWithBackoff) {
  // Nomad >= 1.11.2 answers a denied subscription with 200 and an immediate EOF.
  FakeNomadConfig cfg = fake_config(modern_clock);
  cfg.acl_enabled = true;
  cfg.stream_denied_as_eof = true;
  cfg.tokens = {fakes::TokenSpec{"management", true, {}, true, true}};
  modern = std::make_unique<FakeNomad>(cfg);
  setup(*modern);
  ManualClock& clock = watch_clock;
  auto& api = client(*modern, clock, "not-yet-valid");
  EventWatchOptions options;
  options.initial_index = modern->current_index();
  options.backoff = BackoffPolicy{1s, 8s, 250ms};
  start_events(api, clock, options);
  for (int n = 1; n <= 3; ++n) {
    ASSERT_TRUE(eventually([&] {
      return modern->request_count("event_stream") == n && clock.sleepers() == 1;
    })) << "stream "
        << n;
    clock.advance(8s);
  }
  ASSERT_TRUE(eventually(
      [&] { return modern->request_count("event_stream") == 4 && clock.sleepers() == 1; }));
  EXPECT_EQ(errors(ErrorKindLabel::nomad_stream_open), 4);
  EXPECT_EQ(resyncs.load(), 0);

  modern->add_token(
      fakes::TokenSpec{"not-yet-valid", true, {}, true, true});  // the operator fixes the ACL
  clock.advance(8s);
  ASSERT_TRUE(modern->wait_for_streams(1));
  ASSERT_TRUE(eventually([&] { return resyncs.load() == 1; }))
      << "a resync once the stream is open";
}

TEST_F(LabelerWatch, UnusableLinesReconnectWithoutCrashOrLoop) {
  fake.fail_next(1, 200, "/v1/event/stream", "{\"Events\":[tr\n");  // a broken line
  fake.fail_next(1, 200, "/v1/event/stream",
                 "subscription closed by server, client should resubscribe");
  auto& api = client(fake, system_clock());
  EventWatchOptions options;
  options.initial_index = fake.current_index();
  options.backoff = fast_backoff();
  start_events(api, system_clock(), options);
  ASSERT_TRUE(fake.wait_for_streams(1));
  EXPECT_EQ(fake.request_count("event_stream"), 3);
  ASSERT_TRUE(eventually([&] { return resyncs.load() == 1; }));

  std::string id = place();
  network(id, "10.200.3.17");
  ASSERT_TRUE(recorder.wait_for(1));
  EXPECT_EQ(recorder.ids(), (std::vector<std::string>{id}));
  EXPECT_EQ(errors(ErrorKindLabel::nomad_stream_bad_line), 1);
  EXPECT_EQ(errors(ErrorKindLabel::nomad_stream_open), 1) << "text without a newline, then EOF";
  for (auto index : asked_indexes(fake, "event_stream"))
    EXPECT_EQ(index, options.initial_index + 1);
}

}  // namespace
}  // namespace cn::labeler
