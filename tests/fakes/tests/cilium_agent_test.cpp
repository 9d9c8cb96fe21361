// The fake Cilium agent over its real unix socket: the behaviour of the fact sheet
// (/work/shared/reference/cilium-agent-api.md), quirks included, and the scenario controls.
#include <gtest/gtest.h>

#include <future>
#include <nlohmann/json.hpp>

#include "tests/fakes/cilium/fake_cilium_agent.h"
#include "tests/fakes/http/raw_http_client.h"
#include "tests/fakes/tests/http_test_util.h"
#include "tests/support/alloc_ids.h"
#include "tests/support/eventually.h"
#include "tests/support/manual_clock.h"

namespace cn::fakes {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::eventually;
using testing::TempDir;

using cn::testing::kAllocId;
constexpr const char* kAlloc2 = "0d9e2c41-7b5a-4f3e-8c1d-2a6b9e0f4c55";

std::string attach(const std::string& alloc) {
  return "cni-attachment-id:" + alloc + ":eth0";
}

json cni_put_body(const std::string& alloc, const std::string& ip) {
  // What cilium-cni sends (cni.md section 5): no labels, sync build.
  return json{{"container-id", alloc},
              {"container-interface-name", "eth0"},
              {"interface-name", "lxc" + alloc.substr(0, 8)},
              {"interface-index", 27},
              {"mac", "f2:11:6b:3a:09:c4"},
              {"host-mac", "4e:8a:51:0c:2f:9d"},
              {"addressing", {{"ipv4", ip}, {"ipv4-pool-name", "default"}}},
              {"datapath-configuration", json::object()},
              {"state", "waiting-for-identity"},
              {"sync-build-endpoint", true}};
}

class CiliumAgentTest : public ::testing::Test {
 protected:
  void start(FakeCiliumAgentConfig cfg = {}) {
    cfg.socket_path = dir_.file("cilium.sock");
    if (!cfg.clock) cfg.clock = &clock_;
    agent_ = std::make_unique<FakeCiliumAgent>(cfg);
    agent_->start();
  }
  RawHttpResponse call(const std::string& method, const std::string& path,
                       const std::string& body = "",
                       std::vector<std::pair<std::string, std::string>> headers = {}) {
    auto r = http_request(HttpTarget::unix_socket(agent_->socket_path()), method, path, body,
                          headers, 10s);
    EXPECT_TRUE(r) << method << " " << path << ": " << (r ? "" : r.error().message);
    return r ? *r : RawHttpResponse{};
  }
  json get_json(const std::string& path) {
    const auto r = call("GET", path);
    EXPECT_EQ(r.status, 200) << path << " " << r.body;
    return r.status == 200 ? json::parse(r.body) : json();
  }
  json put_alloc(const std::string& alloc, const std::string& ip) {
    const auto r = call("PUT", "/v1/endpoint/cilium-local:0", cni_put_body(alloc, ip).dump());
    EXPECT_EQ(r.status, 201) << r.body;
    return r.body.empty() ? json() : json::parse(r.body);
  }
  RawHttpResponse patch_labels(const std::string& id, const std::vector<std::string>& user) {
    return call("PATCH", "/v1/endpoint/" + id + "/labels", json{{"user", user}}.dump());
  }
  json ep(const std::string& alloc) { return get_json("/v1/endpoint/" + attach(alloc)); }
  bool settle() { return agent_->wait_settled(5s); }

