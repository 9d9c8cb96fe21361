// Every body the fake agent emits in a realistic session is validated against the Cilium spec
// (reference openapi.yaml, committed as tests/fakes/cilium/openapi.json) and against Go's
// omitempty rule; negative tests prove the validator catches renamed fields, wrong types, bad
// enums and dropped quirks. Deliberate departures from the spec follow the fact sheet and are
// listed in kSheetDeviations.
#include <gtest/gtest.h>

#include <filesystem>
#include <future>
#include <nlohmann/json.hpp>

#include "common/util/clock.h"
#include "tests/fakes/cilium/fake_cilium_agent.h"
#include "tests/fakes/cilium/openapi_validator.h"
#include "tests/fakes/http/raw_http_client.h"
#include "tests/fakes/tests/http_test_util.h"
#include "tests/support/alloc_ids.h"
#include "tests/support/child_process.h"
#include "tests/support/manual_clock.h"

#ifndef CN_FAKES_OPENAPI_JSON
#define CN_FAKES_OPENAPI_JSON ""
#endif

namespace cn::fakes::cilium {
namespace {

using namespace std::chrono_literals;
using cn::fakes::testing::eventually;
using cn::fakes::testing::TempDir;
using cn::testing::current_environment;
using cn::testing::run_process;
using nlohmann::json;

std::string spec_path() {
  if (const char* src = std::getenv("CN_SOURCE_DIR")) {
    const std::string p = std::string(src) + "/tests/fakes/cilium/openapi.json";
    if (std::filesystem::exists(p)) return p;
  }
  return CN_FAKES_OPENAPI_JSON;
}

const OpenApiSpec& spec() {
  static const OpenApiSpec s = [] {
    auto loaded = OpenApiSpec::load(spec_path());
    if (!loaded) throw std::runtime_error(loaded.error().message);
    return *loaded;
  }();
  return s;
}

enum class Shape { json_string, openapi_error };

struct Deviation {
  const char* method;  // "" = any
  const char* route;   // "" = any
  int status;
  Shape shape;
  const char* why;
};

// Where the fact sheet (cilium-agent-api.md) says the agent answers differently from what the
// f3e6eb5 spec declares. Every entry names the section that justifies it.
const Deviation kSheetDeviations[] = {
    {"", "", 422, Shape::openapi_error, "s6: go-openapi validation errors {code,message}"},
    {"", "", 429, Shape::json_string, "s6: limiter error as a JSON string"},
    {"", "", 503, Shape::json_string, "s2: newest handlers answer \"api not ready\""},
    {"DELETE", "/endpoint", 400, Shape::json_string, "s2: \"invalid container id\""},
    {"DELETE", "/endpoint", 404, Shape::json_string, "s2: \"endpoints not found\""},
    {"PATCH", "/endpoint/{id}/labels", 400, Shape::json_string,
     "s4.2: APICanModify / lookup errors"},
    {"PATCH", "/endpoint/{id}/labels", 404, Shape::json_string,
     "s4.2: \"label X not found\" (empty when no endpoint)"},
    {"GET", "/endpoint/{id}/labels", 400, Shape::json_string, "s3: bad ID -> 400 JSON string"},
    {"GET", "/endpoint/{id}/healthz", 400, Shape::json_string, "s3: bad ID -> 400 JSON string"},
    {"DELETE", "/endpoint/{id}", 400, Shape::json_string, "s3: bad ID -> 400 JSON string"},
    {"PATCH", "/endpoint/{id}", 400, Shape::json_string, "s3/s4.3: lookup and APICanModify errors"},
    {"PATCH", "/endpoint/{id}/config", 400, Shape::json_string,
     "EndpointUpdate's api.Error (daemon/cmd/endpoint.go): option validation as a JSON string"},
};

// Statuses the spec declares with a body that some emulated versions send empty.
struct EmptyAllowed {
  const char* method;
  const char* route;
  int status;
  const char* why;
};
const EmptyAllowed kEmptyAllowed[] = {
    {"PUT", "/endpoint/{id}", 201, "s2: agents before the 1.16-era spec answer 201 without a body"},
};

bool empty_allowed(const std::string& method, const std::string& route, int status) {
  for (const auto& e : kEmptyAllowed) {
    if (method == e.method && route == e.route && status == e.status) return true;
  }
  return false;
}

const Deviation* deviation_for(const std::string& method, const std::string& route, int status) {
  for (const auto& d : kSheetDeviations) {
    if ((*d.method == '\0' || method == d.method) && (*d.route == '\0' || route == d.route) &&
        status == d.status) {
      return &d;
    }
  }
  return nullptr;
}

class CiliumConformance : public ::testing::Test {
 protected:
  void SetUp() override {
    FakeCiliumAgentConfig cfg;
    cfg.socket_path = dir_.file("cilium.sock");
    agent_ = std::make_unique<FakeCiliumAgent>(cfg);
    agent_->start();
  }

