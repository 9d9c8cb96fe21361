// The fake's node table: GET /v1/nodes (NodeListStub shape, paging, blocking on the nodes table,
// node:read, the request log and faults) and the controls a test or another process drives it
// with (add, status, removal).
#include <future>

#include <gtest/gtest.h>

#include "tests/fakes/http/raw_http_client.h"
#include "tests/fakes/nomad/fake_nomad.h"
#include "tests/fakes/tests/http_test_util.h"
#include "tests/fakes/tests/nomad_test_util.h"
#include "tests/support/manual_clock.h"

namespace cn::fakes {
namespace {

using namespace nomad_testing;
using nlohmann::json;
using namespace std::chrono_literals;

// Before kRefNode ("f2c1...") in ID order, which Nomad lists nodes in.
constexpr const char* kSecondNode = "0a0a0a0a-0000-4000-8000-000000000002";

class NomadNodes : public ::testing::Test {
 protected:
  NodeRecord second() const {
    NodeRecord n;
    n.id = kSecondNode;
    n.name = "worker-2";
    n.ip = "10.0.1.16";
    return n;
  }
  json list(const std::string& target = "/v1/nodes") {
    auto r = get(fake, target);
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body);
  }
  std::future<HttpResponse> async_get(std::string target) {
    return std::async(std::launch::async, [this, target] { return get(fake, target); });
  }

  ManualClock clock{wall_at(kRefStart)};
  FakeNomad fake{reference_config(&clock)};
};

TEST_F(NomadNodes, ListsTheAgentsOwnNodeReadyFromTheStart) {
  auto r = get(fake, "/v1/nodes");
  ASSERT_EQ(r.status, 200);
  EXPECT_FALSE(header(r, "X-Nomad-Index").empty());
  auto nodes = nlohmann::ordered_json::parse(r.body);
  ASSERT_EQ(nodes.size(), 1u);
  const auto& stub = nodes[0];
  EXPECT_EQ(stub["ID"], kRefNode);
  EXPECT_EQ(stub["Name"], "worker-1");
  EXPECT_EQ(stub["Status"], "ready");
  EXPECT_EQ(stub["Address"], "10.0.1.15");
  EXPECT_EQ(stub["Version"], "1.9.7");
  EXPECT_TRUE(stub["Drivers"].contains("docker"));
  // A stub, not a Node: no secrets, no attributes unless asked, no resources in the fake.
  for (const char* absent : {"SecretID", "Attributes", "Meta", "NodeResources", "HTTPAddr"}) {
    EXPECT_FALSE(stub.contains(absent)) << absent;
  }
  std::string prev;
  for (const auto& [k, v] : stub.items()) {
    EXPECT_LT(prev, k) << "stub keys must be sorted";
    prev = k;
  }
  auto with_os = list("/v1/nodes?os=true");
  EXPECT_EQ(with_os[0]["Attributes"], json({{"os.name", "debian"}}));
}

TEST_F(NomadNodes, AddStatusAndRemoveEachMoveTheNodesIndex) {
  auto index_of = [&] { return std::stoull(header(get(fake, "/v1/nodes"), "X-Nomad-Index")); };
  const auto start = index_of();
  fake.add_node(second());
  const auto added = index_of();
  EXPECT_GT(added, start);
  auto nodes = list();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0]["ID"], kSecondNode);  // by ID, as Nomad's id index orders them
  EXPECT_EQ(nodes[0]["CreateIndex"], added);

  ASSERT_TRUE(fake.set_node_status(kSecondNode, "down"));
  const auto downed = index_of();
  EXPECT_GT(downed, added);
  nodes = list();
  EXPECT_EQ(nodes[0]["Status"], "down");
  EXPECT_EQ(nodes[0]["ModifyIndex"], downed);
  EXPECT_EQ(fake.node(kSecondNode)->status, "down");

  ASSERT_TRUE(fake.remove_node(kSecondNode));
  EXPECT_GT(index_of(), downed);
  nodes = list();
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0]["ID"], kRefNode);
  EXPECT_FALSE(fake.node(kSecondNode));
}

TEST_F(NomadNodes, ControlsRefuseUnknownNodesAndStatuses) {
  auto bad = fake.set_node_status(kRefNode, "gone");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().status, 400);
  auto missing = fake.set_node_status(kSecondNode, "down");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().status, 404);
  EXPECT_EQ(fake.remove_node(kSecondNode).error().status, 404);
  for (const char* status : {"initializing", "ready", "down", "disconnected"}) {
    EXPECT_TRUE(fake.set_node_status(kRefNode, status)) << status;
  }
  // The agent's own node is the test's to change like any other.
  ASSERT_TRUE(fake.remove_node(kRefNode));
  EXPECT_EQ(list().size(), 0u);
}

