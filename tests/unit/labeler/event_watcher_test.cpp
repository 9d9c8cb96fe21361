// --watch events against scripted streams of the in-memory Nomad; reconnect backoff and the
// resubscribe period run on a ManualClock.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include <nlohmann/json.hpp>

#include "labeler/watch/event_watcher.h"
#include "tests/support/eventually.h"
#include "tests/support/manual_clock.h"
#include "tests/support/recorder.h"
#include "tests/unit/labeler/in_memory_apis.h"

namespace cn::labeler {
namespace {

using namespace std::chrono_literals;
using cn::testing::InMemoryNomad;
using nlohmann::json;
using Script = InMemoryNomad::StreamScript;

constexpr const char* kNode = "f2c1e0b9-3a4d-5e6f-7a8b-9c0d1e2f3a4b";
constexpr const char* kOtherNode = "7e9a1c3b-5d2f-4a6e-8b0c-1d3e5f7a9b2c";

using ::cn::testing::eventually;

using Recorder = ::cn::testing::Recorder<WorkItem>;

std::string uuid(int n) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "4b1f6c2e-8d3a-4f57-9c2b-%012d", n);
  return buf;
}

// One event of a frame; the setters keep the test tables short.
struct Ev {
  explicit Ev(int n, std::string addr = {}) : alloc(n), address(std::move(addr)) {}
  Ev& of_type(std::string t) {
    type = std::move(t);
    return *this;
  }
  Ev& modified(std::uint64_t mi) {
    modify_index = mi;
    return *this;
  }
  Ev& on(std::string n) {
    node = std::move(n);
    return *this;
  }
  Ev& client(std::string c) {
    client_status = std::move(c);
    return *this;
  }
  Ev& desired(std::string d) {
    desired_status = std::move(d);
    return *this;
  }

  int alloc;
  std::string address;
  std::string type = "AllocationUpdated";
  std::uint64_t modify_index = 0;
  std::string node = kNode;
  std::string client_status = "running";
  std::string desired_status = "run";
};

// One stream line in Nomad's shape (sorted keys, Job stripped from the payload).
std::string frame(std::uint64_t index, const std::vector<Ev>& events) {
  json list = json::array();
  for (const auto& e : events) {
    json a = {{"ClientStatus", e.client_status},
              {"DesiredStatus", e.desired_status},
              {"ID", uuid(e.alloc)},
              {"JobID", "web"},
              {"ModifyIndex", e.modify_index ? e.modify_index : index},
              {"Name", "web.app[0]"},
              {"Namespace", "default"},
              {"NodeID", e.node},
              {"TaskGroup", "app"}};
    if (!e.address.empty()) {
      a["NetworkStatus"] = {
          {"Address", e.address}, {"AddressIPv6", ""}, {"DNS", nullptr}, {"InterfaceName", "eth0"}};
    }
    list.push_back({{"FilterKeys", {"web", ""}},
                    {"Index", index},
                    {"Key", uuid(e.alloc)},
                    {"Namespace", "default"},
                    {"Payload", {{"Allocation", a}}},
                    {"Topic", "Allocation"},
                    {"Type", e.type}});
  }
  return json{{"Events", list}, {"Index", index}}.dump();
}

class EventWatch : public ::testing::Test {
 protected:
  ~EventWatch() override { stop(); }

  static EventWatchOptions with_backoff(std::chrono::milliseconds cap) {
    EventWatchOptions o;
    o.backoff = BackoffPolicy{1s, cap, 250ms};
    return o;
  }

  void start(EventWatchOptions options = {}) {
    options.seed = 11;
    if (options.initial_index == 0) options.initial_index = 1300;
    watcher = std::make_unique<EventWatcher>(
        WatcherDeps{nomad, clock, metrics, calls, kNode, recorder.fn(),
                    [this] { resyncs.fetch_add(1); }, nullptr},
        options);
    thread = std::jthread([this](std::stop_token st) { watcher->run(st); });
  }
  void stop() {
    if (thread.joinable()) {
      thread.request_stop();
      thread.join();
    }
  }
  // The watcher opened `n` streams and now sleeps on the clock (reconnect backoff).
  bool backing_off_after(std::size_t n) {
    return eventually([&] { return nomad.stream_queries().size() == n && clock.sleepers() == 1; });
  }
  int count(const std::string& id) const {
    int n = 0;
    for (const auto& i : recorder.ids()) n += i == id ? 1 : 0;
    return n;
  }
  double errors(ErrorKindLabel kind) { return metrics.errors(kind).Value(); }

