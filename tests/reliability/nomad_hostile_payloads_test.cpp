// Hostile answers from Nomad through the real curl client and the in-process daemon: bodies
// that are not JSON, truncated, nested 200 000 deep, null or of the wrong types, an answer
// about another allocation, huge and exotic meta, and broken event stream lines.
//
// Expected for each: no crash, a log line naming the problem, and the endpoint labeled with the
// right labels in the end. An answer that may be a passing glitch (unparseable, wrong
// allocation) is retried by the worker; one that parses but cannot give labels (no embedded
// Job) is given up on and left to the next resync, whose node listing carries the Job.
#include <gtest/gtest.h>

#include "common/labels/derive_labels.h"
#include "common/labels/label.h"
#include "common/labels/label_policy.h"
#include "common/labels/label_text.h"
#include "tests/fakes/http/raw_http_client.h"
#include "tests/reliability/support/in_process_labeler.h"
#include "tests/reliability/support/wait.h"

namespace cn::reliability {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

enum class HealedBy { kFirstAnswer, kRetry, kResync };

struct HostilePayload {
  std::string name;
  // The hostile body, made from the real GET /v1/allocation/:id answer and another allocation's.
  std::function<std::string(const json& real, const json& other)> body;
  std::string logged;
  HealedBy healed_by;
};

std::ostream& operator<<(std::ostream& os, const HostilePayload& p) {
  return os << p.name;
}

json get_allocation(FakeNode& node, const std::string& id) {
  auto res = fakes::http_request(fakes::HttpTarget::tcp("127.0.0.1", node.nomad().port()), "GET",
                                 "/v1/allocation/" + id);
  if (!res || res->status != 200) throw std::runtime_error("cannot read allocation " + id);
  return json::parse(res->body);
}

json with(json doc, const std::function<void(json&)>& edit) {
  edit(doc);
  return doc;
}

class NomadHostilePayloads : public ::testing::TestWithParam<HostilePayload> {};

TEST_P(NomadHostilePayloads, NoCrashClearLogLineAndTheEndpointEndsLabeled) {
  const HostilePayload& hostile = GetParam();
  FakeNode node;
  fakes::JobSpec other;
  other.id = "other";
  ASSERT_TRUE(node.nomad().register_job(other));
  auto config = InProcessLabeler::config_for(node);
  config.resync_interval = hostile.healed_by == HealedBy::kResync ? 1s : 0s;
  InProcessLabeler labeler(node, config);
  ASSERT_TRUE(labeler.start());

  const std::string ip = "10.200.60.1";
  std::string alloc = node.running_alloc(ip);
  std::string other_alloc = node.place("other");
  std::string body = hostile.body(get_allocation(node, alloc), get_allocation(node, other_alloc));
  node.nomad().fail_next(1, 200, "/v1/allocation/" + alloc, body);
  ASSERT_TRUE(labeler.notify_add(alloc, ip, 0));

  ASSERT_TRUE(node.wait_labeled(alloc, kWebLabels, 20s)) << labeler.logs();
  // The endpoint can carry its identity a moment before the worker's log line is written.
  EXPECT_TRUE(
      eventually([&] { return labeler.logs().find(hostile.logged) != std::string::npos; }, 5s))
      << labeler.logs().substr(0, 20000);
  const std::string logs = labeler.logs();
  EXPECT_EQ(node.label_writes(alloc), 1) << "never labeled with anything but its own job";
  if (hostile.healed_by != HealedBy::kFirstAnswer) {
    EXPECT_NE(logs.find("not labeled: alloc=" + alloc), std::string::npos);
  }
  if (hostile.healed_by == HealedBy::kResync) {
    EXPECT_NE(logs.find("retry=resync"), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Payloads, NomadHostilePayloads,
    ::testing::Values(
        HostilePayload{"HtmlErrorPageWithStatus200",
                       [](const json&, const json&) {
                         return std::string("<html><body>upstream</body></html>");
                       },
                       "invalid JSON", HealedBy::kRetry},
        HostilePayload{"TruncatedJson",
                       [](const json& real, const json&) {
                         std::string text = real.dump();
                         return text.substr(0, text.size() / 2);
                       },
                       "invalid JSON", HealedBy::kRetry},
        HostilePayload{"NestedTwoHundredThousandDeep",
                       [](const json&, const json&) { return std::string(200'000, '['); },
                       "nested deeper than", HealedBy::kRetry},
        HostilePayload{"NullDocument", [](const json&, const json&) { return std::string("null"); },
                       "Allocation: expected an object, got null", HealedBy::kRetry},
        HostilePayload{"WrongTypes",
                       [](const json& real, const json&) {
                         return with(real,
                                     [](json& a) {
                                       a["TaskGroup"] = {{"Name", "app"}};
                                       a["ModifyIndex"] = "12";
                                     })
                             .dump();
                       },
                       "Allocation at /TaskGroup", HealedBy::kRetry},
        HostilePayload{"AnswerAboutAnotherAllocation",
                       [](const json&, const json& other) { return other.dump(); },
                       "answered for allocation", HealedBy::kRetry},
        HostilePayload{"NullsWhereObjectsBelong",
                       [](const json& real, const json&) {
                         return with(real,
                                     [](json& a) {
                                       a["NetworkStatus"] = nullptr;
                                       a["AllocatedResources"] = nullptr;
                                       a["TaskStates"] = nullptr;
                                       a["Job"]["Meta"] = nullptr;
                                       a["Job"]["TaskGroups"] = nullptr;
                                     })
                             .dump();
                       },
                       "labels written: alloc=", HealedBy::kFirstAnswer},
        HostilePayload{"JobNull",
                       [](const json& real, const json&) {
                         return with(real, [](json& a) { a["Job"] = nullptr; }).dump();
                       },
                       "has no embedded job", HealedBy::kRetry}),
    [](const auto& param_info) { return param_info.param.name; });

// Expected: a job whose meta is 1 MB (5000 keys) with an allow-listed value that is 10 KB of
// unicode, NUL, newlines and text shaped like other labels is labeled without crash: only
// nomad: labels, every value a valid label value, the allow-listed one reduced to a
// deterministic cleaned prefix plus hash, and nothing forged from the meta text.
TEST(NomadHostileMeta, HugeUnicodeMetaIsLabeledWithSanitisedValuesOnly) {
  FakeNodeOptions options;
  std::string team =
      "ünïcødé ☃ \u202e" + std::string(1, '\0') + "\nreserved:host\nnomad:nomad.job=evil ";
  while (team.size() < 10'000) team += "🚀 x=y;z";
  options.job_meta = {{"team", team}, {"nomad.job", "evil"}};
  for (int i = 0; i < 5000; ++i) options.job_meta["k" + std::to_string(i)] = std::string(200, 'v');
  FakeNode node(options);
  auto config = InProcessLabeler::config_for(node);
  config.policy = *labels::parse_label_policy("team,k1");
  InProcessLabeler labeler(node, config);
  ASSERT_TRUE(labeler.start());

  std::string alloc = node.running_alloc("10.200.61.1");
  auto reply = labeler.notify_add(alloc, "10.200.61.1", 10'000);
  ASSERT_TRUE(reply && *reply) << labeler.logs().substr(0, 5000);
  EXPECT_EQ((*reply)->status, notify::ReplyStatus::kLabeled) << (*reply)->message;

  auto got = node.identity_labels(alloc);
  // 3 core + 2 meta + the 2 k8s compat labels.
  ASSERT_EQ(got.size(), 7u) << ::testing::PrintToString(got);
  for (const auto& text : got) {
    auto label = labels::parse_label(text);
    EXPECT_TRUE(labels::is_ours(label)) << text;
    EXPECT_TRUE(labels::is_valid_label_value(label.value)) << text;
  }
  auto has = [&](const std::string& l) {
    return std::find(got.begin(), got.end(), l) != got.end();
  };
  EXPECT_TRUE(has("nomad:nomad.job=web")) << "meta cannot forge the job label";
  EXPECT_TRUE(has("nomad:k1=" + labels::sanitize_label_value(std::string(200, 'v'))))
      << "a long value keeps a cleaned prefix and a hash";
  EXPECT_TRUE(has("nomad:team=" + labels::sanitize_label_value(team)));
}

// Expected: event stream lines nested 200 000 deep or cut off mid-object end that stream with a
// clear log line; the watcher reconnects at the last good index and an allocation started
// afterwards is labeled from the watch alone. Nothing is skipped, nothing loops.
TEST(NomadHostileStream, DeeplyNestedAndTruncatedLinesReconnectAndLoseNothing) {
  FakeNode node;
  auto config = InProcessLabeler::config_for(node);
  config.watch = labeler::WatchMode::kEvents;
  node.nomad().fail_next(1, 200, "/v1/event/stream", "{}\n" + std::string(200'000, '[') + "\n");
  node.nomad().fail_next(1, 200, "/v1/event/stream", "{}\n{\"Events\":[{\"Index\":12,\"Payl");
  InProcessLabeler labeler(node, config);
  ASSERT_TRUE(labeler.start());
  ASSERT_TRUE(node.nomad().wait_for_streams(1));

  std::string alloc = node.place();
  node.create_endpoint(alloc, "10.200.62.1");
  node.report_network(alloc, "10.200.62.1");
  ASSERT_TRUE(node.wait_labeled(alloc, kWebLabels, 20s)) << labeler.logs();
  const std::string logs = labeler.logs();
  EXPECT_NE(logs.find("nested deeper than"), std::string::npos) << logs;
  EXPECT_GE(
      labeler.daemon().metrics().errors(labeler::ErrorKindLabel::nomad_stream_bad_line).Value(), 1);
  EXPECT_EQ(node.nomad().request_count("event_stream"), 3);
}

}  // namespace
}  // namespace cn::reliability