  TempDir dir_;
  ManualClock clock_;
  std::unique_ptr<FakeCiliumAgent> agent_;
};

TEST_F(CiliumAgentTest, ConfigAndHealthzAnswerAnyHost) {
  start();
  const auto cfg = call("GET", "/v1/config", "", {{"Host", "/var/run/cilium/cilium.sock"}});
  ASSERT_EQ(cfg.status, 200);
  const json c = json::parse(cfg.body);
  EXPECT_EQ(c["status"]["addressing"]["ipv4"]["enabled"], true);
  EXPECT_EQ(c["status"]["addressing"]["ipv4"]["ip"], "10.200.0.1");
  EXPECT_EQ(c["status"]["addressing"]["ipv4"]["alloc-range"], "10.200.0.0/16");
  EXPECT_EQ(c["status"]["datapathMode"], "veth");
  EXPECT_TRUE(cfg.body.ends_with("}\n")) << "Go's json.Encoder ends bodies with a newline";
  EXPECT_EQ(get_json("/v1/healthz")["cilium"]["state"], "Ok");
  agent_->set_daemon_health("Failure", "kvstore down");
  const json brief = json::parse(call("GET", "/v1/healthz", "", {{"brief", "true"}}).body);
  EXPECT_EQ(brief["cilium"]["state"], "Failure");
  EXPECT_FALSE(brief.contains("kubernetes"));
}

// daemonConfigurationMap is option.Config by Go field name (cilium/cilium daemon/cmd/config.go,
// getConfigHandler), the options at upstream defaults (pkg/defaults/defaults.go) unless set.
TEST_F(CiliumAgentTest, ConfigReportsThePolicyOptions) {
  start();
  json m = get_json("/v1/config")["status"]["daemonConfigurationMap"];
  EXPECT_EQ(m["EnableNodeSelectorLabels"], false);
  EXPECT_EQ(m["EnableL7Proxy"], true);
  EXPECT_EQ(m["EnableICMPRules"], true);
  EXPECT_EQ(m["EnableHostFirewall"], false);
  agent_->stop();
  FakeCiliumAgentConfig cfg;
  cfg.options.enable_node_selector_labels = true;
  cfg.options.enable_l7_proxy = false;
  start(cfg);
  m = get_json("/v1/config")["status"]["daemonConfigurationMap"];
  EXPECT_EQ(m["EnableNodeSelectorLabels"], true);
  EXPECT_EQ(m["EnableL7Proxy"], false);
  agent_->stop();
  cfg.report_options = false;  // an agent the labeler cannot ask
  start(cfg);
  EXPECT_FALSE(get_json("/v1/config")["status"].contains("daemonConfigurationMap"));
}

TEST_F(CiliumAgentTest, HostAndHealthEndpointsArePrePopulated) {
  start();
  const json list = get_json("/v1/endpoint");
  ASSERT_EQ(list.size(), 2u);
  std::map<int, json> by_identity;
  for (const auto& e : list) by_identity[e["status"]["identity"]["id"].get<int>()] = e;
  ASSERT_TRUE(by_identity.contains(1) && by_identity.contains(4));
  EXPECT_EQ(by_identity[1]["status"]["identity"]["labels"], json::array({"reserved:host"}));
  EXPECT_FALSE(by_identity[1]["status"]["external-identifiers"].contains("cni-attachment-id"));
  EXPECT_EQ(by_identity[4]["status"]["identity"]["labels"], json::array({"reserved:health"}));
  EXPECT_FALSE(by_identity[4]["status"]["external-identifiers"].contains("cni-attachment-id"));
}

TEST_F(CiliumAgentTest, CniPutCreatesReadyInitEndpointWithIdentity5) {
  start();
  const json created = put_alloc(kAllocId, "10.200.3.17");
  EXPECT_EQ(created["status"]["state"], "ready") << "sync-build-endpoint returns after the build";
  EXPECT_EQ(created["status"]["identity"]["id"], 5);
  EXPECT_EQ(created["status"]["identity"]["labels"], json::array({"reserved:init"}));
  const json& ids = created["status"]["external-identifiers"];
  EXPECT_EQ(ids["cni-attachment-id"], std::string(kAllocId) + ":eth0");
  EXPECT_EQ(ids["container-id"], kAllocId);
  EXPECT_EQ(ids["pod-name"], "/");
  EXPECT_FALSE(ids.contains("k8s-pod-name")) << "empty strings are omitted";
  EXPECT_EQ(created["spec"]["label-configuration"], json::object());
  EXPECT_EQ(created["status"]["networking"]["addressing"][0]["ipv4"], "10.200.3.17");
  EXPECT_EQ(created["status"]["networking"]["interface-name"], "lxc4b1f6c2e");
  EXPECT_GE(created["id"].get<int>(), 1);
  EXPECT_LE(created["id"].get<int>(), 4095);
  EXPECT_EQ(ep(kAllocId)["id"], created["id"]);
  const auto labels = call("GET", "/v1/endpoint/" + attach(kAllocId) + "/labels");
  EXPECT_EQ(
      json::parse(labels.body),
      json::parse(R"({"spec":{},"status":{"realized":{},"security-relevant":["reserved:init"]}})"));
}

TEST_F(CiliumAgentTest, PutBodyDependsOnVersion) {
  FakeCiliumAgentConfig cfg;
  cfg.version = CiliumVersion::v1_15;
  start(cfg);
  const auto r =
      call("PUT", "/v1/endpoint/cilium-local:0", cni_put_body(kAllocId, "10.200.3.17").dump());
  EXPECT_EQ(r.status, 201);
  EXPECT_TRUE(r.body.empty()) << "1.15 answers 201 without a body";
  EXPECT_EQ(ep(kAllocId)["status"]["identity"]["id"], 5);
}

TEST_F(CiliumAgentTest, DuplicatePutsAre400WithJsonStrings) {
  start();
  put_alloc(kAllocId, "10.200.3.17");
  auto r = call("PUT", "/v1/endpoint/cilium-local:0", cni_put_body(kAllocId, "10.200.3.18").dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(json::parse(r.body),
            "endpoint for CNI attachment ID " + std::string(kAllocId) + ":eth0 already exists");
  r = call("PUT", "/v1/endpoint/cilium-local:0", cni_put_body(kAlloc2, "10.200.3.17").dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(json::parse(r.body), "IP 10.200.3.17 is already in use");
}

TEST_F(CiliumAgentTest, PutValidationFollowsGoOpenapi) {
  start();
  json body = cni_put_body(kAllocId, "10.200.3.17");
  body.erase("state");
  auto r = call("PUT", "/v1/endpoint/cilium-local:0", body.dump());
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(json::parse(r.body),
            json::parse(R"({"code":602,"message":"state in body is required"})"));
  body["state"] = "sleeping";
  r = call("PUT", "/v1/endpoint/cilium-local:0", body.dump());
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(json::parse(r.body)["code"], 606);
  body["state"] = "ready";
  body["container-id"] = 12;
  r = call("PUT", "/v1/endpoint/cilium-local:0", body.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(json::parse(r.body)["code"], 400);
  r = call("PUT", "/v1/endpoint/cilium-local:0", "");
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(json::parse(r.body)["message"], "endpoint in body is required");
  body = cni_put_body(kAllocId, "10.200.3.17");
  body["labels"] = {"reserved:host"};
  r = call("PUT", "/v1/endpoint/cilium-local:0", body.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(json::parse(r.body), "not allowed to add reserved labels: reserved:host");
  body["unknown-future-field"] = true;  // ignored, like Go's decoder
  body.erase("labels");
  EXPECT_EQ(call("PUT", "/v1/endpoint/cilium-local:0", body.dump()).status, 201);
}

TEST_F(CiliumAgentTest, EndpointIdForms) {
  start();
  const int id = put_alloc(kAllocId, "10.200.3.17")["id"];
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%x", id);
  for (const std::string& form :
       {std::to_string(id), "cilium-local:" + std::to_string(id), std::string(hex),
        attach(kAllocId), "cni-attachment-id%3A" + std::string(kAllocId) + "%3Aeth0",
        "container-id:" + std::string(kAllocId), std::string("ipv4:10.200.3.17")}) {
    const auto r = call("GET", "/v1/endpoint/" + form);
    EXPECT_EQ(r.status, 200) << form;
    if (r.status == 200) {
      EXPECT_EQ(json::parse(r.body)["id"], id) << form;
    }
  }
  auto r = call("GET", "/v1/endpoint/foo:1");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body, "\"unknown endpoint ID prefix \\\"foo\\\"\"\n");
  EXPECT_EQ(call("GET", "/v1/endpoint/cilium-global:c:n:1").status, 400);
  EXPECT_EQ(call("GET", "/v1/endpoint/notanumber").status, 400);
  r = call("GET", "/v1/endpoint/" + attach(kAlloc2));
  EXPECT_EQ(r.status, 404);
  EXPECT_TRUE(r.body.empty()) << "404 has an empty body";
}

TEST_F(CiliumAgentTest, ContainerIdIsNotAddressableIn120) {
  FakeCiliumAgentConfig cfg;
  cfg.version = CiliumVersion::v1_20;
  start(cfg);
  put_alloc(kAllocId, "10.200.3.17");
  // An unknown prefix there (pkg/endpoint/id/id.go), not a lookup that misses.
  EXPECT_EQ(call("GET", "/v1/endpoint/container-id:" + std::string(kAllocId)).status, 400);
  EXPECT_EQ(call("GET", "/v1/endpoint/" + attach(kAllocId)).status, 200);
}

TEST_F(CiliumAgentTest, ListTakesLabelFilterInGetBody) {
  start();
  put_alloc(kAllocId, "10.200.3.17");
  auto r = call("GET", "/v1/endpoint", R"(["reserved:host"])");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body).size(), 1u);
  r = call("GET", "/v1/endpoint", R"(["reserved:init"])");
  EXPECT_EQ(json::parse(r.body).size(), 1u);
  r = call("GET", "/v1/endpoint", R"(["nomad:job=nope"])");
  EXPECT_EQ(r.status, 404);
  EXPECT_TRUE(r.body.empty());
  EXPECT_EQ(json::parse(call("GET", "/v1/endpoint", "[]").body).size(), 3u);
  EXPECT_EQ(call("GET", "/v1/endpoint", "{bad").status, 400);
}

TEST_F(CiliumAgentTest, LabelsPatchTwiceWalksInitMixedFinalWithGracePeriod) {
  FakeCiliumAgentConfig cfg;
  cfg.identity_delay = 100ms;
  cfg.regeneration_step = 10ms;
  cfg.identity_grace_period = 5s;
  start(cfg);
  put_alloc(kAllocId, "10.200.3.17");
  const std::vector<std::string> want = {"nomad:group=app", "nomad:job=web",
                                         "nomad:namespace=default"};

  auto r = patch_labels(attach(kAllocId), want);
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.body.empty());
  // Asynchronous: the PATCH returned before any identity exists.
  json e = ep(kAllocId);
  EXPECT_EQ(e["status"]["state"], "waiting-for-identity");
  EXPECT_EQ(e["status"]["identity"]["id"], 5);
  clock_.advance(100ms);
  ASSERT_TRUE(settle());
  EXPECT_EQ(ep(kAllocId)["status"]["state"], "waiting-to-regenerate");
  clock_.advance(10ms);
  ASSERT_TRUE(settle());
  EXPECT_EQ(ep(kAllocId)["status"]["state"], "regenerating");
  clock_.advance(10ms);
  ASSERT_TRUE(settle());
  e = ep(kAllocId);
  EXPECT_EQ(e["status"]["state"], "ready");
  const int mixed = e["status"]["identity"]["id"];
  EXPECT_GE(mixed, 256);
  EXPECT_EQ(e["status"]["identity"]["labels"],
            json({"nomad:group=app", "nomad:job=web", "nomad:namespace=default", "reserved:init"}));
  EXPECT_EQ(e["status"]["labels"]["security-relevant"], json::array({"reserved:init"}));
  EXPECT_EQ(e["status"]["labels"]["realized"]["user"], json(want));

  // Same set again: an empty diff strips init; old identity is not init -> grace period.
  EXPECT_EQ(patch_labels(attach(kAllocId), want).status, 200);
  clock_.advance(100ms);
  ASSERT_TRUE(settle());
  clock_.advance(4800ms);
  ASSERT_TRUE(settle());
  EXPECT_EQ(ep(kAllocId)["status"]["identity"]["id"], mixed) << "still inside the 5 s grace period";
  clock_.advance(200ms);
  ASSERT_TRUE(settle());
  clock_.advance(20ms);
  ASSERT_TRUE(settle());
  clock_.advance(20ms);
  ASSERT_TRUE(settle());
  e = ep(kAllocId);
  EXPECT_EQ(e["status"]["state"], "ready");
  EXPECT_EQ(e["status"]["identity"]["labels"], json(want));
  EXPECT_NE(e["status"]["identity"]["id"], mixed);
  EXPECT_GE(e["status"]["identity"]["id"].get<int>(), 256);
  EXPECT_EQ(agent_->count("PATCH", "/endpoint/{id}/labels"), 2);
}

TEST_F(CiliumAgentTest, NoopPatchOnFreshInitEndpointLeavesNoLabels) {
  start();
  put_alloc(kAllocId, "10.200.3.17");
  EXPECT_EQ(patch_labels(attach(kAllocId), {}).status, 200);
  ASSERT_TRUE(settle());
  const json e = ep(kAllocId);
  EXPECT_FALSE(e["status"]["identity"].contains("labels"));
  EXPECT_GE(e["status"]["identity"]["id"].get<int>(), 256);
}

TEST_F(CiliumAgentTest, ValueChangeOfAnExistingKeyIsNotADiff) {
  start();
  put_alloc(kAllocId, "10.200.3.17");
  patch_labels(attach(kAllocId), {"nomad:job=a"});
  ASSERT_TRUE(settle());
  patch_labels(attach(kAllocId), {"nomad:job=a"});  // strips init
  ASSERT_TRUE(settle());
  ASSERT_EQ(ep(kAllocId)["status"]["identity"]["labels"], json::array({"nomad:job=a"}));
  // Same key, new value: SplitUserLabelChanges compares keys, so nothing changes.
  EXPECT_EQ(patch_labels(attach(kAllocId), {"nomad:job=b"}).status, 200);
  ASSERT_TRUE(settle());
  EXPECT_EQ(ep(kAllocId)["status"]["identity"]["labels"], json::array({"nomad:job=a"}));
}

TEST_F(CiliumAgentTest, LabelPatchErrors) {
  start();
  put_alloc(kAllocId, "10.200.3.17");
  auto r = patch_labels(attach(kAllocId), {"reserved:host"});
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(json::parse(r.body), "Not allowed to add reserved labels: reserved:host");
  const json host = json::parse(call("GET", "/v1/endpoint", R"(["reserved:host"])").body)[0];
  r = patch_labels(std::to_string(host["id"].get<int>()), {"nomad:job=x"});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(json::parse(r.body), "endpoint may not be associated reserved labels");
  r = patch_labels(attach(kAlloc2), {"nomad:job=x"});
  EXPECT_EQ(r.status, 404);
  EXPECT_TRUE(r.body.empty());
  r = call("PATCH", "/v1/endpoint/" + attach(kAllocId) + "/labels", "");
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(json::parse(r.body)["message"], "configuration in body is required");
  r = call("PATCH", "/v1/endpoint/" + attach(kAllocId) + "/labels", R"({"user":"nomad:job=x"})");
  EXPECT_EQ(r.status, 400);
}

TEST_F(CiliumAgentTest, AllowListFilterDropsUnlistedLabelsSilently) {
  FakeCiliumAgentConfig cfg;
  cfg.label_patterns = {"nomad:job"};
  start(cfg);
  put_alloc(kAllocId, "10.200.3.17");
  EXPECT_EQ(patch_labels(attach(kAllocId), {"nomad:job=web", "nomad:group=app"}).status, 200);
  ASSERT_TRUE(settle());
  const json e = ep(kAllocId);
  EXPECT_EQ(e["status"]["labels"]["realized"]["user"], json::array({"nomad:job=web"}));
  EXPECT_EQ(e["status"]["identity"]["labels"], json({"nomad:job=web", "reserved:init"}));
}

TEST_F(CiliumAgentTest, DeprecatedPatchReplacesOrchestrationLabelsInOneStep) {
  FakeCiliumAgentConfig cfg;
  cfg.identity_grace_period = 5s;
  start(cfg);
  put_alloc(kAllocId, "10.200.3.17");
  json body = {{"state", "waiting-for-identity"}, {"labels", {"nomad:job=web", "nomad:group=app"}}};
  auto r = call("PATCH", "/v1/endpoint/" + attach(kAllocId), body.dump());
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.body.empty());
  ASSERT_TRUE(settle());  // leaving init: no grace period, so no clock advance needed
  json e = ep(kAllocId);
  EXPECT_EQ(e["status"]["identity"]["labels"], json({"nomad:group=app", "nomad:job=web"}));
  EXPECT_EQ(e["status"]["labels"]["security-relevant"], json({"nomad:group=app", "nomad:job=web"}));
  EXPECT_EQ(e["spec"]["label-configuration"], json::object());
  EXPECT_EQ(e["status"]["state"], "ready");