  InMemoryNomad nomad;
  ManualClock clock;
  Metrics metrics;
  CallRecorder calls{metrics};
  Recorder recorder;
  std::atomic<int> resyncs{0};
  std::unique_ptr<EventWatcher> watcher;
  std::jthread thread;
};

TEST_F(EventWatch, OnlyThisNodesAllocationsWithAnAddressAreEnqueued) {
  nomad.script_stream(
      Script{{"{}", frame(1301, {Ev(1).of_type("PlanResult")}),  // pending, no address yet
              frame(1302, {Ev(2, "10.200.9.2").on(kOtherNode)}), frame(1303, {Ev(3, "10.200.3.3")}),
              frame(1304, {Ev(4, "10.200.3.4").client("complete")}),
              frame(1305, {Ev(5, "10.200.3.5").desired("stop")}),
              frame(1306, {Ev(6, "10.200.3.6").of_type("AllocationUpdateDesiredStatus")}),
              frame(1307, {Ev(1, "10.200.3.1").of_type("PlanResult")})},
             std::nullopt,
             true});
  start();
  ASSERT_TRUE(recorder.wait_for(2));
  ASSERT_TRUE(nomad.wait_for_streams(1));
  EXPECT_EQ(nomad.stream_queries()[0].index, 1301u) << "resume right after the reconciled index";
  EXPECT_EQ(nomad.stream_queries()[0].topic, "Allocation");
  EXPECT_EQ(nomad.stream_queries()[0].nomad_namespace, "*");
  EXPECT_EQ(recorder.ids(), (std::vector<std::string>{uuid(3), uuid(1)}));
  for (const auto& item : recorder.items()) {
    EXPECT_FALSE(item.alloc.has_value())
        << "events carry no Job: the worker fetches the allocation";
    EXPECT_EQ(item.source, WorkSource::kWatch);
    EXPECT_FALSE(item.confirm);
    EXPECT_EQ(item.ifname, "eth0");
  }
  EXPECT_EQ(recorder.items()[0].ips, (std::vector<std::string>{"10.200.3.3"}));
  EXPECT_EQ(resyncs.load(), 0) << "the first stream follows the daemon's own reconcile";
}

TEST_F(EventWatch, DuplicateOlderAndUnchangedEventsAreNotAppliedTwice) {
  nomad.script_stream(Script{{"{}",
                              // Nomad duplicates an event matching several subscribed keys.
                              frame(1301, {Ev(1, "10.200.3.1"), Ev(1, "10.200.3.1")}),
                              frame(1302, {Ev(1, "10.200.3.1").modified(1290)}),  // older
                              frame(1303, {Ev(1, "10.200.3.1")}),   // health update: same endpoint
                              frame(1304, {Ev(1, "10.200.3.99")}),  // a new address: label again
                              frame(1305, {Ev(9, "10.200.3.9")})},  // sentinel
                             std::nullopt,
                             true});
  start();
  ASSERT_TRUE(recorder.wait_for(3));
  EXPECT_EQ(recorder.ids(), (std::vector<std::string>{uuid(1), uuid(1), uuid(9)}));
  EXPECT_EQ(recorder.items()[1].ips, (std::vector<std::string>{"10.200.3.99"}));
}

TEST_F(EventWatch, DroppedStreamResumesAtLastIndexPlusOneAndResyncs) {
  nomad.script_stream(Script{
      {"{}", frame(1301, {Ev(1, "10.200.3.1")}), frame(1302, {Ev(2, "10.200.3.2")})}});  // then EOF
  nomad.script_stream(Script{{"{}", frame(1302, {Ev(2, "10.200.3.2")}),  // replayed last batch
                              frame(1303, {Ev(3, "10.200.3.3")})},
                             std::nullopt,
                             true});
  start(with_backoff(4s));
  ASSERT_TRUE(backing_off_after(1));
  EXPECT_EQ(recorder.ids().size(), 2u);
  clock.advance(4s);
  ASSERT_TRUE(recorder.wait_for(3));
  auto queries = nomad.stream_queries();
  ASSERT_EQ(queries.size(), 2u);
  EXPECT_EQ(queries[1].index, 1303u);
  EXPECT_EQ(resyncs.load(), 1) << "a reconnect may have skipped events: resync";
  for (int n = 1; n <= 3; ++n) EXPECT_EQ(count(uuid(n)), 1) << uuid(n);
  EXPECT_EQ(errors(ErrorKindLabel::nomad_stream), 1);
  EXPECT_EQ(metrics.watch_reconnects(WatchMode::kEvents).Value(), 1);
}

