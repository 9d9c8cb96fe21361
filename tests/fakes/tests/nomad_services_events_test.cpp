// Topic Service of the fake's event stream (the Type of each deletion cause per version), the
// checks endpoint and the control calls for native services
// (/work/shared/reference/nomad-services.md sections 5-7 and 11).
#include <regex>

#include <gtest/gtest.h>

#include "tests/fakes/http/raw_http_client.h"
#include "tests/fakes/nomad/fake_nomad.h"
#include "tests/fakes/tests/nomad_services_util.h"
#include "tests/fakes/tests/nomad_test_util.h"

namespace cn::fakes {
namespace {

using namespace nomad_testing;
using nlohmann::json;

// Frames of topic Service from index `from` on (the buffer replays them), each as parsed JSON.
// A subscription past the newest frame gets that frame again, so older ones are dropped.
std::vector<json> service_frames(FakeNomad& fake, std::uint64_t from,
                                 const std::string& topic = "Service") {
  StreamRun run(fake,
                "/v1/event/stream?topic=" + topic + "&namespace=*&index=" + std::to_string(from));
  EXPECT_TRUE(run.writer().wait_lines(1));
  fake.drop_streams();
  EXPECT_TRUE(run.wait_done());
  std::vector<json> frames;
  for (const auto& line : run.writer().lines()) {
    auto j = json::parse(line);
    if (j.contains("Events") && j["Index"].get<std::uint64_t>() >= from) frames.push_back(j);
  }
  return frames;
}

std::vector<std::string> event_types(const std::vector<json>& frames) {
  std::vector<std::string> out;
  for (const auto& f : frames) {
    for (const auto& e : f["Events"]) out.push_back(e["Type"].get<std::string>());
  }
  return out;
}

class NomadServiceEvents : public ServicesFixture {
 protected:
  explicit NomadServiceEvents(const std::string& version = "1.9.7") : ServicesFixture(version) {}
  // Registers the alloc's group services and returns the first index after them.
  std::uint64_t register_group(const std::string& alloc) {
    EXPECT_TRUE(fake.register_services(alloc));
    return fake.current_index() + 1;
  }
};

class NomadServiceEvents17 : public NomadServiceEvents {
 protected:
  NomadServiceEvents17() : NomadServiceEvents("1.7.7") {}
};
class NomadServiceEvents1103 : public NomadServiceEvents {
 protected:
  NomadServiceEvents1103() : NomadServiceEvents("1.10.3") {}
};
class NomadServiceEvents1104 : public NomadServiceEvents {
 protected:
  NomadServiceEvents1104() : NomadServiceEvents("1.10.4") {}
};
class NomadServiceEvents205 : public NomadServiceEvents {
 protected:
  NomadServiceEvents205() : NomadServiceEvents("2.0.5") {}
};

// nomad/state/events.go: one frame per Upsert with an event per changed registration, Key =
// ID, FilterKeys [JobID, ServiceName], Payload {"Service": ...}; an unchanged upsert sends none.
TEST_F(NomadServiceEvents, UpsertIsOneFrameOfChangedRegistrations) {
  std::string alloc = place_api();
  const std::uint64_t from = fake.current_index() + 1;
  ASSERT_TRUE(fake.register_services(alloc));
  ASSERT_TRUE(fake.register_services(alloc));  // no change, no frame
  auto frames = service_frames(fake, from);
  ASSERT_EQ(frames.size(), 1u);
  ASSERT_EQ(frames[0]["Events"].size(), 4u);
  for (const auto& e : frames[0]["Events"]) {
    EXPECT_EQ(e["Topic"], "Service");
    EXPECT_EQ(e["Type"], "ServiceRegistration");
    EXPECT_EQ(e["Namespace"], "default");
    EXPECT_EQ(e["Index"], frames[0]["Index"]);
    EXPECT_EQ(e["Key"], e["Payload"]["Service"]["ID"]);
    EXPECT_EQ(e["FilterKeys"],
              json::array({"api", e["Payload"]["Service"]["ServiceName"].get<std::string>()}));
  }
}

// nomad/stream/subscription.go: a topic key matches the Key or a FilterKeys entry, so a
// service name selects its registrations.
TEST_F(NomadServiceEvents, TopicKeyMatchesTheServiceName) {
  std::string alloc = place_api();
  const std::uint64_t from = fake.current_index() + 1;
  ASSERT_TRUE(fake.register_services(alloc));
  auto frames = service_frames(fake, from, "Service:api-bare");
  ASSERT_EQ(frames.size(), 1u);
  ASSERT_EQ(frames[0]["Events"].size(), 1u);
  EXPECT_EQ(frames[0]["Events"][0]["Payload"]["Service"]["ServiceName"], "api-bare");
}

// client/serviceregistration/nsd/nsd.go: one DeleteByID per service, so one
// ServiceDeregistration frame each; the payload is the object as last stored.
TEST_F(NomadServiceEvents, ClientDeregistrationIsOneFramePerService) {
  std::string alloc = place_api();
  const std::uint64_t from = register_group(alloc);
  ASSERT_TRUE(fake.deregister_services(alloc));
  auto frames = service_frames(fake, from);
  ASSERT_EQ(frames.size(), 4u);
  EXPECT_EQ(event_types(frames), std::vector<std::string>(4, "ServiceDeregistration"));
  for (const auto& f : frames) {
    EXPECT_EQ(f["Events"][0]["Payload"]["Service"]["ID"], f["Events"][0]["Key"]);
    EXPECT_LT(f["Events"][0]["Payload"]["Service"]["ModifyIndex"].get<std::uint64_t>(),
              f["Index"].get<std::uint64_t>());
  }
  EXPECT_TRUE(fake.service_registrations().empty());
}

// nsd.go UpdateWorkload: a canary promotion re-upserts the workload; only the registration
// whose tags changed is in the one frame, with its ID and CreateIndex kept.
TEST_F(NomadServiceEvents, CanaryFlipIsOneUpsertOfWhatChanged) {
  std::string alloc = place_api();
  ASSERT_TRUE(fake.register_services(alloc, RegisterServicesOptions{"", true, ""}));
  const std::uint64_t from = fake.current_index() + 1;
  ASSERT_TRUE(fake.register_services(alloc));  // promoted: tags instead of canary_tags
  auto frames = service_frames(fake, from);
  ASSERT_EQ(frames.size(), 1u);
  ASSERT_EQ(frames[0]["Events"].size(), 1u);
  const auto& svc = frames[0]["Events"][0]["Payload"]["Service"];
  EXPECT_EQ(frames[0]["Events"][0]["Type"], "ServiceRegistration");
  EXPECT_EQ(svc["ServiceName"], "api");
  EXPECT_EQ(svc["Tags"], json::array({"v1", "http"}));
  EXPECT_LT(svc["CreateIndex"].get<std::uint64_t>(), svc["ModifyIndex"].get<std::uint64_t>());
}

// nsd.go UpdateWorkload after an in-place update that drops a service: the new set is
// upserted first (unchanged here: no frame), then the ID that disappeared is deleted.
TEST_F(NomadServiceEvents, InPlaceUpdateDeletesWhatDisappeared) {
  std::string alloc = place_api();
  const std::uint64_t from = register_group(alloc);
  auto job = services_job("default");
  job.groups[0].services.erase(job.groups[0].services.begin() + 3);  // api-bare
  ASSERT_TRUE(fake.register_job(job));
  ASSERT_TRUE(fake.update_alloc_in_place(alloc));
  auto ids = fake.register_services(alloc);
  ASSERT_TRUE(ids);
  EXPECT_EQ(ids->size(), 3u);
  auto frames = service_frames(fake, from);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(event_types(frames), std::vector<std::string>{"ServiceDeregistration"});
  EXPECT_EQ(frames[0]["Events"][0]["Payload"]["Service"]["ServiceName"], "api-bare");
  EXPECT_EQ(fake.service_registrations().size(), 3u);
}

// GH-20590 (nomad/state/state_store_service_registration.go, 1.8.0+): a terminal client report
// deletes the alloc's registrations in the report's transaction, under Type AllocationUpdated.
TEST_F(NomadServiceEvents, TerminalClientReportDeletesUnderAllocationUpdated) {
  std::string alloc = place_api();
  const std::uint64_t from = register_group(alloc);
  ASSERT_TRUE(fake.set_client_status(alloc, "failed"));
  auto frames = service_frames(fake, from);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(event_types(frames), std::vector<std::string>(4, "AllocationUpdated"));
  EXPECT_TRUE(fake.service_registrations().empty());

  // Lost is client-terminal too (nomad/structs/alloc.go terminalAllocationStatuses).
  std::string lost = place_api();
  ASSERT_TRUE(fake.register_services(lost));
  ASSERT_TRUE(fake.set_client_status(lost, "lost"));
  EXPECT_TRUE(fake.service_registrations().empty());
}

// Before GH-20590 nothing server-side removes them: they linger.
TEST_F(NomadServiceEvents17, TerminalClientReportLeavesThemBefore18) {
  std::string alloc = place_api();
  const std::uint64_t from = register_group(alloc);
  ASSERT_TRUE(fake.set_client_status(alloc, "complete"));
  EXPECT_TRUE(service_frames(fake, from).empty());
  EXPECT_EQ(fake.service_registrations().size(), 4u);
}

// GH-26424 (1.10.4): plan apply deletes the registrations of allocs it marks lost, PlanResult.
TEST_F(NomadServiceEvents1104, LostAllocDeletesUnderPlanResult) {
  std::string alloc = place_api();
  const std::uint64_t from = register_group(alloc);
  ASSERT_TRUE(fake.mark_alloc_lost(alloc));
  auto frames = service_frames(fake, from);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(event_types(frames), std::vector<std::string>(4, "PlanResult"));
  EXPECT_EQ(fake.alloc(alloc)->client_status, "lost");
}

// Node down, per version: nomad/node_endpoint.go (<= 1.7: a separate ServiceDeregistration
// entry after the node update), GH-20590 (1.8.0 - 1.10.3: inside the node transaction,
// NodeStreamEvent), GH-26424 (1.10.4+: kept until the allocs are marked lost).
TEST_F(NomadServiceEvents17, NodeDownDeletesInASeparateEntry) {
  std::string alloc = place_api();
  const std::uint64_t from = register_group(alloc);
  ASSERT_TRUE(fake.set_node_status(kRefNode, "down"));
  auto frames = service_frames(fake, from);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(event_types(frames), std::vector<std::string>(4, "ServiceDeregistration"));
  EXPECT_EQ(frames[0]["Index"].get<std::uint64_t>(), fake.node(kRefNode)->modify_index + 1);
}

TEST_F(NomadServiceEvents1103, NodeDownDeletesInTheNodeTransaction) {
  std::string alloc = place_api();
  const std::uint64_t from = register_group(alloc);
  ASSERT_TRUE(fake.set_node_status(kRefNode, "down"));
  auto frames = service_frames(fake, from);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(event_types(frames), std::vector<std::string>(4, "NodeStreamEvent"));
  EXPECT_EQ(frames[0]["Index"].get<std::uint64_t>(), fake.node(kRefNode)->modify_index);
}

TEST_F(NomadServiceEvents1104, NodeDownKeepsThem) {
  std::string alloc = place_api();
  const std::uint64_t from = register_group(alloc);
  ASSERT_TRUE(fake.set_node_status(kRefNode, "down"));
  EXPECT_TRUE(service_frames(fake, from).empty());
  EXPECT_EQ(fake.service_registrations().size(), 4u);
}

// nomad/state/state_store.go DeleteEval: alloc GC deletes them (1.8.0+) in a transaction
// without a message type, so the index moves and no event is published.
TEST_F(NomadServiceEvents, GarbageCollectionDeletesSilently) {
  std::string alloc = place_api();
  const std::uint64_t from = register_group(alloc);
  StopOptions stop;
  stop.client_status = "";  // the client never reported: the registrations are still there
  ASSERT_TRUE(fake.stop_alloc(alloc, stop));
  const std::uint64_t before = fake.service_registrations_index();
  ASSERT_TRUE(fake.gc_allocs({alloc}));
  EXPECT_TRUE(fake.service_registrations().empty());
  EXPECT_GT(fake.service_registrations_index(), before);
  EXPECT_TRUE(service_frames(fake, from).empty());
}

// nomad/structs/checks.go: check IDs are MD5 hex (32) before 2.0.5; client/structs
// AllocChecksResponse: a map by ID; Task and StatusCode omitempty; Unix-second Timestamp.
TEST_F(NomadServiceEvents, ChecksMapWith32HexIds) {
  std::string alloc = place_api();
  ASSERT_TRUE(fake.register_services(alloc));
  ASSERT_TRUE(fake.register_services(alloc, RegisterServicesOptions{"server", false, ""}));
  ASSERT_TRUE(fake.set_check_status(alloc, "api-alive", "success", 200));
  ASSERT_TRUE(fake.set_check_status(alloc, "task-alive", "failure"));
  auto r = get(fake, "/v1/client/allocation/" + alloc + "/checks");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(header(r, "X-Nomad-Index"), "");
  auto body = json::parse(r.body);
  ASSERT_EQ(body.size(), 3u);
  const std::int64_t now_s =
      std::chrono::duration_cast<std::chrono::seconds>(clock.wall_now().time_since_epoch()).count();
  for (const auto& [id, c] : body.items()) {
    EXPECT_TRUE(std::regex_match(id, std::regex("[0-9a-f]{32}"))) << id;
    EXPECT_EQ(c["ID"], id);
    EXPECT_EQ(c["Group"], fake.alloc(alloc)->name);
    EXPECT_EQ(c["Timestamp"], now_s);
    if (c["Check"] == "api-alive") {
      EXPECT_EQ(c["Status"], "success");
      EXPECT_EQ(c["StatusCode"], 200);
      EXPECT_EQ(c["Mode"], "healthiness");
      EXPECT_FALSE(c.contains("Task"));
    } else if (c["Check"] == "api-ready") {
      EXPECT_EQ(c["Status"], "pending");
      EXPECT_EQ(c["Mode"], "readiness");
      EXPECT_FALSE(c.contains("StatusCode"));
    } else {
      EXPECT_EQ(c["Status"], "failure");
      EXPECT_EQ(c["Task"], "server");
      EXPECT_FALSE(c.contains("StatusCode"));
    }
  }
  EXPECT_EQ(get(fake, "/v1/allocation/" + alloc + "/checks").body, r.body);  // the alias
}

// GH-28361 (2.0.5): SHA-256 check IDs.
TEST_F(NomadServiceEvents205, ChecksHave64HexIds) {
  std::string alloc = place_api();
  ASSERT_TRUE(fake.register_services(alloc));
  auto body = json::parse(get(fake, "/v1/client/allocation/" + alloc + "/checks").body);
  ASSERT_EQ(body.size(), 2u);
  for (const auto& [id, c] : body.items()) {
    EXPECT_TRUE(std::regex_match(id, std::regex("[0-9a-f]{64}"))) << id;
  }
}

// client/allocrunner/checks_hook.go purges results at PreKill; command/agent/alloc_endpoint.go
// allocChecks turns an unknown allocation into a 404.
TEST_F(NomadServiceEvents, ChecksEmptyAfterStopAndUnknownAllocIs404) {
  std::string alloc = place_api();
  EXPECT_EQ(get(fake, "/v1/client/allocation/" + alloc + "/checks").body, "{}");
  ASSERT_TRUE(fake.register_services(alloc));
  ASSERT_TRUE(fake.deregister_services(alloc));
  EXPECT_EQ(get(fake, "/v1/client/allocation/" + alloc + "/checks").body, "{}");
  auto unknown = get(fake, "/v1/client/allocation/ffffffff-0000-4000-8000-000000000000/checks");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(unknown.body, "Unknown allocation \"ffffffff-0000-4000-8000-000000000000\"");
}

// Issue hashicorp/nomad#23317: check results never reach the servers; a failing instance stays
// listed, unchanged, and no event is sent.
TEST_F(NomadServiceEvents, HealthNeverShowsInRegistrations) {
  std::string alloc = place_api();
  const std::uint64_t from = register_group(alloc);
  auto before = get(fake, "/v1/service/api");
  ASSERT_TRUE(fake.set_check_status(alloc, "api-alive", "failure", 503));
  auto after = get(fake, "/v1/service/api");
  EXPECT_EQ(after.body, before.body);
  EXPECT_EQ(header(after, "X-Nomad-Index"), header(before, "X-Nomad-Index"));
  EXPECT_TRUE(service_frames(fake, from).empty());
}

// The control API drives the same calls for a fake-nomad process.
TEST_F(NomadServiceEvents, ControlApi) {
  std::string alloc = place_api();
  auto call = [&](const std::string& method, const std::string& path, json body = json::object()) {
    return fake.handle(make_request(method, path, {}, body.dump()));
  };
  auto reg = call("POST", "/_fake/allocs/" + alloc + "/services", {{"task", "server"}});
  ASSERT_EQ(reg.status, 200) << reg.body;
  EXPECT_EQ(json::parse(reg.body)["ids"].size(), 1u);
  auto list = json::parse(call("GET", "/_fake/services").body);
  EXPECT_EQ(list["services"].size(), 1u);
  EXPECT_EQ(list["index"], fake.service_registrations_index());
  EXPECT_EQ(call("POST", "/_fake/allocs/" + alloc + "/checks",
                 {{"check", "task-alive"}, {"status", "success"}})
                .status,
            200);
  EXPECT_EQ(fake.check_results(alloc).begin()->second.status, "success");
  EXPECT_EQ(call("DELETE", "/_fake/allocs/" + alloc + "/services").status, 200);
  EXPECT_TRUE(fake.service_registrations().empty());
  EXPECT_EQ(call("POST", "/_fake/allocs/" + alloc + "/update").status, 200);
  EXPECT_EQ(call("POST", "/_fake/allocs/" + alloc + "/lost").status, 200);
  EXPECT_EQ(call("POST", "/_fake/allocs/" + alloc + "/gc").status, 200);
  EXPECT_FALSE(fake.alloc(alloc));
}

// The same over a socket, as a test driving a fake-nomad process does; the raw path keeps the
// trailing slash Nomad's handler counts.
TEST(NomadServicesOverHttp, ControlCallsAndRoutes) {
  FakeNomad fake;
  ASSERT_TRUE(fake.start());
  HttpTarget target = HttpTarget::tcp("127.0.0.1", fake.port());
  auto send = [&](const std::string& method, const std::string& path, const json& body) {
    auto r = http_request(target, method, path, body.is_null() ? "" : body.dump());
    EXPECT_TRUE(r) << path;
    return r ? *r : RawHttpResponse{};
  };
  json job = {{"id", "web"},
              {"groups",
               {{{"name", "app"},
                 {"ports", {{{"label", "http"}, {"to", 8080}}}},
                 {"services",
                  {{{"name", "web"},
                    {"port", "http"},
                    {"address_mode", "alloc"},
                    {"checks", {{{"name", "alive"}}}}}}}}}}};
  ASSERT_EQ(send("POST", "/_fake/jobs", job).status, 200);
  auto placed = send("POST", "/_fake/allocs", {{"job", "web"}, {"ports", {{"http", 23000}}}});
  std::string id = json::parse(placed.body)["id"];
  ASSERT_EQ(send("POST", "/_fake/allocs/" + id + "/network", {{"address", "10.200.7.7"}}).status,
            200);
  auto reg = send("POST", "/_fake/allocs/" + id + "/services", json::object());
  ASSERT_EQ(reg.status, 200) << reg.body;
  auto list = json::parse(send("GET", "/v1/service/web", nullptr).body);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["Address"], "10.200.7.7");
  EXPECT_EQ(list[0]["Port"], 8080);
  EXPECT_EQ(
      send("POST", "/_fake/allocs/" + id + "/checks", {{"check", "alive"}, {"status", "success"}})
          .status,
      200);
  auto checks = json::parse(send("GET", "/v1/allocation/" + id + "/checks", nullptr).body);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks.begin().value()["Status"], "success");
  EXPECT_EQ(send("DELETE", "/v1/service/web/", nullptr).body, "missing service id");
  EXPECT_EQ(send("DELETE", "/v1/service/web/" + list[0]["ID"].get<std::string>(), nullptr).status,
            200);
  auto state = json::parse(send("GET", "/_fake/services", nullptr).body);
  EXPECT_TRUE(state["services"].empty());
  fake.stop();
}

// A scenario document registers an alloc's workloads after its network report.
TEST_F(NomadServiceEvents, ScenarioRegistersServices) {
  json doc = {{"allocs",
               json::array({{{"job", "api"},
                             {"ports", {{"http", 25431}, {"admin", 25432}}},
                             {"network", {{"address", "10.200.9.9"}}},
                             {"services", json::array({json::object(), {{"task", "server"}}})}}})}};
  ASSERT_TRUE(fake.load_scenario(doc));
  auto rows = fake.service_registrations();
  ASSERT_EQ(rows.size(), 5u);
  auto alloc_mode = std::find_if(rows.begin(), rows.end(),
                                 [](const auto& r) { return r.service_name == "api-alloc"; });
  ASSERT_NE(alloc_mode, rows.end());
  EXPECT_EQ(alloc_mode->address, "10.200.9.9");
}

}  // namespace
}  // namespace cn::fakes
