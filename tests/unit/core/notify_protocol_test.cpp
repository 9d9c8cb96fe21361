#include <gtest/gtest.h>

#include "common/notify/protocol.h"

namespace cn::notify {
namespace {

TEST(NotifyProtocol, RequestRoundTrip) {
  Request r;
  r.op = Op::kAdd;
  r.alloc_id = "4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11";
  r.ifname = "eth0";
  r.netns = "/var/run/netns/x";
  r.ips = {"10.0.0.2"};
  r.nomad = {"global", "default", "web", "app", r.alloc_id};
  r.wait_ms = 3000;
  std::string line = encode(r);
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one frame is one line";
  auto back = decode_request(line);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, r);
}

TEST(NotifyProtocol, ReplyRoundTrip) {
  Reply r{ReplyStatus::kLabeled, 1734, 48213, {"nomad:nomad.job=web"}, ""};
  auto back = decode_reply(encode(r));
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, r);
}

TEST(NotifyProtocol, RefusesWhatMustNotCrossTheSocket) {
  const std::string ok_id = "4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11";
  for (const std::string& line : std::vector<std::string>{
           std::string("garbage"),
           std::string(R"({"op":"add"})"),  // no version
           std::string(
               R"({"v":1,"op":"add","alloc_id":"../etc","ifname":"eth0"})"),      // bad alloc ID
           R"({"v":1,"op":"add","alloc_id":")" + ok_id + R"(","ifname":"a/b"})",  // bad ifname
           R"({"v":1,"op":"zap","alloc_id":")" + ok_id + R"(","ifname":"eth0"})",
           R"({"v":1,"op":"add","alloc_id":")" + ok_id + R"(","ifname":"eth0","wait_ms":-5})",
           R"({"v":1,"op":"add","alloc_id":")" + ok_id + R"(","ifname":"eth0","ips":"x"})",
           R"({"v":1,"op":"add","alloc_id":")" + ok_id + R"(","ifname":"eth0","nomad":[]})",
           std::string(kMaxFrameBytes + 1, ' ')}) {
    EXPECT_FALSE(decode_request(line)) << line.substr(0, 80);
  }
}

TEST(NotifyProtocol, FieldErrorsNameTheJsonPointerAndIntegersAreRangeChecked) {
  const std::string head =
      R"({"v":1,"op":"add","alloc_id":"4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11",)";
  auto wait = decode_request(head + R"("ifname":"eth0","wait_ms":600001})");
  ASSERT_FALSE(wait);
  EXPECT_EQ(wait.error().message,
            "frame at /wait_ms: expected an integer from 0 to 600000, got 600001");
  auto nomad = decode_request(head + R"("ifname":"eth0","nomad":{"job":7}})");
  ASSERT_FALSE(nomad);
  EXPECT_EQ(nomad.error().message, "frame at /nomad/job: expected a string, got number");
  auto missing = decode_request(R"({"v":1,"op":"add"})");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "frame at /alloc_id: missing");

  // Beyond int64: get<long long>() would have wrapped it to a negative endpoint ID.
  auto reply = decode_reply(R"({"v":1,"status":"labeled","endpoint_id":18446744073709551615})");
  ASSERT_FALSE(reply);
  EXPECT_NE(reply.error().message.find("frame at /endpoint_id: expected an integer from"),
            std::string::npos)
      << reply.error().message;
  EXPECT_FALSE(decode_request(R"({"v":18446744073709551617,"op":"add"})"));
}

TEST(NotifyProtocol, OtherVersionsAreRecognisedNotMistakenForGarbage) {
  const std::string line = R"({"v":2,"op":"add","alloc_id":"x"})";
  EXPECT_FALSE(decode_request(line));
  EXPECT_EQ(peek_version(line), 2);
  EXPECT_EQ(peek_version("nonsense"), std::nullopt);
  auto reply = decode_reply(R"({"v":2,"status":"something-new"})");
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, ReplyStatus::kUnsupportedVersion);
}

}  // namespace
}  // namespace cn::notify