// The reconcile index is the node's newest ModifyIndex, not a frame: when nothing newer was
// published, StartAtClosest replays the server's newest frame, which can be below it. The
// reconcile covered it; it is neither used nor a restore.
TEST_F(EventWatch, ReplayBelowTheReconciledIndexAtStartIsAlreadySeen) {
  nomad.script_stream(
      Script{{"{}", frame(1290, {Ev(1, "10.200.3.1")}),  // the server's newest frame
              frame(1301, {Ev(2, "10.200.3.2")})},
             std::nullopt,
             true});
  start();
  ASSERT_TRUE(eventually([&] { return watcher->last_index() == 1301; }));
  ASSERT_TRUE(recorder.wait_for(1));
  EXPECT_EQ(recorder.ids(), (std::vector<std::string>{uuid(2)}));
  EXPECT_EQ(errors(ErrorKindLabel::nomad_index_reset), 0);
  EXPECT_EQ(resyncs.load(), 0);
}

// A younger Raft log (a snapshot restored into a new cluster): after the reconnect every frame is
// below the last one handled. Not a replay: used, with the memory dropped and a resync.
TEST_F(EventWatch, YoungerLogAfterReconnectIsAResetAndItsFramesAreUsed) {
  nomad.script_stream(Script{
      {"{}", frame(1301, {Ev(1, "10.200.3.1")}), frame(1302, {Ev(2, "10.200.3.2")})}});  // then EOF
  nomad.script_stream(
      Script{{"{}", frame(41, {Ev(3, "10.200.3.3")}), frame(42, {Ev(1, "10.200.3.1")})},
             std::nullopt,
             true});
  start(with_backoff(4s));
  ASSERT_TRUE(backing_off_after(1));
  clock.advance(4s);
  ASSERT_TRUE(recorder.wait_for(4));
  ASSERT_TRUE(eventually([&] { return watcher->last_index() == 42 && resyncs.load() == 2; }));
  EXPECT_EQ(nomad.stream_queries()[1].index, 1303u);
  EXPECT_EQ(recorder.ids(), (std::vector<std::string>{uuid(1), uuid(2), uuid(3), uuid(1)}))
      << "alloc 1 at index 42 is not refused by what was seen at 1301";
  EXPECT_EQ(errors(ErrorKindLabel::nomad_index_reset), 1);
}

TEST_F(EventWatch, StreamEndingBeforeFirstHeartbeatIsAnErrorRetriedWithBackoff) {
  for (int i = 0; i < 3; ++i) {
    nomad.script_stream(Script{
        {}, Error{ErrorKind::transport, "event stream ended before the first heartbeat", 0, 0}});
  }
  nomad.script_stream(Script{{"{}", frame(1301, {Ev(1, "10.200.3.1")})}, std::nullopt, true});
  start(with_backoff(8s));
  for (std::size_t n = 1; n <= 3; ++n) {
    ASSERT_TRUE(backing_off_after(n)) << "stream " << n;
    EXPECT_EQ(nomad.stream_queries().size(), n) << "no reconnect before the backoff elapsed";
    clock.advance(8s);
  }
  ASSERT_TRUE(recorder.wait_for(1));
  EXPECT_EQ(errors(ErrorKindLabel::nomad_stream_open), 3);
  EXPECT_EQ(resyncs.load(), 1) << "one resync, once a stream is open again";
  for (const auto& q : nomad.stream_queries()) EXPECT_EQ(q.index, 1301u);
}

