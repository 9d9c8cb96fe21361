#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "common/nomad/model/event_frame.h"
#include "common/nomad/model/ndjson_framer.h"
#include "tests/support/alloc_ids.h"
#include "tests/unit/core/nomad_model_test_support.h"

namespace cn::nomad {
namespace {

using cn::testing::kAllocId;

EventFrame frame_of(std::string_view line) {
  auto msg = parse_event_frame(line);
  EXPECT_TRUE(msg.has_value()) << (msg ? "" : msg.error().message);
  if (!msg || !std::holds_alternative<EventFrame>(*msg)) return {};
  return std::get<EventFrame>(*msg);
}

TEST(NomadEventTest, HeartbeatIsEmptyObject) {
  auto msg = parse_event_frame("{}");
  ASSERT_TRUE(msg.has_value());
  EXPECT_TRUE(std::holds_alternative<Heartbeat>(*msg));
  auto spaced = parse_event_frame(" { } ");
  ASSERT_TRUE(spaced.has_value());
  EXPECT_TRUE(std::holds_alternative<Heartbeat>(*spaced));
}

TEST(NomadEventTest, PlanResultFrame) {
  auto framer = NdjsonFramer();
  auto lines = framer.feed(testdata::read_data("nomad/event_plan_result.ndjson"));
  ASSERT_TRUE(lines.has_value());
  ASSERT_EQ(lines->size(), 1U);
  EXPECT_TRUE(framer.finish().has_value());

  EventFrame frame = frame_of((*lines)[0]);
  EXPECT_EQ(frame.index, 1201U);
  ASSERT_EQ(frame.events.size(), 1U);
  const Event& e = frame.events[0];
  EXPECT_EQ(e.topic, "Allocation");
  EXPECT_EQ(e.type, "PlanResult");
  EXPECT_EQ(e.key, kAllocId);
  EXPECT_EQ(e.nomad_namespace, "default");
  EXPECT_EQ(e.index, 1201U);
  EXPECT_EQ(e.filter_keys,
            (std::vector<std::string>{"web", "0c5e2a71-3b9d-4f21-8e6a-5d7c9b1a2f30"}));
  ASSERT_TRUE(e.allocation.has_value());
  EXPECT_FALSE(e.payload_error.has_value());
  EXPECT_EQ(e.allocation->client_status, "pending");
  EXPECT_FALSE(e.allocation->network_status.has_value());
  EXPECT_FALSE(e.allocation->job.has_value());
}

TEST(NomadEventTest, AllocationUpdatedCarriesAddress) {
  std::string text = testdata::read_data("nomad/event_alloc_updated.ndjson");
  ASSERT_FALSE(text.empty());
  ASSERT_EQ(text.back(), '\n');
  EventFrame frame = frame_of(std::string_view(text).substr(0, text.size() - 1));
  ASSERT_EQ(frame.events.size(), 1U);
  const Event& e = frame.events[0];
  EXPECT_EQ(e.type, "AllocationUpdated");
  ASSERT_TRUE(e.allocation.has_value());
  EXPECT_EQ(e.allocation->client_status, "running");
  EXPECT_EQ(e.allocation->modify_index, 1240U);
  EXPECT_EQ(e.allocation->address(), "10.200.3.17");
}

TEST(NomadEventTest, OtherTopicsKeepNoAllocation) {
  EventFrame frame = frame_of(
      R"({"Index":9,"Events":[{"Topic":"Node","Type":"NodeRegistration","Key":"n1",
          "Namespace":"","FilterKeys":null,"Index":9,"Payload":{"Node":{"ID":"n1"}}}]})");
  ASSERT_EQ(frame.events.size(), 1U);
  EXPECT_FALSE(frame.events[0].allocation.has_value());
  EXPECT_FALSE(frame.events[0].payload_error.has_value());
  EXPECT_TRUE(frame.events[0].filter_keys.empty());
}

TEST(NomadEventTest, BadPayloadSpoilsOnlyItsEvent) {
  EventFrame frame = frame_of(
      R"({"Index":9,"Events":[
          {"Topic":"Allocation","Key":"x","Payload":{"Allocation":{"ID":"not-a-uuid"}}},
          {"Topic":"Allocation","Key":"y","Payload":{"Allocation":null}},
          {"Topic":"Allocation","Key":"z","Payload":{"Allocation":[]}},
          {"Topic":"Allocation","Key":"4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11",
           "Payload":{"Allocation":{"ID":"4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11"}}}]})");
  ASSERT_EQ(frame.events.size(), 4U);
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(frame.events[i].allocation.has_value()) << i;
    EXPECT_TRUE(frame.events[i].payload_error.has_value()) << i;
  }
  EXPECT_TRUE(frame.events[3].allocation.has_value());
}

struct BadLine {
  const char* name;
  std::string line;
};

class NomadEventBadLineTest : public ::testing::TestWithParam<BadLine> {};