TEST_F(NomadNodes, BlockingListWakesOnAStatusChange) {
  fake.add_node(second());
  const std::string index = header(get(fake, "/v1/nodes"), "X-Nomad-Index");
  auto pending = async_get("/v1/nodes?index=" + index + "&wait=60s");
  ASSERT_TRUE(fake.wait_for_blocked(1));
  EXPECT_EQ(pending.wait_for(50ms), std::future_status::timeout);
  ASSERT_TRUE(fake.set_node_status(kSecondNode, "down"));
  ASSERT_EQ(pending.wait_for(5s), std::future_status::ready);
  auto r = pending.get();
  EXPECT_EQ(r.status, 200);
  EXPECT_GT(std::stoull(header(r, "X-Nomad-Index")), std::stoull(index));
  EXPECT_EQ(json::parse(r.body)[0]["Status"], "down");
}

TEST_F(NomadNodes, PrefixAndPages) {
  fake.add_node(second());
  EXPECT_EQ(list("/v1/nodes?prefix=f2c1").size(), 1u);
  EXPECT_EQ(list("/v1/nodes?prefix=ffff").size(), 0u);
  auto first = get(fake, "/v1/nodes?per_page=1");
  ASSERT_EQ(first.status, 200);
  ASSERT_EQ(json::parse(first.body).size(), 1u);
  EXPECT_EQ(json::parse(first.body)[0]["ID"], kSecondNode);
  const std::string token = header(first, "X-Nomad-Nexttoken");
  EXPECT_EQ(token, kRefNode);  // the first ID of the next page
  auto rest = get(fake, "/v1/nodes?per_page=1&next_token=" + token);
  ASSERT_EQ(json::parse(rest.body).size(), 1u);
  EXPECT_EQ(json::parse(rest.body)[0]["ID"], kRefNode);
  EXPECT_EQ(header(rest, "X-Nomad-Nexttoken"), "");
  EXPECT_EQ(get(fake, "/v1/nodes?per_page=x").status, 400);
}

TEST_F(NomadNodes, NeedsNodeReadWithAclsOn) {
  fake.add_token(TokenSpec{"mgmt", true, {}, true, true});
  fake.add_token(TokenSpec{"ns-reader", false, {"*"}, false, true});
  fake.add_token(TokenSpec{"node-reader", false, {}, true, false});
  fake.set_acl_enabled(true);
  auto none = get(fake, "/v1/nodes");
  EXPECT_EQ(none.status, 403);
  EXPECT_EQ(none.body, "Permission denied");
  EXPECT_EQ(get(fake, "/v1/nodes", {{"X-Nomad-Token", "ns-reader"}}).status, 403);
  EXPECT_EQ(get(fake, "/v1/nodes", {{"X-Nomad-Token", "node-reader"}}).status, 200);
  EXPECT_EQ(get(fake, "/v1/nodes", {{"X-Nomad-Token", "mgmt"}}).status, 200);
}

TEST_F(NomadNodes, RequestLogAndFaults) {
  fake.fail_next(1, 500, "/v1/nodes");
  auto failed = get(fake, "/v1/nodes");
  EXPECT_EQ(failed.status, 500);
  EXPECT_EQ(failed.body, "No cluster leader");
  EXPECT_EQ(get(fake, "/v1/nodes").status, 200);
  EXPECT_EQ(fake.request_count("nodes"), 2);
  EXPECT_EQ(fake.requests().front().status, 500);
  EXPECT_EQ(fake.request_count("node"), 0);  // /v1/nodes is not /v1/node/:id
}

// Another process (the demo, a labeler under test) drives the node table through /_fake/.
TEST(NomadNodesControlApi, AddDownAndRemoveOverHttp) {
  FakeNomad fake;
  ASSERT_TRUE(fake.start());
  HttpTarget target = HttpTarget::tcp("127.0.0.1", fake.port());
  auto call = [&](const std::string& method, const std::string& path, const json& body) {
    auto r = http_request(target, method, path, body.is_null() ? "" : body.dump());
    EXPECT_TRUE(r) << path;
    return r ? *r : RawHttpResponse{};
  };
  const std::string node = kSecondNode;
  EXPECT_EQ(call("POST", "/_fake/nodes", {{"id", node}, {"name", "worker-2"}}).status, 200);
  EXPECT_EQ(call("POST", "/_fake/nodes/" + node + "/status", {{"status", "down"}}).status, 200);
  auto state = json::parse(call("GET", "/_fake/state", nullptr).body);
  ASSERT_EQ(state["nodes"].size(), 2u);
  EXPECT_EQ(state["nodes"][0]["id"], node);
  EXPECT_EQ(state["nodes"][0]["status"], "down");
  auto listed = json::parse(call("GET", "/v1/nodes", nullptr).body);
  EXPECT_EQ(listed[0]["Status"], "down");
  EXPECT_EQ(call("POST", "/_fake/nodes/" + node + "/status", {{"status", "gone"}}).status, 400);
  EXPECT_EQ(call("POST", "/_fake/nodes/nope/status", {{"status", "down"}}).status, 404);
  EXPECT_EQ(call("DELETE", "/_fake/nodes/" + node, nullptr).status, 200);
  EXPECT_EQ(call("DELETE", "/_fake/nodes/" + node, nullptr).status, 404);
  EXPECT_EQ(json::parse(call("GET", "/v1/nodes", nullptr).body).size(), 1u);
  fake.stop();
}

}  // namespace
}  // namespace cn::fakes