TEST_F(EventWatch, GarbageOrTruncatedLineReconnectsWithoutCrashOrLoop) {
  nomad.script_stream(Script{{"{}", frame(1301, {Ev(1, "10.200.3.1")}),
                              R"({"Events":[{"FilterKeys":["web",""],"Index":13)",  // truncated
                              frame(1302, {Ev(2, "10.200.3.2")})},
                             std::nullopt});  // the double ends cleanly: only the bad line is wrong
  // Nomad <= 1.11.1's plain-text termination, as the first line of a stream.
  nomad.script_stream(
      Script{{"subscription closed by server, client should resubscribe"}, std::nullopt});
  nomad.script_stream(Script{{"{}", frame(1302, {Ev(2, "10.200.3.2")})}, std::nullopt, true});
  start(with_backoff(4s));
  ASSERT_TRUE(backing_off_after(1));
  EXPECT_EQ(recorder.ids(), (std::vector<std::string>{uuid(1)}))
      << "nothing after the bad line is used";
  clock.advance(4s);
  ASSERT_TRUE(backing_off_after(2));
  clock.advance(4s);
  ASSERT_TRUE(recorder.wait_for(2));
  EXPECT_EQ(recorder.ids(), (std::vector<std::string>{uuid(1), uuid(2)}));
  std::vector<std::uint64_t> indexes;
  for (const auto& q : nomad.stream_queries()) indexes.push_back(q.index);
  EXPECT_EQ(indexes, (std::vector<std::uint64_t>{1301, 1302, 1302}))
      << "resume after the last good frame";
  EXPECT_EQ(errors(ErrorKindLabel::nomad_stream_bad_line), 2);
  EXPECT_EQ(resyncs.load(), 1);
}

TEST_F(EventWatch, ResubscribesPeriodicallyWithoutBackoffAndResyncs) {
  nomad.script_stream(Script{{"{}", frame(1301, {Ev(1, "10.200.3.1")})}, std::nullopt, true});
  nomad.script_stream(Script{{"{}"}, std::nullopt, true});
  EventWatchOptions options;
  options.resubscribe_every = 10min;
  start(options);
  ASSERT_TRUE(recorder.wait_for(1));
  clock.advance(10min);
  nomad.push_stream_line("{}");  // the next heartbeat notices the period is over
  ASSERT_TRUE(nomad.wait_for_streams(2));
  ASSERT_TRUE(eventually([&] { return resyncs.load() == 1; }));
  EXPECT_EQ(nomad.stream_queries()[1].index, 1302u);
  EXPECT_EQ(clock.sleepers(), 0) << "a scheduled resubscribe does not back off";
  EXPECT_EQ(metrics.watch_reconnects(WatchMode::kEvents).Value(), 1);
  EXPECT_EQ(errors(ErrorKindLabel::nomad_stream), 0);
}

TEST_F(EventWatch, TrackedAllocationsAreBounded) {
  std::vector<std::string> lines = {"{}"};
  for (int n = 1; n <= 20; ++n) {
    lines.push_back(frame(1300 + static_cast<std::uint64_t>(n), {Ev(n, "10.200.3.1")}));
  }
  // Terminal allocations leave the map at once.
  lines.push_back(frame(1321, {Ev(20, "10.200.3.1").client("complete")}));
  lines.push_back(frame(1322, {Ev(99, "10.200.3.99")}));  // sentinel
  nomad.script_stream(Script{lines, std::nullopt, true});
  EventWatchOptions options;
  options.max_tracked = 5;
  start(options);
  ASSERT_TRUE(recorder.wait_for(21));
  stop();
  EXPECT_LE(watcher->tracked(), 5u);
  EXPECT_EQ(watcher->last_index(), 1322u);
}

TEST_F(EventWatch, StopIsPromptWhileStreaming) {
  nomad.script_stream(Script{{"{}"}, std::nullopt, true});
  start();
  ASSERT_TRUE(eventually([&] { return nomad.stream_open(); }));
  auto before = std::chrono::steady_clock::now();
  stop();
  EXPECT_LT(std::chrono::steady_clock::now() - before, 5s);
}

}  // namespace
}  // namespace cn::labeler

namespace cn::labeler {
namespace {

// Event payloads carry no Job: an event only tells the cache that its entry may be stale.
TEST_F(EventWatch, AnEventOfAChangedAllocationInvalidatesItsCacheEntry) {
  AllocCache cache({});
  auto cached = cn::testing::make_alloc(uuid(1));
  cached.modify_index = 1290;
  cache.observe(cached);
  auto other = cn::testing::make_alloc(uuid(2));
  other.modify_index = 1302;  // stored from an answer newer than the event below
  cache.observe(other);
  nomad.script_stream(Script{{"{}", frame(1301, {Ev(1, "10.200.3.1"), Ev(2, "10.200.3.2")}),
                              frame(1305, {Ev(9, "10.200.3.9")})},  // sentinel
                             std::nullopt,
                             true});
  EventWatchOptions options;
  options.cache = &cache;
  start(options);
  ASSERT_TRUE(recorder.wait_for(3));
  EXPECT_FALSE(cache.identity(uuid(1)));
  EXPECT_TRUE(cache.identity(uuid(2))) << "an older event never drops a newer entry";
}

}  // namespace
}  // namespace cn::labeler