  // Calls the agent and checks the answer against the spec (or a documented deviation).
  json call(const std::string& method, const std::string& route, const std::string& path,
            const std::string& body = "",
            std::vector<std::pair<std::string, std::string>> headers = {}) {
    auto r = http_request(HttpTarget::unix_socket(agent_->socket_path()), method, path, body,
                          headers, 10s);
    if (!r) {
      ADD_FAILURE() << method << " " << path << ": " << r.error().message;
      return json();
    }
    last_status_ = r->status;
    ++checked_;
    const std::string what = method + " " + path + " -> " + std::to_string(r->status);
    if (!r->body.empty()) {
      EXPECT_EQ(r->header("Content-Type"), "application/json") << what;
      EXPECT_TRUE(r->body.ends_with("\n")) << what << ": Go's json.Encoder ends bodies with \\n";
    }
    json parsed = r->body.empty() ? json() : json::parse(r->body, nullptr, false);
    if (!r->body.empty() && parsed.is_discarded()) {
      ADD_FAILURE() << what << ": body is not JSON: " << r->body;
      return json();
    }
    if (const Deviation* d = deviation_for(method, route, r->status)) {
      if (r->body.empty() && r->status == 404) return parsed;  // lookup miss: empty, as declared
      const json schema = d->shape == Shape::json_string
                              ? json{{"$ref", "#/definitions/Error"}}
                              : json::parse(R"({"type":"object","required":["code","message"],
                                  "properties":{"code":{"type":"integer"},"message":{"type":"string"}}})");
      expect_valid(parsed, schema, what + " [" + d->why + "]");
      return parsed;
    }
    auto schema = spec().response_schema(method, route, r->status);
    if (!schema) {
      ADD_FAILURE() << what << ": " << schema.error().message;
      return parsed;
    }
    if (r->body.empty() && empty_allowed(method, route, r->status)) return parsed;
    if (!schema->has_value()) {
      EXPECT_TRUE(r->body.empty()) << what << ": the spec declares no body, got " << r->body;
      return parsed;
    }
    expect_valid(parsed, **schema, what);
    return parsed;
  }

  void expect_valid(const json& body, const json& schema, const std::string& what) {
    for (const auto& e : spec().validate(body, schema)) ADD_FAILURE() << what << ": " << e;
    for (const auto& e : go_omitempty_violations(body)) {
      ADD_FAILURE() << what << ": " << e << " is empty; Go's omitempty would drop it";
    }
  }

