// The fake's scenario API (jobs, children, placements, client updates, stops, restores), its
// faults, request log, /_fake/ control API and the fake-nomad executable.
#include <signal.h>
#include <unistd.h>

#include <future>
#include <regex>

#include <gtest/gtest.h>

#include "tests/fakes/http/raw_http_client.h"
#include "tests/fakes/nomad/fake_nomad.h"
#include "tests/fakes/tests/http_test_util.h"
#include "tests/fakes/tests/nomad_test_util.h"
#include "tests/support/child_process.h"
#include "tests/support/manual_clock.h"

namespace cn::fakes {
namespace {

using namespace nomad_testing;
using nlohmann::json;
using namespace std::chrono_literals;

class NomadScenario : public ::testing::Test {
 protected:
  NomadScenario() {
    JobSpec job;
    job.id = "web";
    EXPECT_TRUE(fake.register_job(job));
  }
  std::string place(const std::string& job = "web") {
    PlaceRequest p;
    p.job_id = job;
    auto id = fake.place_alloc(p);
    EXPECT_TRUE(id) << id.error().message;
    return id.value_or("");
  }
  json alloc_json(const std::string& id) {
    return json::parse(get(fake, "/v1/allocation/" + id).body);
  }

  ManualClock clock{wall_at(kRefStart)};
  FakeNomad fake{reference_config(&clock)};
};

TEST_F(NomadScenario, PeriodicAndDispatchedChildren) {
  JobSpec periodic;
  periodic.id = "report";
  periodic.type = "batch";
  periodic.periodic_spec = "*/5 * * * *";
  ASSERT_TRUE(fake.register_job(periodic));
  auto child = fake.launch_periodic("default", "report", 1755781500);
  ASSERT_TRUE(child);
  EXPECT_EQ(*child, "report/periodic-1755781500");
  auto job = json::parse(get(fake, "/v1/job/report%2Fperiodic-1755781500").body);
  EXPECT_EQ(job["ParentID"], "report");
  EXPECT_TRUE(job["Periodic"].is_null());
  EXPECT_EQ(json::parse(get(fake, "/v1/job/report").body)["Periodic"]["Spec"], "*/5 * * * *");
  PlaceRequest on_parent;
  on_parent.job_id = "report";
  EXPECT_FALSE(fake.place_alloc(on_parent)) << "a periodic parent never runs allocs";
  std::string id = place(*child);
  EXPECT_EQ(alloc_json(id)["Name"], "report/periodic-1755781500.app[0]");
  EXPECT_EQ(alloc_json(id)["Job"]["ParentID"], "report");

  JobSpec param;
  param.id = "batch";
  param.type = "batch";
  param.parameterized = true;
  param.meta = {{"team", "data"}, {"tier", "low"}};
  ASSERT_TRUE(fake.register_job(param));
  auto dispatched = fake.dispatch_job("default", "batch", {{"tier", "high"}}, "hi");
  ASSERT_TRUE(dispatched);
  EXPECT_TRUE(std::regex_match(*dispatched, std::regex(R"(batch/dispatch-\d+-[0-9a-f]{8})")))
      << *dispatched;
  auto djob = json::parse(get(fake, "/v1/job/" + *dispatched).body);  // unescaped '/' works too
  EXPECT_EQ(djob["Dispatched"], true);
  EXPECT_EQ(djob["ParentID"], "batch");
  EXPECT_EQ(djob["Meta"], (json{{"team", "data"}, {"tier", "high"}}));
  EXPECT_EQ(djob["Payload"], "aGk=");
}

TEST_F(NomadScenario, AllocStopViaDesiredTransitionPublishesNomadsSequence) {
  StreamRun run(fake, "/v1/event/stream?topic=Allocation");
  ASSERT_TRUE(run.writer().wait_lines(1));
  std::string id = place();
  ASSERT_TRUE(fake.set_network_status(id, NetworkStatusSpec{"10.200.0.9", "", "eth0"}));
  StopOptions stop;
  stop.via_desired_transition = true;
  ASSERT_TRUE(fake.stop_alloc(id, stop));
  ASSERT_TRUE(run.writer().wait_lines(6));
  auto lines = run.writer().lines();
  std::vector<json> allocs;
  std::vector<std::string> types;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    auto e = json::parse(lines[i])["Events"][0];
    types.push_back(e["Type"]);
    allocs.push_back(e["Payload"]["Allocation"]);
  }
  EXPECT_EQ(types, (std::vector<std::string>{"PlanResult", "AllocationUpdated",
                                             "AllocationUpdateDesiredStatus", "PlanResult",
                                             "AllocationUpdated"}));
  EXPECT_EQ(allocs[1]["NetworkStatus"]["Address"], "10.200.0.9");
  EXPECT_EQ(allocs[1]["ClientStatus"], "running");
  EXPECT_EQ(allocs[1]["AllocModifyIndex"], allocs[0]["AllocModifyIndex"]);
  EXPECT_EQ(allocs[2]["DesiredTransition"]["Migrate"], true);
  EXPECT_EQ(allocs[2]["AllocModifyIndex"], allocs[0]["AllocModifyIndex"]);
  EXPECT_EQ(allocs[3]["DesiredStatus"], "stop");
  EXPECT_EQ(allocs[3]["AllocModifyIndex"], allocs[3]["ModifyIndex"]);
  EXPECT_EQ(allocs[4]["ClientStatus"], "complete");
  EXPECT_EQ(allocs[4]["TaskStates"]["server"]["State"], "dead");
  EXPECT_TRUE(allocs[4]["TaskStates"]["server"]["FinishedAt"].is_string());
}

TEST_F(NomadScenario, StopJobStopsEveryAllocInOneFrame) {
  std::vector<PlaceRequest> two(2);
  for (auto& p : two) p.job_id = "web";
  ASSERT_TRUE(fake.place_allocs(two));
  std::uint64_t from = fake.current_index() + 1;
  ASSERT_TRUE(fake.stop_job("default", "web"));
  StreamRun run(fake, "/v1/event/stream?topic=*&index=" + std::to_string(from));
  ASSERT_TRUE(run.writer().wait_lines(4));
  auto lines = run.writer().lines();
  EXPECT_EQ(json::parse(lines[1])["Events"][0]["Type"], "JobDeregistered");
  auto plan = json::parse(lines[2]);
  ASSERT_EQ(plan["Events"].size(), 2u);
  EXPECT_EQ(plan["Events"][0]["Payload"]["Allocation"]["DesiredStatus"], "stop");
  EXPECT_EQ(json::parse(lines[3])["Events"].size(), 2u);
}

TEST_F(NomadScenario, PublishDelayHoldsClientUpdatesUntilTheClockPasses) {
  fake.set_publish_delay(200ms);
  std::string id = place();
  ASSERT_TRUE(fake.set_network_status(id, NetworkStatusSpec{"10.200.0.7", "", "eth0"}));
  EXPECT_EQ(fake.pending_updates(), 1u);
  EXPECT_FALSE(alloc_json(id).contains("NetworkStatus"));
  ASSERT_TRUE(clock.wait_for_sleepers(1));
  clock.advance(199ms);
  EXPECT_EQ(fake.pending_updates(), 1u);
  clock.advance(1ms);
  ASSERT_TRUE(testing::eventually([&] { return fake.pending_updates() == 0; }));
  EXPECT_EQ(alloc_json(id)["NetworkStatus"]["Address"], "10.200.0.7");
}

TEST_F(NomadScenario, ResetIndexMakesTheNodeIndexGoBackwards) {
  place();
  std::string node_path = std::string("/v1/node/") + kRefNode + "/allocations";
  EXPECT_EQ(header(get(fake, node_path), "X-Nomad-Index"), "1002");
  fake.reset_index(500);
  EXPECT_EQ(header(get(fake, node_path), "X-Nomad-Index"), "500");
  place();
  EXPECT_EQ(fake.current_index(), 501u);
}

TEST_F(NomadScenario, FailNextAppliesToMatchingPathsOnly) {
  fake.fail_next(2, 500, "/v1/node/");
  std::string path = std::string("/v1/node/") + kRefNode + "/allocations";
  EXPECT_EQ(get(fake, "/v1/allocations").status, 200);
  auto first = get(fake, path);
  EXPECT_EQ(first.status, 500);
  EXPECT_EQ(first.body, "No cluster leader");
  EXPECT_EQ(get(fake, path).status, 500);
  EXPECT_EQ(get(fake, path).status, 200);
  fake.fail_next(1, 0);
  EXPECT_TRUE(get(fake, path).drop_without_response);
  auto counts = fake.request_counts();
  EXPECT_EQ(counts["node_allocations"], 4);
  EXPECT_EQ(counts["allocations"], 1);
}

TEST_F(NomadScenario, LatencyDelaysEveryRequestOnTheInjectedClock) {
  fake.set_latency(100ms);
  auto pending = std::async(std::launch::async, [&] { return get(fake, "/v1/allocations"); });
  ASSERT_TRUE(clock.wait_for_sleepers(2));  // the request and the publish-delay thread
  EXPECT_EQ(pending.wait_for(50ms), std::future_status::timeout);
  clock.advance(100ms);
  ASSERT_EQ(pending.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(pending.get().status, 200);
}

TEST_F(NomadScenario, ScenarioDocumentPreloadsEverything) {
  json doc = {{"nodes", {{{"id", "0a0a0a0a-0000-4000-8000-000000000003"}, {"name", "worker-3"}}}},
              {"jobs", {{{"id", "api"}, {"namespace", "team-b"}, {"meta", {{"team", "b"}}}}}},
              {"allocs",
               {{{"job", "api"},
                 {"namespace", "team-b"},
                 {"node", "0a0a0a0a-0000-4000-8000-000000000003"},
                 {"network", {{"address", "10.200.9.9"}}}}}},
              {"tokens", {{{"secret", "s3cret"}}}},
              {"acl_enabled", true}};
  ASSERT_TRUE(fake.load_scenario(doc));
  auto r = get(fake, "/v1/node/0a0a0a0a-0000-4000-8000-000000000003/allocations",
               {{"X-Nomad-Token", "s3cret"}});
  ASSERT_EQ(r.status, 200);
  auto list = json::parse(r.body);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["NetworkStatus"]["Address"], "10.200.9.9");
  EXPECT_EQ(list[0]["Job"]["Meta"]["team"], "b");
  EXPECT_FALSE(fake.load_scenario(json{{"jobs", {{{"type", "service"}}}}}));  // no id
}

TEST(NomadControlApi, DrivesTheFakeOverHttp) {
  FakeNomad fake;
  ASSERT_TRUE(fake.start());
  HttpTarget target = HttpTarget::tcp("127.0.0.1", fake.port());
  auto post = [&](const std::string& path, const json& body) {
    auto r = http_request(target, "POST", path, body.dump());
    EXPECT_TRUE(r) << path;
    return r ? *r : RawHttpResponse{};
  };
  EXPECT_EQ(post("/_fake/jobs", {{"id", "web"}, {"groups", {{{"name", "app"}}}}}).status, 200);
  auto placed = post("/_fake/allocs", json::array({{{"job", "web"}}, {{"job", "web"}}}));
  ASSERT_EQ(placed.status, 200) << placed.body;
  auto ids = json::parse(placed.body)["ids"];
  ASSERT_EQ(ids.size(), 2u);
  std::string id = ids[0];
  EXPECT_EQ(post("/_fake/allocs/" + id + "/network", {{"address", "10.200.1.2"}}).status, 200);
  EXPECT_EQ(post("/_fake/allocs/" + id + "/stop", {{"client_status", "complete"}}).status, 200);
  EXPECT_EQ(post("/_fake/allocs/nope/network", {{"address", "x"}}).status, 404);
  EXPECT_EQ(post("/_fake/faults", {{"fail_next", {{"count", 1}, {"status", 503}}}}).status, 200);
  EXPECT_EQ(http_request(target, "GET", "/v1/allocations")->status, 503);
  EXPECT_EQ(post("/_fake/tokens", {{"secret", "abc"}}).status, 200);
  EXPECT_EQ(post("/_fake/acl", {{"enabled", true}}).status, 200);
  EXPECT_EQ(http_request(target, "GET", "/v1/allocations")->status, 403);
  EXPECT_EQ(http_request(target, "GET", "/v1/allocations", {}, {{"X-Nomad-Token", "abc"}})->status,
            200);
  EXPECT_EQ(http_request(target, "DELETE", "/_fake/tokens/abc")->status, 200);
  EXPECT_EQ(http_request(target, "GET", "/v1/allocations", {}, {{"X-Nomad-Token", "abc"}})->status,
            403);
  auto state = json::parse(http_request(target, "GET", "/_fake/state")->body);
  EXPECT_EQ(state["allocs"].size(), 2u);
  auto requests = json::parse(http_request(target, "GET", "/_fake/requests")->body);
  EXPECT_EQ(requests["counts"]["allocations"], 4);
  EXPECT_EQ(post("/_fake/index", {{"reset_to", 10}}).status, 200);
  EXPECT_EQ(json::parse(http_request(target, "GET", "/_fake/state")->body)["index"], 10);
  fake.stop();
}

// The executable: --port-file, --scenario and --acl-token, then a clean exit on SIGTERM.
TEST(NomadExecutable, ServesAPreloadedScenario) {
  const char* bin_dir = std::getenv("CN_BIN_DIR");
  if (!bin_dir) GTEST_SKIP() << "CN_BIN_DIR not set (run through ctest)";
  std::string bin = std::string(bin_dir) + "/fake-nomad";
  if (access(bin.c_str(), X_OK) != 0) GTEST_SKIP() << bin << " not built";
  testing::TempDir dir;
  std::string scenario = dir.file("scenario.json");
  {
    std::ofstream out(scenario);
    out << json{{"jobs", {{{"id", "web"}}}},
                {"allocs", {{{"job", "web"}, {"network", {{"address", "10.200.4.4"}}}}}}}
               .dump();
  }
  std::string port_file = dir.file("port");
  cn::testing::ChildProcess nomad(
      {bin, "--port-file", port_file, "--scenario", scenario, "--acl-token", "tok", "--node-id",
       "n-1"},
      cn::testing::current_environment(),
      {dir.file("fake-nomad.log"), cn::testing::ChildProcess::LogMode::kTruncate, {}});
  ASSERT_TRUE(nomad.started()) << nomad.start_error();
  int port = 0;
  ASSERT_TRUE(testing::eventually(
      [&] {
        std::ifstream in(port_file);
        return static_cast<bool>(in >> port) && port > 0;
      },
      10s));
  auto r = http_request(HttpTarget::tcp("127.0.0.1", port), "GET", "/v1/node/n-1/allocations", {},
                        {{"X-Nomad-Token", "tok"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  auto list = json::parse(r->body);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["NetworkStatus"]["Address"], "10.200.4.4");
  EXPECT_EQ(http_request(HttpTarget::tcp("127.0.0.1", port), "GET", "/v1/agent/self")->status, 403);
  auto status = nomad.stop(SIGTERM, 10s);
  ASSERT_TRUE(status) << nomad.log();
  EXPECT_EQ(status->exit_code, 0) << nomad.log();
}

}  // namespace
}  // namespace cn::fakes