TEST_P(NomadEventBadLineTest, IsAnErrorNotACrash) {
  auto msg = parse_event_frame(GetParam().line);
  ASSERT_FALSE(msg.has_value());
  EXPECT_FALSE(msg.error().message.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Table, NomadEventBadLineTest,
    ::testing::Values(
        BadLine{"empty", ""},
        BadLine{"plain_text", "subscription closed by server, client should resubscribe"},
        BadLine{"truncated", R"({"Events":[{"Topic":"Alloc)"}, BadLine{"array", "[]"},
        BadLine{"null", "null"}, BadLine{"number", "42"},
        BadLine{"events_object", R"({"Events":{},"Index":1})"},
        BadLine{"index_string", R"({"Events":[],"Index":"1"})"},
        BadLine{"index_negative", R"({"Events":[],"Index":-1})"},
        BadLine{"index_float", R"({"Events":[],"Index":1.5})"},
        BadLine{"index_huge", R"({"Events":[],"Index":184467440737095516150})"},
        BadLine{"event_not_object", R"({"Events":[1],"Index":1})"},
        BadLine{"filter_keys_mixed", R"({"Events":[{"FilterKeys":["a",1]}],"Index":1})"},
        BadLine{"topic_number", R"({"Events":[{"Topic":5}],"Index":1})"},
        BadLine{"deep", std::string(100000, '[') + std::string(100000, ']')},
        BadLine{"deep_in_payload", R"({"Events":[{"Topic":"Allocation","Payload":)" +
                                       std::string(5000, '[') + std::string(5000, ']') + "}]}"},
        BadLine{"two_docs", "{} {}"}),
    [](const auto& test_info) { return std::string(test_info.param.name); });

TEST(NomadEventTest, UnicodeAndHugeMetaSurvive) {
  std::string big(1 << 20, 'm');
  std::string line =
      R"({"Index":1,"Events":[{"Topic":"Allocation","Key":"k","Payload":{"Allocation":{"ID":"4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11","Namespace":"caf\u00e9 ✓","Job":{"Meta":{"big":")" +
      big + R"("}}}}}]})";
  EventFrame frame = frame_of(line);
  ASSERT_EQ(frame.events.size(), 1U);
  ASSERT_TRUE(frame.events[0].allocation.has_value());
  EXPECT_EQ(frame.events[0].allocation->nomad_namespace, "caf\xc3\xa9 \xe2\x9c\x93");
  EXPECT_EQ(frame.events[0].allocation->job->meta.at("big").size(), big.size());
}

TEST(NdjsonFramerTest, SplitsAcrossArbitraryChunks) {
  std::string stream = "{}\n{\"Index\":1}\r\n\n  \n{\"Index\":2}\n";
  for (std::size_t step = 1; step <= stream.size(); ++step) {
    NdjsonFramer framer;
    std::vector<std::string> all;
    for (std::size_t i = 0; i < stream.size(); i += step) {
      auto lines = framer.feed(std::string_view(stream).substr(i, step));
      ASSERT_TRUE(lines.has_value());
      all.insert(all.end(), lines->begin(), lines->end());
    }
    EXPECT_EQ(all, (std::vector<std::string>{"{}", "{\"Index\":1}", "{\"Index\":2}"})) << step;
    EXPECT_TRUE(framer.finish().has_value());
  }
}

TEST(NdjsonFramerTest, KeepsPartialLineUntilNewline) {
  NdjsonFramer framer;
  auto first = framer.feed("{\"Ind");
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(first->empty());
  EXPECT_EQ(framer.pending_bytes(), 5U);
  auto second = framer.feed("ex\":3}\n{");
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(*second, (std::vector<std::string>{"{\"Index\":3}"}));
  EXPECT_EQ(framer.pending_bytes(), 1U);
}

TEST(NdjsonFramerTest, FinalLineWithoutNewlineIsTruncated) {
  NdjsonFramer framer;
  ASSERT_TRUE(
      framer.feed("{}\nsubscription closed by server, client should resubscribe").has_value());
  auto end = framer.finish();
  ASSERT_FALSE(end.has_value());
  EXPECT_NE(end.error().message.find("subscription closed by server"), std::string::npos);
  EXPECT_EQ(framer.pending_bytes(), 0U);
}

TEST(NdjsonFramerTest, RefusesOverlongLinesAndStaysFailed) {
  NdjsonFramer framer(16);
  ASSERT_TRUE(framer.feed(std::string(16, 'a') + "\n").has_value());
  ASSERT_TRUE(framer.feed(std::string(10, 'a')).has_value());
  EXPECT_FALSE(framer.feed(std::string(7, 'a')).has_value());
  EXPECT_FALSE(framer.feed("\n").has_value());
  EXPECT_FALSE(framer.finish().has_value());
  framer.reset();
  auto again = framer.feed("{}\n");
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->size(), 1U);
}

}  // namespace
}  // namespace cn::nomad