  // `labels` absent: an empty set replaces the orchestration labels.
  r = call("PATCH", "/v1/endpoint/" + attach(kAllocId), json{{"state", "ready"}}.dump());
  EXPECT_EQ(r.status, 200);
  ASSERT_TRUE(settle());
  clock_.advance(5s);  // this time the old identity was not init: grace period applies
  ASSERT_TRUE(settle());
  e = ep(kAllocId);
  EXPECT_FALSE(e["status"]["labels"].contains("security-relevant"));
  EXPECT_FALSE(e["status"]["identity"].contains("labels"));

  r = call("PATCH", "/v1/endpoint/" + attach(kAllocId), json{{"labels", {"nomad:job=x"}}}.dump());
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(json::parse(r.body),
            json::parse(R"({"code":602,"message":"state in body is required"})"));
}

TEST_F(CiliumAgentTest, DeleteForms) {
  start();
  const int id = put_alloc(kAllocId, "10.200.3.17")["id"];
  put_alloc(kAlloc2, "10.200.3.18");
  EXPECT_EQ(call("DELETE", "/v1/endpoint/" + std::to_string(id)).status, 200);
  EXPECT_EQ(call("GET", "/v1/endpoint/" + std::to_string(id)).status, 404);
  EXPECT_EQ(call("DELETE", "/v1/endpoint/" + std::to_string(id)).status, 404);
  auto r = call("DELETE", "/v1/endpoint", json{{"container-id", kAlloc2}}.dump());
  EXPECT_EQ(r.status, 200);
  r = call("DELETE", "/v1/endpoint", json{{"container-id", kAlloc2}}.dump());
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(json::parse(r.body), "endpoints not found");
  r = call("DELETE", "/v1/endpoint", json{{"container-id", ""}}.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(json::parse(r.body), "invalid container id");
  EXPECT_EQ(get_json("/v1/endpoint").size(), 2u);
}

TEST_F(CiliumAgentTest, EndpointHealthzAndForcedFailure) {
  start();
  put_alloc(kAllocId, "10.200.3.17");
  EXPECT_EQ(get_json("/v1/endpoint/" + attach(kAllocId) + "/healthz")["overallHealth"], "OK");
  ASSERT_TRUE(agent_->set_endpoint_health(attach(kAllocId), "Failure"));
  EXPECT_EQ(get_json("/v1/endpoint/" + attach(kAllocId) + "/healthz")["overallHealth"], "Failure");
  EXPECT_EQ(call("GET", "/v1/endpoint/" + attach(kAlloc2) + "/healthz").status, 404);
}

TEST_F(CiliumAgentTest, RateLimitRefusesWithCiliumMessageAndWaitsOnClock) {
  FakeCiliumAgentConfig cfg;
  cfg.rate_limits = true;
  cfg.rate_limit_overrides["endpoint-patch"] = {0.5, 1, 3s};
  start(cfg);
  put_alloc(kAllocId, "10.200.3.17");
  EXPECT_EQ(patch_labels(attach(kAllocId), {"nomad:job=a"}).status, 200);
  // Next one must wait 2 s (within 3 s): it blocks until the agent clock moves.
  auto waiting = std::async(std::launch::async,
                            [&] { return patch_labels(attach(kAllocId), {"nomad:job=a"}); });
  ASSERT_TRUE(clock_.wait_for_sleepers(1, 5s));
  auto refused = patch_labels(attach(kAllocId), {"nomad:x=1"});
  EXPECT_EQ(refused.status, 429);
  EXPECT_EQ(json::parse(refused.body),
            "request would have to wait 4s to be served (maximum wait duration: 3s)");
  clock_.advance(2s);
  EXPECT_EQ(waiting.get().status, 200);
  ASSERT_TRUE(settle());
  EXPECT_FALSE(ep(kAllocId)["status"]["labels"]["realized"].contains("nomad:x=1"));
  // Cilium's defaults for the other groups are in force too. endpoint-get (4/s, burst 4, skip
  // 4, estimated 200 ms): GETs served in no time drive its factor to the maximum 100, i.e.
  // 400/s; once the skipped ones and the bucket's 4 tokens are used, a GET waits one token,
  // 2.5 ms of agent time.
  for (int served_at_once = 0;; ++served_at_once) {
    ASSERT_LE(served_at_once, 8) << "endpoint-get never made a request wait";
    auto next = std::async(std::launch::async,
                           [&] { return call("GET", "/v1/endpoint/" + attach(kAllocId)); });
    ASSERT_TRUE(cn::testing::eventually(
        [&] { return next.wait_for(0s) == std::future_status::ready || clock_.sleepers() > 0; }));
    if (next.wait_for(0s) == std::future_status::ready) {
      EXPECT_EQ(next.get().status, 200);
      continue;
    }
    clock_.advance(2499us);
    EXPECT_EQ(next.wait_for(20ms), std::future_status::timeout);
    clock_.advance(1us);
    EXPECT_EQ(next.get().status, 200);
    break;
  }
}

TEST_F(CiliumAgentTest, DefaultRateLimitsMatchTheFactSheet) {
  const auto d17 = cilium_default_rate_limits(CiliumVersion::v1_17);
  EXPECT_DOUBLE_EQ(d17.at("endpoint-patch").rate_per_sec, 0.5);
  EXPECT_EQ(d17.at("endpoint-patch").burst, 4);
  EXPECT_EQ(d17.at("endpoint-patch").max_wait, 15s);
  // PR #25805 (June 2023) raised create's wait to 60 s before any release the fake emulates.
  EXPECT_EQ(d17.at("endpoint-create").max_wait, 60s);
  EXPECT_EQ(cilium_default_rate_limits(CiliumVersion::v1_15).at("endpoint-create").max_wait, 60s);
  EXPECT_EQ(d17.at("endpoint-create").min_parallel_requests, 2);
  EXPECT_TRUE(d17.at("endpoint-patch").auto_adjust);
  EXPECT_EQ(d17.at("endpoint-patch").estimated_processing, 1s);
  EXPECT_EQ(d17.at("endpoint-patch").skip_initial, 4);
  EXPECT_EQ(d17.at("endpoint-delete").min_parallel_requests, 4);
  EXPECT_DOUBLE_EQ(d17.at("endpoint-get").rate_per_sec, 4);
  EXPECT_EQ(d17.at("endpoint-list").max_wait, 0s);
}

TEST_F(CiliumAgentTest, FaultInjectionStatusDropStallNotReadyAndDisabled) {
  start();
  put_alloc(kAllocId, "10.200.3.17");
  agent_->inject_fault(FaultRule::fail("PATCH", "/endpoint/{id}/labels", 500, 2));
  EXPECT_EQ(patch_labels(attach(kAllocId), {"nomad:a=1"}).status, 500);
  EXPECT_EQ(call("GET", "/v1/endpoint/" + attach(kAllocId)).status, 200)
      << "other routes unaffected";
  EXPECT_EQ(patch_labels(attach(kAllocId), {"nomad:a=1"}).status, 500);
  EXPECT_EQ(patch_labels(attach(kAllocId), {"nomad:a=1"}).status, 200);

  agent_->inject_fault(FaultRule::drop("", "/endpoint/{id}"));
  EXPECT_FALSE(http_request(HttpTarget::unix_socket(agent_->socket_path()), "GET",
                            "/v1/endpoint/" + attach(kAllocId)));

  agent_->set_api_ready(false);
  auto r = call("PUT", "/v1/endpoint/cilium-local:0", cni_put_body(kAlloc2, "10.200.3.18").dump());
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(json::parse(r.body), "api not ready");
  EXPECT_EQ(call("GET", "/v1/endpoint/" + attach(kAllocId)).status, 200);
  agent_->set_api_ready(true);

  agent_->disable_api("DELETE", "/endpoint");
  r = call("DELETE", "/v1/endpoint", json{{"container-id", kAllocId}}.dump());
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(r.header("Content-Type"), "text/plain");
  EXPECT_EQ(r.body,
            "This API is administratively disabled. Contact your administrator for more details.");
  agent_->clear_faults();

  agent_->set_stall(true);
  auto stalled = http_request(HttpTarget::unix_socket(agent_->socket_path()), "GET", "/v1/healthz",
                              "", {}, 300ms);
  ASSERT_FALSE(stalled);
  EXPECT_NE(stalled.error().message.find("timed out"), std::string::npos);
  EXPECT_EQ(call("GET", "/_fake/state").status, 200) << "control API is never stalled";
  agent_->set_stall(false);
  EXPECT_EQ(call("GET", "/v1/healthz").status, 200);
}

TEST_F(CiliumAgentTest, LatencyIsAddedOnTheAgentClock) {
  start();
  agent_->set_latency(1500ms, "GET", "/healthz");
  auto slow = std::async(std::launch::async, [&] { return call("GET", "/v1/healthz"); });
  ASSERT_TRUE(clock_.wait_for_sleepers(1, 5s));
  EXPECT_EQ(slow.wait_for(20ms), std::future_status::timeout);
  EXPECT_EQ(call("GET", "/v1/config").status, 200) << "other routes are not delayed";
  clock_.advance(1500ms);
  EXPECT_EQ(slow.get().status, 200);
  const auto log = agent_->requests();
  const auto it = std::find_if(log.begin(), log.end(),
                               [](const AgentRequest& r) { return r.route == "/healthz"; });
  ASSERT_NE(it, log.end());
  EXPECT_EQ(it->answered - it->received, 1500ms);
}

TEST_F(CiliumAgentTest, RequestLogCountsByMethodAndRoute) {
  start();
  put_alloc(kAllocId, "10.200.3.17");
  for (int i = 0; i < 3; ++i) patch_labels(attach(kAllocId), {"nomad:a=1"});
  call("GET", "/v1/nope");
  EXPECT_EQ(agent_->count("PATCH", "/endpoint/{id}/labels"), 3);
  EXPECT_EQ(agent_->count("PUT", "/endpoint/{id}"), 1);
  EXPECT_EQ(agent_->count("", "?"), 1);
  const auto log = agent_->requests();
  ASSERT_EQ(log.size(), 5u);
  EXPECT_EQ(log[1].path, "/v1/endpoint/" + attach(kAllocId) + "/labels");
  EXPECT_EQ(log[1].body, R"({"user":["nomad:a=1"]})");
  EXPECT_LE(log[1].real_received, log[1].real_answered);
  EXPECT_LE(log[1].real_answered, log[2].real_received);
  agent_->clear_requests();
  EXPECT_EQ(agent_->count("", ""), 0);
}

TEST_F(CiliumAgentTest, RouterErrorsAreGoOpenapiObjects) {
  start();
  auto r = call("GET", "/v1/nope");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(json::parse(r.body)["code"], 404);
  r = call("POST", "/v1/endpoint");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.header("Allow"), "GET,DELETE");
}

