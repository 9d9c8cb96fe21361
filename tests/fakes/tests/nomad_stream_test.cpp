// The fake's /v1/event/stream: index semantics (fact sheet 4.5), heartbeats, filtering, framing,
// transports and stream faults.
#include <gtest/gtest.h>

#include "tests/fakes/http/raw_http_client.h"
#include "tests/fakes/nomad/fake_nomad.h"
#include "tests/fakes/tests/nomad_test_util.h"
#include "tests/support/manual_clock.h"

namespace cn::fakes {
namespace {

using namespace nomad_testing;
using nlohmann::json;
using namespace std::chrono_literals;

std::vector<std::uint64_t> frame_indexes(const std::vector<std::string>& lines) {
  std::vector<std::uint64_t> out;
  for (const auto& l : lines) {
    auto j = json::parse(l);
    if (j.contains("Index")) out.push_back(j["Index"].get<std::uint64_t>());
  }
  return out;
}

class NomadStream : public ::testing::Test {
 protected:
  explicit NomadStream(std::size_t buffer = 100) : fake(config(buffer)) {
    JobSpec job;
    job.id = "web";
    EXPECT_TRUE(fake.register_job(job));  // a Job-topic frame at index 1001
  }
  FakeNomadConfig config(std::size_t buffer) {
    auto cfg = reference_config(&clock);
    cfg.event_buffer_size = buffer;
    cfg.initial_index = 1000;
    return cfg;
  }
  std::string place(const std::string& ns = "default", const std::string& job = "web") {
    PlaceRequest p;
    p.job_id = job;
    p.namespace_ = ns;
    auto id = fake.place_alloc(p);
    EXPECT_TRUE(id) << id.error().message;
    return id.value_or("");
  }
  // Everything a finished or force-closed stream wrote.
  std::vector<std::string> drain(StreamRun& run) {
    fake.drop_streams();
    EXPECT_TRUE(run.wait_done());
    return run.writer().lines();
  }

