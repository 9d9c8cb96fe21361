// Read endpoints of the fake: blocking queries, error bodies, ACL, list parameters.
#include <future>

#include <gtest/gtest.h>

#include "tests/fakes/nomad/fake_nomad.h"
#include "tests/fakes/tests/nomad_test_util.h"
#include "tests/support/manual_clock.h"

namespace cn::fakes {
namespace {

using namespace nomad_testing;
using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kOtherNode = "0a0a0a0a-0000-4000-8000-000000000002";

class NomadApi : public ::testing::Test {
 protected:
  NomadApi() {
    NodeRecord other;
    other.id = kOtherNode;
    other.name = "worker-2";
    other.ip = "10.0.1.16";
    fake.add_node(other);
    JobSpec job;
    job.id = "web";
    EXPECT_TRUE(fake.register_job(job));
  }
  std::string place(const std::string& node = "") {
    PlaceRequest p;
    p.job_id = "web";
    p.node_id = node;
    auto id = fake.place_alloc(p);
    EXPECT_TRUE(id) << id.error().message;
    return id.value_or("");
  }
  std::future<HttpResponse> async_get(std::string target) {
    return std::async(std::launch::async, [this, target] { return get(fake, target); });
  }

  ManualClock clock{wall_at(kRefStart)};
  FakeNomad fake{reference_config(&clock)};
};

TEST_F(NomadApi, NodeAllocationsIndexIsMaxModifyIndexOfThatNode) {
  std::string mine = place();
  std::uint64_t mine_index = fake.current_index();
  place(kOtherNode);
  auto r = get(fake, std::string("/v1/node/") + kRefNode + "/allocations");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(header(r, "X-Nomad-Index"), std::to_string(mine_index));
  auto list = json::parse(r.body);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["ID"], mine);
  EXPECT_TRUE(list[0].contains("Job"));

  auto unknown = get(fake, "/v1/node/ffffffff-0000-4000-8000-000000000000/allocations");
  EXPECT_EQ(unknown.status, 200);
  EXPECT_EQ(unknown.body, "[]");
}

// GetAllocs (nomad/node_endpoint.go) answers the max ModifyIndex of the node's allocations that
// are left, so collecting the newest one makes the index go down; blockingRPC (nomad/rpc.go)
// re-runs a parked query on the deletion but keeps it parked while the index is not above
// ?index, so the lower index only shows once the wait runs out. With nothing left the answer is
// the allocs table index, which the GC itself moved up (StateStore.DeleteEval).
TEST_F(NomadApi, GarbageCollectionLowersTheNodeIndexToTheNewestAllocationLeft) {
  std::string older = place();
  const std::uint64_t older_index = fake.current_index();
  std::string newer = place();
  StopOptions stop;
  stop.client_status = "";
  ASSERT_TRUE(fake.stop_alloc(newer, stop));
  const std::string node_path = std::string("/v1/node/") + kRefNode + "/allocations";
  const std::string asked = std::to_string(fake.current_index());
  ASSERT_EQ(header(get(fake, node_path), "X-Nomad-Index"), asked);

  auto pending = async_get(node_path + "?index=" + asked + "&wait=100ms");
  ASSERT_TRUE(fake.wait_for_blocked(1));
  ASSERT_TRUE(fake.gc_allocs({newer}));
  EXPECT_EQ(pending.wait_for(50ms), std::future_status::timeout)
      << "a lower index does not answer a parked query";
  clock.advance(100ms);
  ASSERT_EQ(pending.wait_for(5s), std::future_status::ready);
  auto r = pending.get();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(header(r, "X-Nomad-Index"), std::to_string(older_index));
  auto list = json::parse(r.body);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["ID"], older);

  EXPECT_FALSE(fake.gc_allocs({older})) << "a live allocation is never collected";
  ASSERT_TRUE(fake.stop_alloc(older, stop));
  ASSERT_TRUE(fake.gc_allocs({older}));
  EXPECT_EQ(header(get(fake, node_path), "X-Nomad-Index"), std::to_string(fake.current_index()));
}

TEST_F(NomadApi, BlockingQueryWakesOnlyOnThisNodesChange) {
  place();
  std::uint64_t start = fake.current_index();
  auto pending = async_get(std::string("/v1/node/") + kRefNode +
                           "/allocations?index=" + std::to_string(start) + "&wait=60s");
  ASSERT_TRUE(fake.wait_for_blocked(1));
  place(kOtherNode);  // another node's change must not answer this query
  ASSERT_TRUE(fake.wait_for_blocked(1));
  EXPECT_EQ(pending.wait_for(50ms), std::future_status::timeout);
  std::string second = place();
  ASSERT_EQ(pending.wait_for(5s), std::future_status::ready);
  auto r = pending.get();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(header(r, "X-Nomad-Index"), std::to_string(fake.current_index()));
  EXPECT_EQ(json::parse(r.body).size(), 2u);
}