TEST_F(CiliumAgentTest, RestartRenumbersButKeepsEndpointsAndIdentities) {
  start();
  const int old_id = put_alloc(kAllocId, "10.200.3.17")["id"];
  patch_labels(attach(kAllocId), {"nomad:job=a"});
  ASSERT_TRUE(settle());
  const json before = ep(kAllocId)["status"]["identity"];
  agent_->restart(RestartOptions::renumbered());
  ASSERT_TRUE(settle());
  const json after = ep(kAllocId);
  EXPECT_NE(after["id"], old_id);
  EXPECT_EQ(after["status"]["identity"], before);
  EXPECT_EQ(after["status"]["state"], "ready");
  const auto old = call("GET", "/v1/endpoint/" + std::to_string(old_id));
  EXPECT_TRUE(old.status == 404 ||
              json::parse(old.body)["status"]["identity"]["id"].get<int>() < 256)
      << "the old number is gone, or reused by a reserved endpoint";
}

TEST_F(CiliumAgentTest, RestartCanComeBackNotReady) {
  start();
  RestartOptions opts = RestartOptions::same_ids();
  opts.api_not_ready_for = 2s;
  agent_->restart(opts);
  auto r = call("PUT", "/v1/endpoint/cilium-local:0", cni_put_body(kAllocId, "10.200.3.17").dump());
  EXPECT_EQ(r.status, 503);
  clock_.advance(2s);
  ASSERT_TRUE(settle());
  EXPECT_EQ(call("PUT", "/v1/endpoint/cilium-local:0", cni_put_body(kAllocId, "10.200.3.17").dump())
                .status,
            201);
}