  ManualClock clock{wall_at(kRefStart)};
  FakeNomad fake;
};

class NomadStreamSmallBuffer : public NomadStream {
 protected:
  NomadStreamSmallBuffer() : NomadStream(4) {
    for (int i = 0; i < 5; ++i) place();  // frames 1002..1006; the buffer keeps 1003..1006
  }
  std::vector<std::uint64_t> replay(const std::string& index) {
    StreamRun run(fake, "/v1/event/stream?topic=Allocation&index=" + index);
    EXPECT_TRUE(run.writer().wait_lines(2));
    auto lines = drain(run);
    EXPECT_EQ(lines.front(), "{}") << "the heartbeat comes first";
    return frame_indexes(lines);
  }
};

TEST_F(NomadStreamSmallBuffer, IndexZeroReplaysTheWholeBuffer) {
  EXPECT_EQ(replay("0"), (std::vector<std::uint64_t>{1003, 1004, 1005, 1006}));
}

TEST_F(NomadStreamSmallBuffer, IndexInsideTheBufferIsInclusive) {
  EXPECT_EQ(replay("1005"), (std::vector<std::uint64_t>{1005, 1006}));
}

TEST_F(NomadStreamSmallBuffer, IndexOlderThanTheBufferStartsAtTheOldestSilently) {
  EXPECT_EQ(replay("1001"), (std::vector<std::uint64_t>{1003, 1004, 1005, 1006}));
}

TEST_F(NomadStreamSmallBuffer, IndexNewerThanTheNewestReplaysTheLastBatch) {
  EXPECT_EQ(replay("9223372036854775807"), (std::vector<std::uint64_t>{1006}));
}

// A GC moves the Raft index and the allocs table index without an event (EvalDeleteRequestType is
// not in nomad/state/events.go MsgTypeEvents): asked for the index after it, StartAtClosest
// replays the newest frame, which is below the index asked for.
TEST_F(NomadStreamSmallBuffer, AfterAGcTheReplayedFrameIsBelowTheIndexAskedFor) {
  std::string done = place();  // frame 1007
  StopOptions stop;
  stop.client_status = "";
  ASSERT_TRUE(fake.stop_alloc(done, stop));  // frame 1008
  ASSERT_TRUE(fake.gc_allocs({done}));       // index 1009, no frame
  EXPECT_EQ(fake.current_index(), 1009u);
  EXPECT_EQ(replay("1010"), (std::vector<std::uint64_t>{1008}));
}

TEST_F(NomadStreamSmallBuffer, LaggingSubscriberIsCut) {
  fake.set_stream_transport(StreamTransport::kChunked);
  StreamRun run(fake, "/v1/event/stream?topic=Allocation&index=1006");
  ASSERT_TRUE(run.writer().wait_lines(2));
  fake.set_stream_stall(true);
  for (int i = 0; i < 5; ++i) place();  // more than the buffer holds while the reader is stuck
  fake.set_stream_stall(false);
  ASSERT_TRUE(run.wait_done());
  EXPECT_NE(run.writer().data().find("event dropped from buffer"), std::string::npos);
}

TEST_F(NomadStream, HeartbeatImmediatelyThenEveryInterval) {
  StreamRun run(fake, "/v1/event/stream?topic=Allocation");
  ASSERT_TRUE(run.writer().wait_lines(1));
  EXPECT_EQ(run.writer().lines(), (std::vector<std::string>{"{}"}));
  ASSERT_TRUE(clock.wait_for_sleepers(2));  // the stream and the publish-delay thread
  clock.advance(29s);
  EXPECT_FALSE(run.writer().wait_lines(2, 50ms));
  clock.advance(1s);
  ASSERT_TRUE(run.writer().wait_lines(2));
  EXPECT_EQ(run.writer().lines()[1], "{}");
}

TEST_F(NomadStream, LiveEventsAfterSubscribeAndJobStripped) {
  StreamRun run(fake, "/v1/event/stream?topic=Allocation");
  ASSERT_TRUE(run.writer().wait_lines(1));
  std::string id = place();
  ASSERT_TRUE(run.writer().wait_lines(2));
  auto frame = json::parse(run.writer().lines()[1]);
  ASSERT_EQ(frame["Events"].size(), 1u);
  const auto& e = frame["Events"][0];
  EXPECT_EQ(e["Type"], "PlanResult");
  EXPECT_EQ(e["Key"], id);
  EXPECT_EQ(e["Index"], frame["Index"]);
  EXPECT_EQ(e["FilterKeys"][0], "web");
  EXPECT_FALSE(e["Payload"]["Allocation"].contains("Job"));
  EXPECT_EQ(e["Payload"]["Allocation"]["ClientStatus"], "pending");
  drain(run);
}

TEST_F(NomadStream, SeveralEventsInOneFrameShareTheIndex) {
  StreamRun run(fake, "/v1/event/stream?topic=Allocation");
  ASSERT_TRUE(run.writer().wait_lines(1));
  std::vector<PlaceRequest> three(3);
  for (auto& p : three) p.job_id = "web";
  ASSERT_TRUE(fake.place_allocs(three));
  ASSERT_TRUE(run.writer().wait_lines(2));
  auto frame = json::parse(run.writer().lines()[1]);
  ASSERT_EQ(frame["Events"].size(), 3u);
  std::set<std::string> names;
  for (const auto& e : frame["Events"]) {
    EXPECT_EQ(e["Index"], frame["Index"]);
    names.insert(e["Payload"]["Allocation"]["Name"].get<std::string>());
  }
  EXPECT_EQ(names, (std::set<std::string>{"web.app[0]", "web.app[1]", "web.app[2]"}));
  drain(run);
}

TEST_F(NomadStream, TopicKeysNamespacesAndDuplicates) {
  JobSpec other;
  other.id = "api";
  other.namespace_ = "team-b";
  ASSERT_TRUE(fake.register_job(other));
  std::string a = place();
  std::string b = place();
  place("team-b", "api");
  auto count = [&](const std::string& query) {
    StreamRun run(fake, "/v1/event/stream?" + query);
    EXPECT_TRUE(run.writer().wait_lines(1));
    auto lines = drain(run);
    std::size_t events = 0;
    for (const auto& l : lines) events += json::parse(l).value("Events", json::array()).size();
    return events;
  };
  EXPECT_EQ(count("topic=Allocation"), 2u);  // default namespace only
  EXPECT_EQ(count("topic=Allocation&namespace=*"), 3u);
  EXPECT_EQ(count("topic=Allocation&namespace=team-b"), 1u);
  EXPECT_EQ(count("topic=Allocation:" + a), 1u);                       // by Key
  EXPECT_EQ(count("topic=Allocation:web"), 2u);                        // by FilterKeys (JobID)
  EXPECT_EQ(count("topic=Allocation:web&topic=Allocation:" + a), 3u);  // a is duplicated
  EXPECT_EQ(count("topic=Job"), 1u);                                   // JobRegistered in default
  EXPECT_EQ(count("topic=*&namespace=*"), 5u);
  (void)b;
}

TEST_F(NomadStream, BadTopicAndIndexAre400) {
  auto topic = get(fake, "/v1/event/stream?topic=Allocation:a:b");
  EXPECT_EQ(topic.status, 400);
  EXPECT_EQ(topic.body.rfind("Invalid topic query", 0), 0u);
  auto index = get(fake, "/v1/event/stream?index=x");
  EXPECT_EQ(index.status, 400);
  EXPECT_EQ(index.body.rfind("Unable to parse index", 0), 0u);
}

TEST_F(NomadStream, DropAfterNEventsClosesTheStream) {
  fake.set_stream_drop_after(2);
  StreamRun run(fake, "/v1/event/stream?topic=Allocation");
  ASSERT_TRUE(run.writer().wait_lines(1));
  place();
  place();
  ASSERT_TRUE(run.wait_done());
  EXPECT_EQ(run.writer().lines().size(), 3u);  // {} and two frames
}

TEST_F(NomadStream, StallStopsHeartbeatsAndEventsUntilCleared) {
  StreamRun run(fake, "/v1/event/stream?topic=Allocation");
  ASSERT_TRUE(run.writer().wait_lines(1));
  fake.set_stream_stall(true);
  ASSERT_TRUE(clock.wait_for_sleepers(2));
  place();
  clock.advance(120s);
  EXPECT_FALSE(run.writer().wait_lines(2, 100ms));
  fake.set_stream_stall(false);
  ASSERT_TRUE(run.writer().wait_lines(2));
  drain(run);
}

TEST_F(NomadStream, AclDeniedRevokedAndEofStyle) {
  fake.add_token(TokenSpec{"t", true, {}, true, true});
  fake.add_token(TokenSpec{"ns", false, {"default"}, true, true});
  fake.set_acl_enabled(true);
  auto denied = get(fake, "/v1/event/stream?topic=Allocation", {{"X-Nomad-Token", "bad"}});
  EXPECT_EQ(denied.status, 403);
  EXPECT_EQ(denied.body, "Permission denied");
  // All topics need a management token.
  EXPECT_EQ(get(fake, "/v1/event/stream", {{"X-Nomad-Token", "ns"}}).status, 403);
  EXPECT_EQ(
      get(fake, "/v1/event/stream?topic=Allocation&namespace=other", {{"X-Nomad-Token", "ns"}})
          .status,
      403);

  StreamRun run(fake, "/v1/event/stream?topic=Allocation", {{"X-Nomad-Token", "t"}});
  ASSERT_TRUE(run.writer().wait_lines(1));
  fake.revoke_token("t");
  EXPECT_TRUE(run.wait_done());

  FakeNomadConfig cfg = reference_config(&clock);
  cfg.acl_enabled = true;
  cfg.stream_denied_as_eof = true;
  FakeNomad modern(cfg);
  StreamRun eof(modern, "/v1/event/stream?topic=Allocation", {{"X-Nomad-Token", "bad"}});
  EXPECT_EQ(eof.response().status, 200);
  ASSERT_TRUE(eof.wait_done());
  EXPECT_EQ(eof.writer().data(), "");
}

TEST_F(NomadStream, ResetIndexClosesStreamsAndEmptiesTheBuffer) {
  place();
  StreamRun run(fake, "/v1/event/stream?topic=Allocation");
  ASSERT_TRUE(run.writer().wait_lines(1));
  fake.reset_index(900);
  ASSERT_TRUE(run.wait_done());
  StreamRun again(fake, "/v1/event/stream?topic=Allocation&index=0");
  ASSERT_TRUE(again.writer().wait_lines(1));
  EXPECT_EQ(drain(again).size(), 1u);  // only the heartbeat: nothing buffered after a restore
}

// Over a real socket: the >= 1.11.3 raw transport and the <= 1.11.1 chunked one.
class NomadStreamSocket : public ::testing::TestWithParam<StreamTransport> {};

TEST_P(NomadStreamSocket, TransportHeadersAndBody) {
  FakeNomadConfig cfg;
  cfg.stream_transport = GetParam();
  FakeNomad fake(cfg);
  ASSERT_TRUE(fake.start());
  JobSpec job;
  job.id = "web";
  ASSERT_TRUE(fake.register_job(job));
  PlaceRequest p;
  p.job_id = "web";
  ASSERT_TRUE(fake.place_alloc(p));
  fake.set_stream_drop_after(1);  // so the body ends and read_response returns
  auto r = http_request(HttpTarget::tcp("127.0.0.1", fake.port()), "GET",
                        "/v1/event/stream?topic=Allocation&index=0");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->header("Content-Type").value_or(""), "application/json");
  EXPECT_EQ(r->header("Cache-Control").value_or(""), "no-cache");
  EXPECT_FALSE(r->header("X-Nomad-Index").has_value());
  bool chunked = r->header("Transfer-Encoding").value_or("") == "chunked";
  EXPECT_EQ(chunked, GetParam() == StreamTransport::kChunked);
  if (GetParam() == StreamTransport::kRaw) {
    EXPECT_EQ(r->header("Connection").value_or(""), "close");
  }
  ASSERT_EQ(r->body.substr(0, 3), "{}\n");
  auto frame = json::parse(r->body.substr(3));
  EXPECT_EQ(frame["Events"][0]["Type"], "PlanResult");
  EXPECT_EQ(r->body.back(), '\n');
  EXPECT_EQ(fake.request_count("event_stream"), 1);
  fake.stop();
}

INSTANTIATE_TEST_SUITE_P(Transports, NomadStreamSocket,
                         ::testing::Values(StreamTransport::kRaw, StreamTransport::kChunked));

}  // namespace
}  // namespace cn::fakes
