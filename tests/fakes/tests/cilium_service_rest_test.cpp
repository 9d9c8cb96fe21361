// The REST service API of the fake agent's 1.16/1.17 against cilium/cilium
// pkg/service/service_api_handler.go (v1.17) and api/v1/openapi.yaml; facts in
// cilium-lb-state-file.md section 8.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/fakes/cilium/fake_cilium_agent.h"
#include "tests/fakes/cilium/openapi_validator.h"
#include "tests/fakes/http/raw_http_client.h"
#include "tests/fakes/tests/http_test_util.h"

#ifndef CN_FAKES_OPENAPI_JSON
#define CN_FAKES_OPENAPI_JSON ""
#endif

namespace cn::fakes {
namespace {

using nlohmann::json;
using testing::TempDir;

json web_spec(int id) {
  return {{"id", id},
          {"frontend-address",
           {{"ip", "10.96.0.10"}, {"port", 80}, {"protocol", "tcp"}, {"scope", "external"}}},
          {"backend-addresses",
           {{{"ip", "10.0.1.23"}, {"port", 8080}, {"state", "active"}, {"weight", 100}}}},
          {"flags", {{"type", "ClusterIP"}, {"name", "web"}, {"namespace", "default"}}}};
}

class CiliumServiceRest : public ::testing::Test {
 protected:
  void start(CiliumVersion v = CiliumVersion::v1_17) {
    FakeCiliumAgentConfig cfg;
    cfg.socket_path = dir_.file("cilium.sock");
    cfg.version = v;
    agent_ = std::make_unique<FakeCiliumAgent>(cfg);
    agent_->start();
  }
  Result<RawHttpResponse> call(const std::string& method, const std::string& path,
                               const std::string& body = {}) {
    return http_request(HttpTarget::unix_socket(dir_.file("cilium.sock")), method, path, body);
  }
  RawHttpResponse put(int path_id, const json& spec) {
    auto r = call("PUT", "/v1/service/" + std::to_string(path_id), spec.dump());
    EXPECT_TRUE(r);
    return r ? *r : RawHttpResponse{};
  }
  TempDir dir_;
  std::unique_ptr<FakeCiliumAgent> agent_;
};

// service_api_handler.go: the handler takes the body's id and never reads the path's.
TEST_F(CiliumServiceRest, TheBodyIdWinsOverThePathId) {
  start();
  EXPECT_EQ(put(99, web_spec(7)).status, 201);
  EXPECT_EQ(call("GET", "/v1/service/7")->status, 200);
  EXPECT_EQ(call("GET", "/v1/service/99")->status, 404);
  EXPECT_EQ(put(7, web_spec(7)).status, 200);  // an update
}

// service_api_handler.go via NewL3n4AddrFromModel: an empty scope is an invalid frontend (460).
TEST_F(CiliumServiceRest, ScopeIsRequired) {
  start();
  json spec = web_spec(7);
  spec["frontend-address"].erase("scope");
  auto r = put(7, spec);
  EXPECT_EQ(r.status, 460);
  EXPECT_EQ(json::parse(r.body), "invalid scope \"\"");
}

// NewBackendFromBackendModel: a missing or zero weight makes the backend maintenance.
TEST_F(CiliumServiceRest, MissingOrZeroWeightMeansMaintenance) {
  start();
  json spec = web_spec(7);
  spec["backend-addresses"].push_back({{"ip", "10.0.1.24"}, {"port", 8080}});
  spec["backend-addresses"].push_back({{"ip", "10.0.1.25"}, {"port", 8080}, {"weight", 0}});
  ASSERT_EQ(put(7, spec).status, 201);
  const json got = json::parse(call("GET", "/v1/service/7")->body);
  const json& bes = got["spec"]["backend-addresses"];
  ASSERT_EQ(bes.size(), 3u);
  EXPECT_EQ(bes[0]["state"], "active");
  EXPECT_EQ(bes[1]["state"], "maintenance");
  EXPECT_EQ(bes[2]["state"], "maintenance");
}

// service_api_handler.go reads flags.type before any nil check: without flags the handler
// panics and the connection closes without an answer.
TEST_F(CiliumServiceRest, FlagsAreRequired) {
  start();
  json spec = web_spec(7);
  spec.erase("flags");
  auto r = call("PUT", "/v1/service/7", spec.dump());
  EXPECT_FALSE(r && r->status != 0) << (r ? r->body : "");
  EXPECT_EQ(call("GET", "/v1/service/7")->status, 404);
}

// service_api_handler.go: the 460 and 500 texts of ID and frontend clashes, and ID 0.
TEST_F(CiliumServiceRest, IdAndFrontendClashes) {
  start();
  ASSERT_EQ(put(7, web_spec(7)).status, 201);
  auto same_frontend = put(8, web_spec(8));
  EXPECT_EQ(same_frontend.status, 460);
  EXPECT_EQ(json::parse(same_frontend.body),
            "the service provided is already registered with ID 7, please use that ID instead "
            "of 8");
  json other = web_spec(7);
  other["frontend-address"]["ip"] = "10.96.0.11";
  auto same_id = put(7, other);
  EXPECT_EQ(same_id.status, 500);
  EXPECT_EQ(json::parse(same_id.body), "Service ID 7 is already registered to \"10.96.0.10:80\"");
  auto zero = put(0, web_spec(0));
  EXPECT_EQ(zero.status, 500);
  EXPECT_EQ(json::parse(zero.body), "invalid service ID 0");
  json bad_backend = web_spec(9);
  bad_backend["frontend-address"]["ip"] = "10.96.0.12";
  bad_backend["backend-addresses"][0]["ip"] = "nope";
  EXPECT_EQ(put(9, bad_backend).status, 461);
}

// api/v1/server/restapi/service/put_service_id_parameters.go: enums are checked before the
// handler (422 code 606), the body protocol is lower case.
TEST_F(CiliumServiceRest, EnumsAreValidatedBeforeTheHandler) {
  start();
  json spec = web_spec(7);
  spec["frontend-address"]["protocol"] = "TCP";
  auto r = put(7, spec);
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(json::parse(r.body)["code"], 606);
}

// service_api_handler.go: DELETE answers 200, then 404.
TEST_F(CiliumServiceRest, DeleteThenNotFound) {
  start();
  ASSERT_EQ(put(7, web_spec(7)).status, 201);
  EXPECT_EQ(json::parse(call("GET", "/v1/service")->body).size(), 1u);
  EXPECT_EQ(call("DELETE", "/v1/service/7")->status, 200);
  EXPECT_EQ(call("DELETE", "/v1/service/7")->status, 404);
  EXPECT_EQ(json::parse(call("GET", "/v1/service")->body), json::array());
}

// api/v1/openapi.yaml at v1.18.0: /service/{id} is gone (PRs cilium/cilium#39084 and the
// later "Drop service get support").
TEST_F(CiliumServiceRest, GoneFrom118) {
  start(CiliumVersion::v1_18);
  EXPECT_EQ(put(7, web_spec(7)).status, 404);
  EXPECT_EQ(call("GET", "/v1/service/7")->status, 404);
}

// api/v1/openapi.yaml: GET /service/{id}'s 200 body is a Service.
TEST_F(CiliumServiceRest, TheModelMatchesTheSpec) {
  start();
  ASSERT_EQ(put(7, web_spec(7)).status, 201);
  auto spec = cilium::OpenApiSpec::load(CN_FAKES_OPENAPI_JSON);
  ASSERT_TRUE(spec) << spec.error().message;
  auto schema = spec->response_schema("GET", "/service/{id}", 200);
  ASSERT_TRUE(schema && *schema);
  const json got = json::parse(call("GET", "/v1/service/7")->body);
  EXPECT_EQ(spec->validate(got, **schema), std::vector<std::string>{}) << got.dump();
}

}  // namespace
}  // namespace cn::fakes
