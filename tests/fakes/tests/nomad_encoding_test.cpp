// Pure helpers of the fake: Go durations and times, omitempty, the filter subset, job shapes.
#include <gtest/gtest.h>

#include "tests/fakes/nomad/encoder.h"
#include "tests/fakes/nomad/filter_expr.h"
#include "tests/fakes/nomad/go_values.h"
#include "tests/fakes/tests/nomad_test_util.h"
#include "tests/support/manual_clock.h"

namespace cn::fakes {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

TEST(NomadGoValues, ParsesGoDurations) {
  EXPECT_EQ(parse_go_duration("300ms"), std::chrono::nanoseconds(300ms));
  EXPECT_EQ(parse_go_duration("30s"), std::chrono::nanoseconds(30s));
  EXPECT_EQ(parse_go_duration("5m"), std::chrono::nanoseconds(5min));
  EXPECT_EQ(parse_go_duration("1m30s"), std::chrono::nanoseconds(90s));
  EXPECT_EQ(parse_go_duration("1.5h"), std::chrono::nanoseconds(90min));
  EXPECT_EQ(parse_go_duration("250us"), std::chrono::nanoseconds(250us));
  EXPECT_EQ(parse_go_duration("0"), std::chrono::nanoseconds(0));
  for (const char* bad : {"", "30", "s", "5x", "1..5s", "ms5"}) {
    EXPECT_FALSE(parse_go_duration(bad)) << bad;
  }
}

TEST(NomadGoValues, Rfc3339NanoTrimsTrailingZeros) {
  EXPECT_EQ(rfc3339_nano(1755781245123456789), "2025-08-21T13:00:45.123456789Z");
  EXPECT_EQ(rfc3339_nano(1755781236004000000), "2025-08-21T13:00:36.004Z");
  EXPECT_EQ(rfc3339_nano(1755781236000000000), "2025-08-21T13:00:36Z");
}

TEST(NomadEncoder, OmitEmptyDropsGoZeroValues) {
  json j = {{"a", ""},
            {"b", 0},
            {"c", false},
            {"d", nullptr},
            {"e", json::array()},
            {"f", json::object()},
            {"g", "x"},
            {"h", 1},
            {"i", true},
            {"j", {{"k", nullptr}}}};
  omit_empty(j);
  EXPECT_EQ(j, (json{{"g", "x"}, {"h", 1}, {"i", true}, {"j", {{"k", nullptr}}}}));
}

TEST(NomadEncoder, StaticPortsAreReservedWithValueAndBatchJobsHaveNoDeployment) {
  ManualClock clock{nomad_testing::wall_at(nomad_testing::kRefStart)};
  FakeNomad fake(nomad_testing::reference_config(&clock));
  JobSpec job;
  job.id = "etl";
  job.type = "batch";
  GroupSpec g;
  g.ports = {PortSpec{"metrics", 9100, 9100}};
  job.groups = {g};
  ASSERT_TRUE(fake.register_job(job));
  PlaceRequest p;
  p.job_id = "etl";
  auto id = fake.place_alloc(p);
  ASSERT_TRUE(id);
  auto a = json::parse(nomad_testing::get(fake, "/v1/allocation/" + *id).body);
  EXPECT_FALSE(a.contains("DeploymentID"));
  auto net = a["Job"]["TaskGroups"][0]["Networks"][0];
  EXPECT_FALSE(net.contains("DynamicPorts"));
  EXPECT_EQ(net["ReservedPorts"][0]["Value"], 9100);
  EXPECT_TRUE(a["Job"]["TaskGroups"][0]["Update"].is_null());
  EXPECT_EQ(a["Job"]["TaskGroups"][0]["ReschedulePolicy"]["DelayFunction"], "constant");
  EXPECT_TRUE(a["Job"]["Meta"].is_null()) << "a job without meta encodes a nil map";
}

TEST(NomadFilter, EvaluatesTheSupportedSubset) {
  json doc = {{"NodeID", "n1"},
              {"ClientStatus", "running"},
              {"Job", {{"Meta", {{"team", "payments"}}}}},
              {"Tags", {"a", "b"}},
              {"Empty", ""}};
  auto check = [&](const std::string& expr) {
    auto f = parse_filter(expr);
    EXPECT_TRUE(f) << expr << ": " << (f ? "" : f.error().message);
    return f && (*f)->matches(doc);
  };
  EXPECT_TRUE(check(R"(NodeID == "n1")"));
  EXPECT_FALSE(check(R"(NodeID == "n2")"));
  EXPECT_TRUE(check(R"(NodeID != "n2" and ClientStatus == running)"));
  EXPECT_TRUE(check(R"(NodeID == "n2" or Job.Meta.team == "payments")"));
  EXPECT_TRUE(check(R"(not (NodeID == "n2"))"));
  EXPECT_TRUE(check(R"("a" in Tags)"));
  EXPECT_TRUE(check(R"("c" not in Tags)"));
  EXPECT_TRUE(check(R"(Job.Meta contains "team")"));
  EXPECT_TRUE(check("Empty is empty"));
  EXPECT_TRUE(check("Missing is empty"));
  EXPECT_TRUE(check("NodeID is not empty"));
  for (const char* bad :
       {"NodeID ==", "NodeID = \"x\"", "(NodeID == \"x\"", "== \"x\"", "NodeID == \"x"}) {
    auto f = parse_filter(bad);
    EXPECT_FALSE(f) << bad;
    if (!f) {
      EXPECT_EQ(f.error().status, 400);
    }
  }
}

}  // namespace
}  // namespace cn::fakes