TEST_F(CiliumAgentTest, ControlApiOverHttp) {
  FakeCiliumAgentConfig cfg;
  cfg.clock = &system_clock();
  start(cfg);
  auto r = call("POST", "/_fake/endpoints", cni_put_body(kAllocId, "10.200.3.17").dump());
  ASSERT_EQ(r.status, 201) << r.body;
  const int old_id = json::parse(r.body)["id"];
  r = call("POST", "/_fake/faults",
           R"({"method":"GET","route":"/endpoint/{id}","count":1,"status":429,"body":"\"slow\""})");
  EXPECT_EQ(r.status, 200);
  r = call("GET", "/v1/endpoint/" + attach(kAllocId));
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(json::parse(r.body), "slow");
  EXPECT_EQ(
      json::parse(
          call("GET", "/_fake/requests/count?method=GET&route=/endpoint/%7Bid%7D").body)["count"],
      1);
  EXPECT_EQ(json::parse(call("GET", "/_fake/requests?method=GET").body).size(), 1u);
  EXPECT_EQ(
      call("POST", "/_fake/settings", R"({"identity_delay_ms":0,"grace_period_ms":0})").status,
      200);
  EXPECT_EQ(call("POST", "/_fake/endpoint-health",
                 json{{"id", attach(kAllocId)}, {"health", "Failure"}}.dump())
                .status,
            200);
  EXPECT_EQ(get_json("/v1/endpoint/" + attach(kAllocId) + "/healthz")["overallHealth"], "Failure");

  r = call("POST", "/_fake/restart", R"({"renumber":true})");
  EXPECT_EQ(r.status, 202);
  ASSERT_TRUE(eventually([&] {
    auto g = http_request(HttpTarget::unix_socket(agent_->socket_path()), "GET",
                          "/v1/endpoint/" + attach(kAllocId), "", {}, 1s);
    return g && g->status == 200 && json::parse(g->body)["id"] != old_id;
  }));
  const json state = get_json("/_fake/state");
  EXPECT_EQ(state["endpoints"].size(), 3u);
  EXPECT_EQ(call("POST", "/_fake/reset").status, 200);
  EXPECT_EQ(get_json("/v1/endpoint").size(), 2u);
  EXPECT_EQ(call("GET", "/_fake/bogus").status, 404);
  EXPECT_EQ(call("POST", "/_fake/faults", R"({"action":"explode"})").status, 400);
}

}  // namespace
}  // namespace cn::fakes