TEST_F(NomadApi, BlockingQueryTimeoutReturnsUnchangedIndex) {
  place();
  std::string index = std::to_string(fake.current_index());
  auto pending = async_get(std::string("/v1/node/") + kRefNode + "/allocations?index=" + index +
                           "&wait=100ms");
  ASSERT_TRUE(fake.wait_for_blocked(1));
  clock.advance(99ms);
  EXPECT_EQ(pending.wait_for(50ms), std::future_status::timeout);
  clock.advance(1ms);
  ASSERT_EQ(pending.wait_for(5s), std::future_status::ready);
  auto r = pending.get();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(header(r, "X-Nomad-Index"), index);
}

TEST_F(NomadApi, WaitIsCappedAt300Seconds) {
  place();
  std::string index = std::to_string(fake.current_index());
  auto pending =
      async_get(std::string("/v1/node/") + kRefNode + "/allocations?index=" + index + "&wait=10m");
  ASSERT_TRUE(fake.wait_for_blocked(1));
  clock.advance(299s);
  EXPECT_EQ(pending.wait_for(50ms), std::future_status::timeout);
  clock.advance(1s);
  ASSERT_EQ(pending.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(pending.get().status, 200);
}

TEST(NomadApiJitter, WaitGetsUpToASixteenthOfJitter) {
  ManualClock clock{wall_at(kRefStart)};
  auto cfg = reference_config(&clock);
  cfg.blocking_jitter = true;
  FakeNomad fake(cfg);
  auto pending = std::async(std::launch::async,
                            [&] { return get(fake, "/v1/allocations?index=999999&wait=160s"); });
  ASSERT_TRUE(fake.wait_for_blocked(1));
  clock.advance(160s);
  // The seeded jitter is > 0 (a draw of exactly 0 ns out of 10 s is not a realistic outcome),
  // so `wait` alone does not answer; wait * 17/16 always does.
  EXPECT_EQ(pending.wait_for(50ms), std::future_status::timeout);
  clock.advance(10s);
  ASSERT_EQ(pending.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(pending.get().status, 200);
}

TEST(NomadApiRealTime, BlockingTimeoutOnTheSystemClock) {
  FakeNomadConfig cfg;
  cfg.blocking_jitter = false;
  FakeNomad fake(cfg);
  auto t0 = std::chrono::steady_clock::now();
  auto r = get(fake, "/v1/allocations?index=5000&wait=100ms");
  auto elapsed = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(r.status, 200);
  EXPECT_GE(elapsed, 100ms);
  EXPECT_LT(elapsed, 5s);
}

TEST_F(NomadApi, BadWaitAndIndexAre400PlainText) {
  auto bad_wait = get(fake, "/v1/allocations?index=1&wait=forever");
  EXPECT_EQ(bad_wait.status, 400);
  EXPECT_EQ(bad_wait.body, "Invalid wait time");
  EXPECT_EQ(header(bad_wait, "Content-Type"), "text/plain; charset=utf-8");
  auto unitless = get(fake, "/v1/allocations?index=1&wait=30");
  EXPECT_EQ(unitless.status, 400);
  auto bad_index = get(fake, "/v1/allocations?index=abc");
  EXPECT_EQ(bad_index.status, 400);
  EXPECT_EQ(bad_index.body, "Invalid index");
}

TEST_F(NomadApi, NotFoundBodiesArePlainText) {
  auto alloc = get(fake, "/v1/allocation/00000000-0000-4000-8000-000000000000");
  EXPECT_EQ(alloc.status, 404);
  EXPECT_EQ(alloc.body, "alloc not found");
  EXPECT_EQ(header(alloc, "Content-Type"), "text/plain; charset=utf-8");
  auto node = get(fake, "/v1/node/00000000-0000-4000-8000-000000000000");
  EXPECT_EQ(node.status, 404);
  EXPECT_EQ(node.body, "node not found");
  auto job = get(fake, "/v1/job/nope");
  EXPECT_EQ(job.status, 404);
  EXPECT_EQ(job.body, "job not found");
  auto post = fake.handle(make_request("POST", "/v1/allocations"));
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(post.body, "Invalid method");
}

TEST_F(NomadApi, AgentSelfAndNode) {
  auto self = get(fake, "/v1/agent/self");
  ASSERT_EQ(self.status, 200);
  auto body = json::parse(self.body);
  EXPECT_EQ(body["stats"]["client"]["node_id"], kRefNode);
  EXPECT_EQ(body["member"]["Name"], "");
  EXPECT_EQ(header(self, "X-Nomad-Index"), "");
  auto node = get(fake, std::string("/v1/node/") + kRefNode);
  ASSERT_EQ(node.status, 200);
  auto n = nlohmann::ordered_json::parse(node.body);
  EXPECT_EQ(n["SecretID"], "");
  EXPECT_EQ(n["Drain"], false);
  std::string prev;
  for (const auto& [k, v] : n.items()) {
    EXPECT_LT(prev, k) << "node keys must be sorted";
    prev = k;
  }
}

TEST_F(NomadApi, AllocationsListFilterPrefixAndNamespace) {
  std::string mine = place();
  place(kOtherNode);
  auto all = json::parse(get(fake, "/v1/allocations").body);
  EXPECT_EQ(all.size(), 2u);
  auto filtered =
      get(fake, std::string("/v1/allocations?filter=NodeID%20%3D%3D%20%22") + kRefNode + "%22");
  ASSERT_EQ(filtered.status, 200) << filtered.body;
  auto list = json::parse(filtered.body);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["ID"], mine);
  EXPECT_FALSE(list[0].contains("Job"));
  EXPECT_FALSE(list[0].contains("NetworkStatus"));
  auto by_prefix = json::parse(get(fake, "/v1/allocations?prefix=" + mine.substr(0, 6)).body);
  EXPECT_EQ(by_prefix.size(), 1u);
  auto bad = get(fake, "/v1/allocations?filter=NodeID%20%3D%3D");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(json::parse(get(fake, "/v1/allocations?namespace=other").body).size(), 0u);
  EXPECT_EQ(json::parse(get(fake, "/v1/allocations?namespace=*").body).size(), 2u);
  auto page = get(fake, "/v1/allocations?per_page=1");
  EXPECT_EQ(json::parse(page.body).size(), 1u);
  EXPECT_FALSE(header(page, "X-Nomad-Nexttoken").empty());
}

class NomadAcl : public NomadApi {
 protected:
  NomadAcl() {
    JobSpec other;
    other.id = "billing";
    other.namespace_ = "finance";
    EXPECT_TRUE(fake.register_job(other));
    PlaceRequest p;
    p.job_id = "billing";
    p.namespace_ = "finance";
    finance_alloc = fake.place_alloc(p).value_or("");
    default_alloc = place();
    fake.add_token(TokenSpec{"mgmt", true, {}, true, true});
    fake.add_token(TokenSpec{"reader", false, {"default"}, true, true});
    fake.set_acl_enabled(true);
  }
  std::string finance_alloc, default_alloc;
};

TEST_F(NomadAcl, MissingUnknownAndRevokedTokensGet403) {
  auto none = get(fake, "/v1/allocations");
  EXPECT_EQ(none.status, 403);
  EXPECT_EQ(none.body, "Permission denied");
  EXPECT_EQ(get(fake, "/v1/allocations", {{"X-Nomad-Token", "nope"}}).status, 403);
  EXPECT_EQ(get(fake, "/v1/allocations", {{"X-Nomad-Token", "mgmt"}}).status, 200);
  EXPECT_EQ(get(fake, "/v1/allocations", {{"Authorization", "Bearer mgmt"}}).status, 200);
  fake.revoke_token("mgmt");
  EXPECT_EQ(get(fake, "/v1/allocations", {{"X-Nomad-Token", "mgmt"}}).status, 403);
}

TEST_F(NomadAcl, NamespacePolicyShapesEveryEndpoint) {
  std::vector<std::pair<std::string, std::string>> reader = {{"X-Nomad-Token", "reader"}};
  auto hidden = get(fake, "/v1/allocation/" + finance_alloc, reader);
  EXPECT_EQ(hidden.status, 500);
  EXPECT_EQ(hidden.body, "Unknown allocation \"" + finance_alloc + "\"");
  EXPECT_EQ(get(fake, "/v1/allocation/" + default_alloc, reader).status, 200);
  auto node =
      json::parse(get(fake, std::string("/v1/node/") + kRefNode + "/allocations", reader).body);
  ASSERT_EQ(node.size(), 1u);  // the finance alloc is dropped silently
  EXPECT_EQ(node[0]["ID"], default_alloc);
  EXPECT_EQ(get(fake, "/v1/allocations?namespace=finance", reader).status, 403);
  EXPECT_EQ(json::parse(get(fake, "/v1/allocations?namespace=*", reader).body).size(), 1u);
  EXPECT_EQ(get(fake, "/v1/job/billing?namespace=finance", reader).status, 403);
}

}  // namespace
}  // namespace cn::fakes