  TempDir dir_;
  std::unique_ptr<FakeCiliumAgent> agent_;
  int last_status_ = 0;
  int checked_ = 0;
};

using cn::testing::kAllocId;
const std::string kAtt = std::string("cni-attachment-id:") + kAllocId + ":eth0";

json cni_put(const std::string& alloc, const std::string& ip) {
  return json{{"container-id", alloc},           {"container-interface-name", "eth0"},
              {"interface-name", "lxc0a1b2c3d"}, {"interface-index", 27},
              {"mac", "f2:11:6b:3a:09:c4"},      {"host-mac", "4e:8a:51:0c:2f:9d"},
              {"addressing", {{"ipv4", ip}}},    {"datapath-configuration", json::object()},
              {"state", "waiting-for-identity"}, {"sync-build-endpoint", true}};
}

TEST_F(CiliumConformance, RealisticSessionConformsToTheSpec) {
  call("GET", "/config", "/v1/config");
  call("GET", "/healthz", "/v1/healthz");
  call("GET", "/healthz", "/v1/healthz", "", {{"brief", "true"}});
  call("GET", "/endpoint", "/v1/endpoint");

  const json created = call("PUT", "/endpoint/{id}", "/v1/endpoint/cilium-local:0",
                            cni_put(kAllocId, "10.200.3.17").dump());
  EXPECT_EQ(last_status_, 201);
  const std::string id = std::to_string(created.value("id", 0));
  call("PUT", "/endpoint/{id}", "/v1/endpoint/cilium-local:0",
       cni_put(kAllocId, "10.200.3.18").dump());
  EXPECT_EQ(last_status_, 400);
  call("PUT", "/endpoint/{id}", "/v1/endpoint/cilium-local:0", R"({"container-id":"x"})");
  EXPECT_EQ(last_status_, 422);

  call("GET", "/endpoint/{id}", "/v1/endpoint/" + kAtt);
  call("GET", "/endpoint/{id}/labels", "/v1/endpoint/" + kAtt + "/labels");
  call("GET", "/endpoint/{id}/healthz", "/v1/endpoint/" + kAtt + "/healthz");
  call("GET", "/endpoint/{id}/config", "/v1/endpoint/" + kAtt + "/config");
  call("GET", "/endpoint/{id}/log", "/v1/endpoint/" + kAtt + "/log");

  const std::string labels =
      R"({"user":["nomad:group=app","nomad:job=web","nomad:namespace=default"]})";
  call("PATCH", "/endpoint/{id}/labels", "/v1/endpoint/" + kAtt + "/labels", labels);
  EXPECT_EQ(last_status_, 200);
  ASSERT_TRUE(agent_->wait_settled());
  call("GET", "/endpoint/{id}", "/v1/endpoint/" + id);  // init + user labels, mixed identity
  call("PATCH", "/endpoint/{id}/labels", "/v1/endpoint/" + kAtt + "/labels", labels);
  ASSERT_TRUE(agent_->wait_settled());
  const json labelled = call("GET", "/endpoint/{id}", "/v1/endpoint/" + kAtt);
  EXPECT_EQ(labelled["status"]["identity"]["labels"].size(), 3u);
  call("GET", "/endpoint/{id}/labels", "/v1/endpoint/" + kAtt + "/labels");
  call("GET", "/endpoint", "/v1/endpoint", R"(["nomad:job=web"])");
  call("GET", "/endpoint", "/v1/endpoint", R"(["nomad:job=nope"])");
  EXPECT_EQ(last_status_, 404);

  // Deprecated PATCH on a second endpoint.
  call("PUT", "/endpoint/{id}", "/v1/endpoint/cilium-local:0",
       cni_put("0d9e2c41-7b5a-4f3e-8c1d-2a6b9e0f4c55", "10.200.3.19").dump());
  call("PATCH", "/endpoint/{id}", "/v1/endpoint/ipv4:10.200.3.19",
       R"({"state":"waiting-for-identity","labels":["nomad:job=db"]})");
  EXPECT_EQ(last_status_, 200);
  call("PATCH", "/endpoint/{id}", "/v1/endpoint/ipv4:10.200.3.19", R"({"labels":[]})");
  EXPECT_EQ(last_status_, 422);
  ASSERT_TRUE(agent_->wait_settled());
  call("GET", "/endpoint", "/v1/endpoint");
  call("GET", "/identity", "/v1/identity");
  call("GET", "/identity/{id}", "/v1/identity/5");

  // Errors.
  call("GET", "/endpoint/{id}", "/v1/endpoint/foo:1");
  EXPECT_EQ(last_status_, 400);
  call("GET", "/endpoint/{id}", "/v1/endpoint/cni-attachment-id:none:eth0");
  EXPECT_EQ(last_status_, 404);
  call("PATCH", "/endpoint/{id}/labels", "/v1/endpoint/" + kAtt + "/labels",
       R"({"user":["reserved:host"]})");
  EXPECT_EQ(last_status_, 500);
  const json list = call("GET", "/endpoint", "/v1/endpoint", R"(["reserved:host"])");
  ASSERT_EQ(list.size(), 1u);
  call("PATCH", "/endpoint/{id}/labels",
       "/v1/endpoint/" + std::to_string(list[0].value("id", 0)) + "/labels",
       R"({"user":["nomad:job=x"]})");
  EXPECT_EQ(last_status_, 400);
  agent_->inject_fault(FaultRule::fail(
      "GET", "/endpoint/{id}", 429, 1,
      "\"request would have to wait 16s to be served (maximum wait duration: 15s)\"\n"));
  call("GET", "/endpoint/{id}", "/v1/endpoint/" + kAtt);
  EXPECT_EQ(last_status_, 429);
  agent_->set_api_ready(false);
  call("DELETE", "/endpoint/{id}", "/v1/endpoint/" + kAtt);
  EXPECT_EQ(last_status_, 503);
  agent_->set_api_ready(true);

  // Teardown as cilium-cni does it, then the repeated DEL.
  call("DELETE", "/endpoint", "/v1/endpoint", json{{"container-id", kAllocId}}.dump());
  EXPECT_EQ(last_status_, 200);
  call("DELETE", "/endpoint", "/v1/endpoint", json{{"container-id", kAllocId}}.dump());
  EXPECT_EQ(last_status_, 404);
  call("DELETE", "/endpoint", "/v1/endpoint", R"({"container-id":""})");
  EXPECT_EQ(last_status_, 400);
  call("DELETE", "/endpoint/{id}", "/v1/endpoint/ipv4:10.200.3.19");
  EXPECT_EQ(last_status_, 200);
  EXPECT_GE(checked_, 35);
}

TEST_F(CiliumConformance, AllVersionsConform) {
  for (const auto v : {CiliumVersion::v1_15, CiliumVersion::v1_16, CiliumVersion::v1_20}) {
    agent_->stop();
    FakeCiliumAgentConfig cfg;
    cfg.socket_path = dir_.file("cilium.sock");
    cfg.version = v;
    agent_ = std::make_unique<FakeCiliumAgent>(cfg);
    agent_->start();
    call("PUT", "/endpoint/{id}", "/v1/endpoint/cilium-local:0",
         cni_put(kAllocId, "10.200.3.17").dump());
    EXPECT_EQ(last_status_, 201) << to_string(v);
    call("GET", "/endpoint/{id}", "/v1/endpoint/" + kAtt);
    call("GET", "/endpoint/{id}", "/v1/endpoint/container-id:" + std::string(kAllocId));
    EXPECT_EQ(last_status_, v == CiliumVersion::v1_20 ? 400 : 200) << to_string(v);
  }
}

// --- differences from upstream the fake no longer has -------------------------------
// Each test names the upstream file whose behaviour it pins.

class CiliumUpstreamParity : public CiliumConformance {
 protected:
  void TearDown() override { agent_.reset(); }  // before clock_ goes away

