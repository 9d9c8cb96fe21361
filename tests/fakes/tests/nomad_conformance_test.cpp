// The fake against the reference payloads (tests/fakes/nomad/testdata, copied from
// /work/shared/reference/nomad): same fields, same values, same key order. Only the values the
// reference itself cannot pin down (task-event times, StartedAt, DeploymentStatus.Timestamp) are
// checked by type and format instead of value; CreateTime/ModifyTime/SubmitTime are exact.
#include <gtest/gtest.h>

#include "tests/fakes/nomad/fake_nomad.h"
#include "tests/fakes/tests/nomad_test_util.h"
#include "tests/support/manual_clock.h"

namespace cn::fakes {
namespace {

using namespace nomad_testing;
using nlohmann::ordered_json;

class NomadConformance : public ::testing::Test {
 protected:
  ManualClock clock{wall_at(kRefStart)};
  FakeNomad fake{reference_config(&clock)};
};

TEST_F(NomadConformance, AllocGetMatchesReferenceFieldByFieldInKeyOrder) {
  play_reference(fake, clock);
  auto r = get(fake, std::string("/v1/allocation/") + kRefAlloc);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(header(r, "Content-Type"), "application/json");
  EXPECT_EQ(header(r, "X-Nomad-Index"), "1240");
  auto diffs =
      json_diffs(ordered_json::parse(read_testdata("alloc_get.json")), ordered_json::parse(r.body));
  EXPECT_TRUE(diffs.empty()) << join(diffs);
  // Compact, no trailing newline, UnixNano as a bare integer above 2^53.
  EXPECT_EQ(r.body.find('\n'), std::string::npos);
  EXPECT_EQ(r.body, ordered_json::parse(r.body).dump());
  EXPECT_NE(r.body.find("\"CreateTime\":1755781234567890123,"), std::string::npos);
  EXPECT_NE(r.body.find("\"FinishedAt\":null"), std::string::npos);
}

TEST_F(NomadConformance, PrettyGivesFourSpaceIndentAndNewline) {
  play_reference(fake, clock);
  auto r = get(fake, std::string("/v1/allocation/") + kRefAlloc + "?pretty");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body.substr(0, 26), "{\n    \"AllocModifyIndex\": ");
  EXPECT_EQ(r.body.back(), '\n');
}

TEST_F(NomadConformance, NodeAllocationsCarryTheFullAllocWithJob) {
  play_reference(fake, clock);
  auto r = get(fake, std::string("/v1/node/") + kRefNode + "/allocations");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(header(r, "X-Nomad-Index"), "1240");
  auto list = ordered_json::parse(r.body);
  ASSERT_EQ(list.size(), 1u);
  auto diffs = json_diffs(ordered_json::parse(read_testdata("alloc_get.json")), list[0]);
  EXPECT_TRUE(diffs.empty()) << join(diffs);
}

TEST_F(NomadConformance, AllocationsListStubMatchesReference) {
  play_reference(fake, clock);
  auto r = get(fake, "/v1/allocations");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(header(r, "X-Nomad-Index"), "1240");
  auto diffs = json_diffs(ordered_json::parse(read_testdata("allocations_list.json")),
                          ordered_json::parse(r.body));
  EXPECT_TRUE(diffs.empty()) << join(diffs);
}

TEST_F(NomadConformance, PlanResultFrameIsByteIdenticalToReference) {
  play_reference(fake, clock);
  StreamRun run(fake, "/v1/event/stream?topic=Allocation&index=1201");
  ASSERT_TRUE(run.writer().wait_lines(3));
  auto lines = run.writer().lines();
  EXPECT_EQ(lines[0], "{}");
  std::string want = read_testdata("event_plan_result.ndjson");
  while (!want.empty() && want.back() == '\n') want.pop_back();
  EXPECT_EQ(lines[1], want);
  fake.drop_streams();
  EXPECT_TRUE(run.wait_done());
}

TEST_F(NomadConformance, AllocationUpdatedFrameMatchesReference) {
  play_reference(fake, clock);
  StreamRun run(fake, "/v1/event/stream?topic=Allocation&index=1240");
  ASSERT_TRUE(run.writer().wait_lines(2));
  auto lines = run.writer().lines();
  auto diffs = json_diffs(ordered_json::parse(read_testdata("event_alloc_updated.ndjson")),
                          ordered_json::parse(lines[1]));
  EXPECT_TRUE(diffs.empty()) << join(diffs);
  EXPECT_EQ(lines[1].find("\"Job\""), std::string::npos) << "events must strip Job";
  fake.drop_streams();
  EXPECT_TRUE(run.wait_done());
}

// The comparator must catch exactly the regressions these tests exist for.
TEST(NomadConformanceComparator, CatchesRenamedFieldDroppedOmitemptyAndKeyOrder) {
  auto ref = ordered_json::parse(read_testdata("alloc_get.json"));
  ASSERT_TRUE(json_diffs(ref, ref).empty());

  auto renamed = ref;
  renamed["NetworkStatus"].erase("InterfaceName");
  renamed["NetworkStatus"]["Interface"] = "eth0";
  EXPECT_FALSE(json_diffs(ref, renamed).empty());

  auto not_omitted = ref;
  not_omitted["PreviousAllocation"] = "";  // an empty top-level field that must vanish
  EXPECT_FALSE(json_diffs(ref, not_omitted).empty());

  ordered_json reordered = ordered_json::object();
  reordered["ClientStatus"] = ref["ClientStatus"];  // moved ahead of AllocModifyIndex
  for (const auto& [k, v] : ref.items()) {
    if (k != "ClientStatus") reordered[k] = v;
  }
  EXPECT_FALSE(json_diffs(ref, reordered).empty());

  auto as_double = ref;
  as_double["CreateTime"] = 1755781234567890123.0;
  EXPECT_FALSE(json_diffs(ref, as_double).empty());

  auto port_value = ref;
  port_value["Job"]["TaskGroups"][0]["Networks"][0]["DynamicPorts"][0]["Value"] = 0;
  EXPECT_FALSE(json_diffs(ref, port_value).empty());
}

TEST_F(NomadConformance, FreshAllocOmitsEmptyTopLevelFieldsButKeepsNestedZeros) {
  play_reference(fake, clock, /*with_network=*/false);
  auto r = get(fake, std::string("/v1/allocation/") + kRefAlloc);
  ASSERT_EQ(r.status, 200);
  auto alloc = nlohmann::json::parse(r.body);
  for (const char* absent :
       {"NetworkStatus", "TaskStates", "ClientDescription", "DesiredTransition",
        "PreviousAllocation", "NextAllocation", "DesiredDescription", "FollowupEvalID",
        "PreemptedAllocations", "RescheduleTracker", "DeploymentStatus", "AllocStates"}) {
    EXPECT_FALSE(alloc.contains(absent)) << absent;
  }
  // Nested structs keep "", 0 and null.
  EXPECT_TRUE(alloc["Job"].contains("ParentID"));
  EXPECT_TRUE(alloc["Job"]["Periodic"].is_null());
  EXPECT_EQ(alloc["Job"]["Version"], 0);
  // The stub keeps every field even when empty.
  auto stubs = nlohmann::json::parse(get(fake, "/v1/allocations").body);
  EXPECT_EQ(stubs[0]["DesiredDescription"], "");
  EXPECT_TRUE(stubs[0]["TaskStates"].is_null());
  EXPECT_TRUE(stubs[0]["DesiredTransition"]["Migrate"].is_null());
}

TEST_F(NomadConformance, JobGetIsTheLatestVersionAndNamespaced) {
  play_reference(fake, clock);
  auto r = get(fake, "/v1/job/web?namespace=default");
  ASSERT_EQ(r.status, 200);
  auto job = ordered_json::parse(r.body);
  auto ref_job = ordered_json::parse(read_testdata("alloc_get.json"))["Job"];
  // Same shape as the embedded job; the placement moved Status on to running.
  ref_job["Status"] = "running";
  ref_job["ModifyIndex"] = 1201;
  auto diffs = json_diffs(ref_job, job);
  EXPECT_TRUE(diffs.empty()) << join(diffs);
  auto wrong = get(fake, "/v1/job/web?namespace=other");
  EXPECT_EQ(wrong.status, 404);
  EXPECT_EQ(wrong.body, "job not found");
  EXPECT_EQ(header(wrong, "Content-Type"), "text/plain; charset=utf-8");
}

}  // namespace
}  // namespace cn::fakes