  void restart_with(FakeCiliumAgentConfig cfg) {
    agent_.reset();
    cfg.socket_path = dir_.file("cilium.sock");
    agent_ = std::make_unique<FakeCiliumAgent>(cfg);
    agent_->start();
  }

  FakeCiliumAgentConfig manual_clock_config() {
    FakeCiliumAgentConfig cfg;
    cfg.clock = &clock_;
    return cfg;
  }

  std::future<RawHttpResponse> async_call(std::string method, std::string path,
                                          std::string body = "") {
    return std::async(std::launch::async, [this, method, path, body] {
      auto r =
          http_request(HttpTarget::unix_socket(agent_->socket_path()), method, path, body, {}, 30s);
      return r ? *r : RawHttpResponse{};
    });
  }

  // A ready endpoint whose identity is known (sync build): a deprecated PATCH that repeats its
  // labels changes nothing but the state, which makes the agent regenerate it.
  void create_ready_endpoint() {
    json put = cni_put(kAllocId, "10.200.3.17");
    put["labels"] = json::array({"nomad:job=db"});
    ASSERT_TRUE(agent_->create_endpoint(put));
  }
  std::string state() {
    const auto ep = agent_->endpoint(kAtt);
    return ep ? ep->at("status").value("state", "") : "";
  }
  static constexpr const char* kRepatch = R"({"state":"ready","labels":["nomad:job=db"]})";

  ManualClock clock_;
};

// pkg/endpoint/id/id.go (`Parse` in the newest tree): container-id:, container-name:, pod-name:
// and docker-endpoint: are no longer known prefixes, so the lookup is refused with 400 before any
// endpoint is searched; older agents still resolve container-id: for CNI endpoints.
TEST_F(CiliumUpstreamParity, ContainerIdIsAnUnknownPrefixOnTheNewestAgent) {
  FakeCiliumAgentConfig cfg;
  cfg.version = CiliumVersion::v1_20;
  restart_with(cfg);
  ASSERT_TRUE(agent_->create_endpoint(cni_put(kAllocId, "10.200.3.17")));
  const json err =
      call("GET", "/endpoint/{id}", "/v1/endpoint/container-id:" + std::string(kAllocId));
  EXPECT_EQ(last_status_, 400);
  EXPECT_EQ(err, "unknown endpoint ID prefix \"container-id\"");
  for (const char* prefix : {"container-name", "pod-name", "docker-endpoint"}) {
    call("GET", "/endpoint/{id}", "/v1/endpoint/" + std::string(prefix) + ":x");
    EXPECT_EQ(last_status_, 400) << prefix;
  }
  call("GET", "/endpoint/{id}", "/v1/endpoint/" + kAtt);
  EXPECT_EQ(last_status_, 200);

  restart_with(FakeCiliumAgentConfig{});  // 1.17
  ASSERT_TRUE(agent_->create_endpoint(cni_put(kAllocId, "10.200.3.17")));
  call("GET", "/endpoint/{id}", "/v1/endpoint/container-id:" + std::string(kAllocId));
  EXPECT_EQ(last_status_, 200);
}

// pkg/endpoint/api/endpoint_api_handler.go (waitReadyFn, fact sheet section 2): a starting agent
// answers 503 before the request reaches the limiter, so it neither queues nor takes a token.
TEST_F(CiliumUpstreamParity, ReadinessIsCheckedBeforeTheRateLimiter) {
  auto cfg = manual_clock_config();
  cfg.rate_limits = true;
  cfg.rate_limit_overrides["endpoint-patch"] = {0.5, 1, 15s, 0};
  restart_with(cfg);
  ASSERT_TRUE(agent_->create_endpoint(cni_put(kAllocId, "10.200.3.17")));
  const std::string path = "/v1/endpoint/" + kAtt + "/labels";
  call("PATCH", "/endpoint/{id}/labels", path, R"({"user":["nomad:job=a"]})");
  ASSERT_EQ(last_status_, 200);  // the burst of 1 is used up: the next PATCH would queue 2 s
  agent_->set_api_ready(false);
  auto refused = async_call("PATCH", path, R"({"user":["nomad:job=b"]})");
  ASSERT_EQ(refused.wait_for(5s), std::future_status::ready) << "queued in the limiter";
  EXPECT_EQ(refused.get().status, 503);
  EXPECT_EQ(clock_.sleepers(), 0);
}

// pkg/endpoint/endpoint.go (APICanModify): the text of the 400 for an endpoint whose
// orchestration labels are reserved (host, health).
TEST_F(CiliumUpstreamParity, ReservedEndpointErrorText) {
  const json host = call("GET", "/endpoint", "/v1/endpoint", R"(["reserved:host"])");
  ASSERT_EQ(host.size(), 1u);
  const std::string id = std::to_string(host[0].value("id", 0));
  const json err = call("PATCH", "/endpoint/{id}/labels", "/v1/endpoint/" + id + "/labels",
                        R"({"user":["nomad:job=x"]})");
  EXPECT_EQ(last_status_, 400);
  EXPECT_EQ(err, "endpoint may not be associated reserved labels");
  call("PATCH", "/endpoint/{id}", "/v1/endpoint/" + id, R"({"state":"ready"})");
  EXPECT_EQ(last_status_, 400);
}

// daemon/cmd/endpoint.go (patchEndpointIDConfig -> EndpointUpdate -> Endpoint.Update) with
// pkg/option/option.go (ValidateConfigurationMap, NormalizeBool) and pkg/endpoint/api.go
// (policyStatus): a name is looked up ignoring case, a value is one of NormalizeBool's words,
// one bad entry refuses the map with 400 and changes nothing; GET /v1/endpoint/{id}/config and
// GET /v1/endpoint show the stored value, and policy-enabled gains its audit- form.
TEST_F(CiliumUpstreamParity, EndpointConfigPatchValidatesAndShowsPolicyAuditMode) {
  ASSERT_TRUE(agent_->create_endpoint(cni_put(kAllocId, "10.200.3.17")));
  const std::string path = "/v1/endpoint/" + kAtt + "/config";
  EXPECT_EQ(call("GET", "/endpoint/{id}/config", path)["realized"]["options"]["PolicyAuditMode"],
            "Disabled");

  json err = call("PATCH", "/endpoint/{id}/config", path,
                  R"({"options":{"PolicyAuditMode":"Enabled","NoSuchOption":"Enabled"}})");
  EXPECT_EQ(last_status_, 400);
  EXPECT_EQ(err, "unknown option \"NoSuchOption\"");
  err = call("PATCH", "/endpoint/{id}/config", path, R"({"options":{"PolicyAuditMode":"audit"}})");
  EXPECT_EQ(last_status_, 400);
  EXPECT_EQ(err, "invalid option value audit");
  EXPECT_EQ(agent_->endpoint(kAtt)->at("spec").at("options").at("PolicyAuditMode"), "Disabled")
      << "a refused map changes nothing";

  call("PATCH", "/endpoint/{id}/config", path, R"({"options":{"policyauditmode":"on"}})");
  EXPECT_EQ(last_status_, 200);
  EXPECT_EQ(call("GET", "/endpoint/{id}/config", path)["realized"]["options"]["PolicyAuditMode"],
            "Enabled");
  const json ep = call("GET", "/endpoint/{id}", "/v1/endpoint/" + kAtt);
  EXPECT_EQ(ep["spec"]["options"]["PolicyAuditMode"], "Enabled");
  EXPECT_EQ(ep["status"]["realized"]["options"]["PolicyAuditMode"], "Enabled");
  EXPECT_EQ(ep["status"]["policy"]["realized"]["policy-enabled"], "none")
      << "nothing enforces on it: audit has nothing to rename";

  call("PATCH", "/endpoint/{id}/config", path, R"({"options":{"PolicyAuditMode":"Disabled"}})");
  EXPECT_EQ(last_status_, 200);
  EXPECT_EQ(agent_->endpoint(kAtt)->at("spec").at("options").at("PolicyAuditMode"), "Disabled");
  call("PATCH", "/endpoint/{id}/config", "/v1/endpoint/cni-attachment-id:none:eth0/config",
       R"({"options":{"PolicyAuditMode":"Enabled"}})");
  EXPECT_EQ(last_status_, 404);
}

// pkg/option/config.go (PolicyAuditMode) and daemon/cmd/config.go: --policy-audit-mode puts
// every new endpoint in audit and is reported in daemonConfigurationMap.
TEST_F(CiliumUpstreamParity, AgentPolicyAuditModeIsInheritedAndReported) {
  auto cfg = manual_clock_config();
  cfg.policy_audit_mode = true;
  restart_with(cfg);
  ASSERT_TRUE(agent_->create_endpoint(cni_put(kAllocId, "10.200.3.17")));
  EXPECT_EQ(agent_->endpoint(kAtt)->at("spec").at("options").at("PolicyAuditMode"), "Enabled");
  const json config = call("GET", "/config", "/v1/config");
  EXPECT_EQ(config["status"]["daemonConfigurationMap"]["PolicyAuditMode"], true);
}

// pkg/endpoint/api/endpoint_api_handler.go (EndpointPatchEndpointIDHandler): the deprecated
// PATCH waits for the regeneration it triggers (`<-ep.Regenerate(...)`) before answering 200.
TEST_F(CiliumUpstreamParity, DeprecatedPatchAnswersAfterTheRegenerationItTriggers) {
  auto cfg = manual_clock_config();
  cfg.regeneration_step = 100ms;
  restart_with(cfg);
  create_ready_endpoint();
  ASSERT_EQ(state(), "ready");
  auto patched = async_call("PATCH", "/v1/endpoint/" + kAtt, kRepatch);
  ASSERT_TRUE(eventually([&] { return state() == "waiting-to-regenerate"; }));
  EXPECT_EQ(patched.wait_for(20ms), std::future_status::timeout);
  clock_.advance(100ms);
  ASSERT_TRUE(agent_->wait_settled());
  EXPECT_EQ(state(), "regenerating");
  EXPECT_EQ(patched.wait_for(20ms), std::future_status::timeout);
  clock_.advance(100ms);
  ASSERT_EQ(patched.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(patched.get().status, 200);
  EXPECT_EQ(state(), "ready");
}

// pkg/rate/api_limiter.go (`wait`): before a "would have to wait" 429 the limiter sleeps the
// mean processing time of the requests it served, so that clients retrying at once are paced.
TEST_F(CiliumUpstreamParity, TooManyRequestsAnswerWaitsTheMeanProcessingTime) {
  auto cfg = manual_clock_config();
  cfg.regeneration_step = 100ms;
  cfg.rate_limits = true;
  cfg.rate_limit_overrides["endpoint-patch"] = {0.5, 1, 1s, 0};
  restart_with(cfg);
  create_ready_endpoint();
  // One served PATCH that took 200 ms of agent time (its regeneration).
  auto first = async_call("PATCH", "/v1/endpoint/" + kAtt, kRepatch);
  ASSERT_TRUE(eventually([&] { return state() == "waiting-to-regenerate"; }));
  clock_.advance(100ms);
  ASSERT_TRUE(agent_->wait_settled());
  clock_.advance(100ms);
  ASSERT_EQ(first.wait_for(5s), std::future_status::ready);
  ASSERT_EQ(first.get().status, 200);
  // The next one would wait 1.8 s (> 1 s): refused, but only after sleeping 200 ms.
  auto refused = async_call("PATCH", "/v1/endpoint/" + kAtt, kRepatch);
  ASSERT_TRUE(clock_.wait_for_sleepers(1, 5s));
  EXPECT_EQ(refused.wait_for(20ms), std::future_status::timeout);
  clock_.advance(200ms);
  ASSERT_EQ(refused.wait_for(5s), std::future_status::ready);
  const RawHttpResponse r = refused.get();
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(json::parse(r.body),
            "request would have to wait 1.8s to be served (maximum wait duration: 1s)");
}

// pkg/rate/api_limiter.go (`wait`): a request that finds every parallel slot taken waits for
// one up to the maximum wait, then gets Cilium's parallel-requests error.
TEST_F(CiliumUpstreamParity, ParallelRequestsCapTimesOutWithCiliumsText) {
  auto cfg = manual_clock_config();
  cfg.regeneration_step = 10s;
  cfg.rate_limits = true;
  cfg.rate_limit_overrides["endpoint-patch"] = {0, 0, 1s, 1};
  restart_with(cfg);
  create_ready_endpoint();
  auto holder = async_call("PATCH", "/v1/endpoint/" + kAtt, kRepatch);  // in flight for 20 s
  ASSERT_TRUE(eventually([&] { return state() == "waiting-to-regenerate"; }));
  auto queued =
      async_call("PATCH", "/v1/endpoint/" + kAtt + "/labels", R"({"user":["nomad:job=x"]})");
  ASSERT_TRUE(clock_.wait_for_sleepers(2, 5s));  // the regeneration and the queued request
  EXPECT_EQ(queued.wait_for(20ms), std::future_status::timeout);
  clock_.advance(1s);
  ASSERT_EQ(queued.wait_for(5s), std::future_status::ready);
  const RawHttpResponse r = queued.get();
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(json::parse(r.body),
            "timed out while waiting to be served with 1 parallel requests: context deadline "
            "exceeded");
  clock_.advance(10s);
  ASSERT_TRUE(agent_->wait_settled());
  clock_.advance(10s);
  ASSERT_EQ(holder.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(holder.get().status, 200);
}

// pkg/rate/api_limiter.go (`wait`): when the client gives up while its request waits in the
// limiter, the request context is cancelled, the reservation returned, and the PATCH is not
// applied.
TEST_F(CiliumUpstreamParity, PatchWhoseClientGaveUpInTheLimiterIsNotApplied) {
  auto cfg = manual_clock_config();
  cfg.rate_limits = true;
  cfg.rate_limit_overrides["endpoint-patch"] = {0.5, 1, 15s, 0};
  restart_with(cfg);
  ASSERT_TRUE(agent_->create_endpoint(cni_put(kAllocId, "10.200.3.17")));
  const std::string path = "/v1/endpoint/" + kAtt + "/labels";
  call("PATCH", "/endpoint/{id}/labels", path, R"({"user":["nomad:job=a"]})");
  ASSERT_EQ(last_status_, 200);
  ASSERT_TRUE(agent_->wait_settled());
  {
    auto conn = RawConnection::open(HttpTarget::unix_socket(agent_->socket_path()), 5s);
    ASSERT_TRUE(conn) << conn.error().message;
    ASSERT_TRUE(conn->send(format_request("PATCH", path, R"({"user":["nomad:job=b"]})")));
    ASSERT_TRUE(clock_.wait_for_sleepers(1, 5s));  // waiting 2 s for a token
  }                                                // the client gives up
  clock_.advance(2s);
  ASSERT_TRUE(eventually([&] { return agent_->count("PATCH", "/endpoint/{id}/labels") == 2; }));
  EXPECT_EQ(agent_->requests().back().status, 429);
  ASSERT_TRUE(agent_->wait_settled());
  const auto ep = agent_->endpoint(kAtt);
  ASSERT_TRUE(ep);
  EXPECT_EQ(ep->at("spec").at("label-configuration").value("user", json()),
            json::array({"nomad:job=a"}));
  // Its token went back: the next PATCH is served without waiting.
  auto next = async_call("PATCH", path, R"({"user":["nomad:job=c"]})");
  ASSERT_EQ(next.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(next.get().status, 200);
}

// --- the validator itself must catch what we rely on it for -----------------------------------

class ValidatorNegative : public CiliumConformance {
 protected:
  json endpoint_model() {
    if (auto existing = agent_->endpoint(kAtt)) return *existing;
    auto created = agent_->create_endpoint(cni_put(kAllocId, "10.200.3.17"));
    EXPECT_TRUE(created) << created.error().message;
    return created ? *created : json();
  }
  std::vector<std::string> errors(const json& value, const char* definition) {
    return spec().validate(value, json{{"$ref", std::string("#/definitions/") + definition}});
  }
  static bool mentions(const std::vector<std::string>& errs, const std::string& text) {
    for (const auto& e : errs) {
      if (e.find(text) != std::string::npos) return true;
    }
    return false;
  }
};

TEST_F(ValidatorNegative, UntouchedModelIsValid) {
  EXPECT_TRUE(errors(endpoint_model(), "Endpoint").empty());
}

TEST_F(ValidatorNegative, RenamedFieldIsCaught) {
  json ep = endpoint_model();
  auto& ids = ep["status"]["external-identifiers"];
  ids["cni-attachment"] = ids["cni-attachment-id"];
  ids.erase("cni-attachment-id");
  const auto errs = errors(ep, "Endpoint");
  EXPECT_TRUE(mentions(errs, "/status/external-identifiers/cni-attachment: unknown property"))
      << ::testing::PrintToString(errs);
  json renamed_top = endpoint_model();
  renamed_top["status"]["labelsSHA"] = "x";
  EXPECT_FALSE(errors(renamed_top, "Endpoint").empty());
}

TEST_F(ValidatorNegative, WrongTypeIsCaught) {
  json ep = endpoint_model();
  ep["status"]["identity"]["id"] = "5";
  EXPECT_TRUE(
      mentions(errors(ep, "Endpoint"), "/status/identity/id: expected integer, got string"));
  json labels = endpoint_model();
  labels["status"]["identity"]["labels"] = json::array({1});
  EXPECT_TRUE(mentions(errors(labels, "Endpoint"), "/status/identity/labels/0: expected string"));
  EXPECT_FALSE(
      spec().validate(json{{"message", "x"}}, json{{"$ref", "#/definitions/Error"}}).empty())
      << "an error body must be a JSON string";
}

TEST_F(ValidatorNegative, BadEnumIsCaught) {
  json ep = endpoint_model();
  ep["status"]["state"] = "happy";
  EXPECT_TRUE(mentions(errors(ep, "Endpoint"), "/status/state: \"happy\" is not one of"));
  json health = endpoint_model();
  health["status"]["health"]["overallHealth"] = "Fine";
  EXPECT_FALSE(errors(health, "Endpoint").empty());
}

TEST_F(ValidatorNegative, MissingRequiredIsCaught) {
  json ep = endpoint_model();
  ep["status"].erase("state");
  EXPECT_TRUE(mentions(errors(ep, "Endpoint"), "missing required \"state\""));
}

TEST_F(ValidatorNegative, DroppedOmitemptyQuirkIsCaught) {
  json ep = endpoint_model();
  EXPECT_TRUE(go_omitempty_violations(ep).empty());
  ep["status"]["external-identifiers"]["k8s-pod-name"] = "";
  ep["spec"]["label-configuration"]["user"] = json::array();
  const auto v = go_omitempty_violations(ep);
  EXPECT_NE(std::find(v.begin(), v.end(), "/status/external-identifiers/k8s-pod-name"), v.end());
  EXPECT_NE(std::find(v.begin(), v.end(), "/spec/label-configuration/user"), v.end());
  EXPECT_TRUE(errors(ep, "Endpoint").empty())
      << "the schema alone cannot see this: hence the extra check";
}

TEST(OpenApiJson, CommittedCopyMatchesTheReferenceYaml) {
  const std::string yaml_path = "/work/shared/reference/cilium/openapi.yaml";
  // Next to the committed JSON (CN_SOURCE_DIR does not reach ctest runs reliably).
  const std::string script =
      (std::filesystem::path(spec_path()).parent_path() / "tools" / "openapi_to_json.py").string();
  if (!std::filesystem::exists(yaml_path) || !std::filesystem::exists(script)) {
    GTEST_SKIP() << "reference spec or converter missing";
  }
  auto has_yaml =
      run_process({"/usr/bin/python3", "-c", "import yaml"}, current_environment(), "", 30s);
  if (has_yaml.exit_code != 0) GTEST_SKIP() << "python3 with PyYAML not available";
  TempDir dir;
  const std::string out = dir.file("openapi.json");
  auto conv =
      run_process({"/usr/bin/python3", script, yaml_path, out}, current_environment(), "", 60s);
  ASSERT_TRUE(conv.started && !conv.timed_out) << conv.err;
  ASSERT_EQ(conv.exit_code, 0) << conv.err;
  auto fresh = OpenApiSpec::load(out);
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->raw(), spec().raw()) << "re-run tests/fakes/cilium/tools/openapi_to_json.py";
}

}  // namespace
}  // namespace cn::fakes::cilium
