// CurlCiliumClient against the fake Cilium agent on its unix socket: request shapes, error
// bodies (JSON strings, empty 404s), 429 and 5xx retries in simulated time, deadlines.
#include <gtest/gtest.h>

#include <fstream>
#include <future>
#include <mutex>

#include <nlohmann/json.hpp>

#include "common/cilium/client/agent_error.h"
#include "common/cilium/client/curl_cilium_client.h"
#include "tests/fakes/cilium/fake_cilium_agent.h"
#include "tests/fakes/http/http_server.h"
#include "tests/support/alloc_ids.h"
#include "tests/support/manual_clock.h"
#include "tests/unit/clients/client_test_util.h"

namespace cn::cilium {
namespace {

using namespace std::chrono_literals;
using client_testing::ClockPump;
using client_testing::env_of;
using client_testing::eventually;
using client_testing::TempDir;
using fakes::FaultRule;
using nlohmann::json;

using cn::testing::kAllocId;
constexpr const char* kOtherAlloc = "0d9e2c41-7b5a-4f3e-8c1d-2a6b9e0f4c55";

json cni_put_body(const std::string& alloc, const std::string& ip) {
  return json{{"container-id", alloc},
              {"container-interface-name", "eth0"},
              {"interface-name", "lxc" + alloc.substr(0, 8)},
              {"interface-index", 27},
              {"addressing", {{"ipv4", ip}}},
              {"datapath-configuration", json::object()},
              {"state", "waiting-for-identity"},
              {"sync-build-endpoint", true}};
}

EndpointRef attach(const std::string& alloc) {
  return *EndpointRef::cni_attachment(alloc, "eth0");
}

TEST(CiliumClientConfig, SocketFromFlagThenEnvThenDefault) {
  std::map<std::string, std::string> env = {{"CILIUM_SOCK", "/run/cilium/from-env.sock"}};
  std::map<std::string, std::string> none;
  EXPECT_EQ(CiliumClientConfig::resolve("/flag.sock", env_of(env)).socket_path, "/flag.sock");
  EXPECT_EQ(CiliumClientConfig::resolve("", env_of(env)).socket_path, "/run/cilium/from-env.sock");
  EXPECT_EQ(CiliumClientConfig::resolve("", env_of(none)).socket_path,
            "/var/run/cilium/cilium.sock");
  EXPECT_EQ(CiliumClientConfig::resolve("unix:///x.sock", env_of(none)).socket_path, "/x.sock");
}

TEST(AgentError, BodiesOfEveryShape) {
  EXPECT_EQ(agent_error_text(R"("unknown endpoint ID prefix \"foo\"")"),
            R"(unknown endpoint ID prefix "foo")");
  EXPECT_EQ(agent_error_text(R"({"code":602,"message":"state in body is required"})"),
            "state in body is required");
  EXPECT_EQ(agent_error_text("This API is administratively disabled.\n"),
            "This API is administratively disabled.");
  EXPECT_EQ(agent_error_text(""), "");
}

TEST(AgentError, RateLimitHints) {
  EXPECT_EQ(rate_limit_wait_hint(
                "request would have to wait 16s to be served (maximum wait duration: 15s)"),
            16s);
  EXPECT_EQ(rate_limit_wait_hint("request would have to wait 1.5s to be served"), 1500ms);
  EXPECT_EQ(rate_limit_wait_hint("request would have to wait 1m30s to be served"), 90s);
  EXPECT_EQ(rate_limit_wait_hint("request would have to wait 250ms to be served"), 250ms);
  EXPECT_FALSE(rate_limit_wait_hint("context deadline exceeded"));
  EXPECT_FALSE(rate_limit_wait_hint("maximum wait duration: 15s"));
}

class CiliumClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fakes::FakeCiliumAgentConfig cfg;
    cfg.socket_path = dir_.file("cilium.sock");
    cfg.clock = &agent_clock_;
    agent_ = std::make_unique<fakes::FakeCiliumAgent>(cfg);
    agent_->start();
  }
  void TearDown() override { agent_->stop(); }

  CiliumClientConfig config() {
    CiliumClientConfig c;
    c.socket_path = dir_.file("cilium.sock");
    c.retry_seed = 1;
    return c;
  }
  void create(const std::string& alloc, const std::string& ip) {
    auto r = agent_->create_endpoint(cni_put_body(alloc, ip));
    ASSERT_TRUE(r) << r.error().message;
  }
  std::vector<fakes::AgentRequest> requests(const std::string& method, const std::string& route) {
    std::vector<fakes::AgentRequest> out;
    for (auto& r : agent_->requests()) {
      if (r.method == method && r.route == route) out.push_back(r);
    }
    return out;
  }
  static MonoTime soon() { return system_clock().now() + 10s; }

  TempDir dir_;
  ManualClock agent_clock_;
  std::unique_ptr<fakes::FakeCiliumAgent> agent_;
};

TEST_F(CiliumClientTest, ReadyWhenConfigAnswers) {
  CurlCiliumClient client(config());
  EXPECT_TRUE(client.ready(soon()));
  EXPECT_EQ(agent_->count("GET", "/config"), 1);
  agent_->stop();
  auto down = client.ready(soon());
  ASSERT_FALSE(down);
  EXPECT_EQ(down.error().status, 0);
  EXPECT_NE(down.error().message.find("cilium.sock"), std::string::npos) << down.error().message;
}

// A socket path where no agent ever ran names the file, not curl's "localhost port 80".
TEST_F(CiliumClientTest, MissingSocketSaysNoSuchFile) {
  auto c = config();
  c.socket_path = dir_.file("no-agent-here.sock");
  c.retry.max_attempts = 1;
  CurlCiliumClient client(c);
  auto down = client.ready(soon());
  ASSERT_FALSE(down);
  EXPECT_EQ(down.error().kind, ErrorKind::transport) << "retried like any refused connection";
  EXPECT_NE(down.error().message.find("no such file: " + c.socket_path), std::string::npos)
      << down.error().message;
  EXPECT_EQ(down.error().message.find("port 80"), std::string::npos) << down.error().message;
}

// A file that is not a socket, and a socket nobody listens on, say so too.
TEST_F(CiliumClientTest, NotASocketAndNobodyListeningAreNamed) {
  auto c = config();
  c.retry.max_attempts = 1;
  c.socket_path = dir_.file("plain-file");
  { std::ofstream(c.socket_path) << "x"; }
  auto not_socket = CurlCiliumClient(c).ready(soon());
  ASSERT_FALSE(not_socket);
  EXPECT_NE(not_socket.error().message.find("not a socket: " + c.socket_path), std::string::npos)
      << not_socket.error().message;
  agent_->stop();  // whether its socket file stays or goes, the text names the path
  c.socket_path = config().socket_path;
  auto stopped = CurlCiliumClient(c).ready(soon());
  ASSERT_FALSE(stopped);
  EXPECT_EQ(stopped.error().message.find("port 80"), std::string::npos) << stopped.error().message;
}

TEST_F(CiliumClientTest, ClusterNameFromHealthz) {
  CurlCiliumClient client(config());
  auto name = client.cluster_name(soon());  // the fake's cluster is `default`: a bare node name
  ASSERT_TRUE(name) << name.error().message;
  EXPECT_EQ(*name, "default");
  EXPECT_EQ(agent_->count("GET", "/healthz"), 1);

  agent_->stop();
  fakes::FakeCiliumAgentConfig cfg;
  cfg.socket_path = dir_.file("cilium.sock");
  cfg.clock = &agent_clock_;
  cfg.cluster_name = "eu-west";
  agent_ = std::make_unique<fakes::FakeCiliumAgent>(cfg);
  agent_->start();
  name = client.cluster_name(soon());  // a `brief` request would have no `cluster` to read
  ASSERT_TRUE(name) << name.error().message;
  EXPECT_EQ(*name, "eu-west");
}

TEST_F(CiliumClientTest, HealthzThatDoesNotTellTheClusterIsABadAnswer) {
  agent_->inject_fault(FaultRule::fail("GET", "/healthz", 200, 1, R"({"cilium":{"state":"Ok"}})"));
  CurlCiliumClient client(config());
  auto name = client.cluster_name(soon());
  ASSERT_FALSE(name);
  EXPECT_EQ(name.error().kind, ErrorKind::bad_answer) << name.error().message;
  EXPECT_NE(name.error().message.find("cluster.self"), std::string::npos) << name.error().message;
}

TEST_F(CiliumClientTest, AgentOptionsFromConfig) {
  CurlCiliumClient client(config());
  auto reported = client.agent_options(soon());
  ASSERT_TRUE(reported) << reported.error().message;
  EXPECT_EQ((*reported)[static_cast<std::size_t>(AgentOption::node_selector_labels)], false);
  EXPECT_EQ((*reported)[static_cast<std::size_t>(AgentOption::l7_proxy)], true);
  EXPECT_FALSE((*reported)[static_cast<std::size_t>(AgentOption::mesh_auth)])
      << "not in daemonConfigurationMap: never reported";

  agent_->inject_fault(FaultRule::fail(
      "GET", "/config", 200, 1, R"({"status":{"daemonConfigurationMap":{"EnableL7Proxy":1}}})"));
  auto bad = client.agent_options(soon());
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().kind, ErrorKind::bad_answer) << bad.error().message;
}

TEST_F(CiliumClientTest, HostHeaderIsLocalhost) {
  TempDir dir;
  std::mutex mu;
  std::string host;
  auto server =
      fakes::HttpServer::unix_socket(dir.file("c.sock"), [&](const fakes::HttpRequest& r) {
        std::lock_guard lock(mu);
        host = r.header("Host").value_or("<none>");
        return fakes::HttpResponse{};
      });
  server->start();
  auto cfg = config();
  cfg.socket_path = dir.file("c.sock");
  CurlCiliumClient client(cfg);
  ASSERT_TRUE(client.ready(soon()));
  server->stop();
  EXPECT_EQ(host, "localhost");
}

TEST_F(CiliumClientTest, EndpointByAttachmentIdAndList) {
  create(kAllocId, "10.200.3.17");
  CurlCiliumClient client(config());
  auto ep = client.endpoint(attach(kAllocId), soon());
  ASSERT_TRUE(ep) << ep.error().message;
  EXPECT_EQ(ep->cni_attachment_id, std::string(kAllocId) + ":eth0");
  EXPECT_TRUE(is_init(*ep));
  auto gets = requests("GET", "/endpoint/{id}");
  ASSERT_EQ(gets.size(), 1U);
  EXPECT_EQ(gets[0].path, "/v1/endpoint/cni-attachment-id:" + std::string(kAllocId) + ":eth0");

  auto list = client.endpoints(soon());
  ASSERT_TRUE(list) << list.error().message;
  EXPECT_EQ(list->endpoints.size(), 3U);  // ours plus the agent's host and health endpoints
  auto lists = requests("GET", "/endpoint");
  ASSERT_EQ(lists.size(), 1U);
  EXPECT_TRUE(lists[0].body.empty());  // a body would be a label filter
}

TEST_F(CiliumClientTest, NotFoundWithEmptyBody) {
  CurlCiliumClient client(config());
  auto ep = client.endpoint(attach(kOtherAlloc), soon());
  ASSERT_FALSE(ep);
  EXPECT_EQ(ep.error().status, 404);
  EXPECT_EQ(ep.error().message, "endpoint not found");
  auto del = client.delete_endpoint(attach(kOtherAlloc), soon());
  ASSERT_FALSE(del);
  EXPECT_EQ(del.error().status, 404);
}

TEST_F(CiliumClientTest, JsonStringErrorsAreUnquoted) {
  create(kAllocId, "10.200.3.17");
  auto cfg = config();
  cfg.retry.max_attempts = 1;  // the agent's 500 here is permanent
  CurlCiliumClient client(cfg);
  auto r = client.set_user_labels(attach(kAllocId), {"reserved:host"}, soon());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().status, 500);
  EXPECT_EQ(r.error().message, "Not allowed to add reserved labels: reserved:host");
}

TEST_F(CiliumClientTest, ReplaceIdentityLabelsSendsStateAndAlwaysLabels) {
  create(kAllocId, "10.200.3.17");
  CurlCiliumClient client(config());
  ASSERT_TRUE(client.replace_identity_labels(attach(kAllocId), {"nomad:job=web", "nomad:group=app"},
                                             soon()));
  ASSERT_TRUE(agent_->wait_settled());
  auto ep = client.endpoint(attach(kAllocId), soon());
  ASSERT_TRUE(ep) << ep.error().message;
  EXPECT_FALSE(is_init(*ep));
  EXPECT_EQ(ep->security_relevant_labels,
            (std::vector<std::string>{"nomad:group=app", "nomad:job=web"}));

  ASSERT_TRUE(client.replace_identity_labels(attach(kAllocId), {}, soon()));
  auto patches = requests("PATCH", "/endpoint/{id}");
  ASSERT_EQ(patches.size(), 2U);
  EXPECT_EQ(
      json::parse(patches[0].body),
      json::parse(
          R"({"state":"waiting-for-identity","labels":["nomad:job=web","nomad:group=app"]})"));
  EXPECT_EQ(json::parse(patches[1].body),
            json::parse(R"({"state":"waiting-for-identity","labels":[]})"));
}

TEST_F(CiliumClientTest, SetUserLabelsSendsTheCompleteSet) {
  create(kAllocId, "10.200.3.17");
  CurlCiliumClient client(config());
  ASSERT_TRUE(client.set_user_labels(attach(kAllocId), {"nomad:job=web"}, soon()));
  ASSERT_TRUE(client.set_user_labels(attach(kAllocId), {}, soon()));
  auto patches = requests("PATCH", "/endpoint/{id}/labels");
  ASSERT_EQ(patches.size(), 2U);
  EXPECT_EQ(json::parse(patches[0].body), json::parse(R"({"user":["nomad:job=web"]})"));
  EXPECT_EQ(json::parse(patches[1].body), json::parse(R"({"user":[]})"));
  EXPECT_EQ(patches[0].status, 200);
}

TEST_F(CiliumClientTest, DeleteEndpoint) {
  create(kAllocId, "10.200.3.17");
  CurlCiliumClient client(config());
  ASSERT_TRUE(client.delete_endpoint(attach(kAllocId), soon()));
  EXPECT_FALSE(agent_->endpoint(attach(kAllocId).to_string()).has_value());
}

TEST_F(CiliumClientTest, RateLimitedPatchBacksOffByTheAgentsHintThenSucceeds) {
  create(kAllocId, "10.200.3.17");
  ManualClock clock;
  auto cfg = config();
  cfg.retry.base_delay = 1ms;  // so the wait is the agent's hint, not our own backoff
  CurlCiliumClient client(cfg, clock);
  agent_->inject_fault(FaultRule::fail(
      "PATCH", "/endpoint/{id}/labels", 429, 2,
      R"j("request would have to wait 2s to be served (maximum wait duration: 15s)")j"));
  auto run = std::async(std::launch::async, [&] {
    return client.set_user_labels(attach(kAllocId), {"nomad:job=web"}, clock.now() + 1min);
  });
  for (int i = 1; i <= 2; ++i) {
    ASSERT_TRUE(eventually([&] {
      return clock.sleepers() == 1 && agent_->count("PATCH", "/endpoint/{id}/labels") == i;
    }));
    clock.advance(1900ms);
    EXPECT_EQ(run.wait_for(20ms), std::future_status::timeout);  // the hint is 2 s
    EXPECT_EQ(agent_->count("PATCH", "/endpoint/{id}/labels"), i);
    clock.advance(200ms);
  }
  auto r = run.get();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(agent_->count("PATCH", "/endpoint/{id}/labels"), 3);
}

TEST_F(CiliumClientTest, RateLimitIsRetriedPastMaxAttemptsButNotPastTheDeadline) {
  create(kAllocId, "10.200.3.17");
  ManualClock clock;
  ClockPump pump(clock, 1s, ClockPump::Mode::on_sleep);
  auto cfg = config();
  cfg.retry.max_attempts = 2;
  CurlCiliumClient client(cfg, clock);
  agent_->inject_fault(FaultRule::fail(
      "PATCH", "/endpoint/{id}", 429, -1,
      R"j("request would have to wait 3s to be served (maximum wait duration: 15s)")j"));
  auto r = client.replace_identity_labels(attach(kAllocId), {"nomad:job=web"}, clock.now() + 30s);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().status, 429);
  EXPECT_EQ(r.error().message,
            "request would have to wait 3s to be served (maximum wait duration: 15s)");
  const int n = agent_->count("PATCH", "/endpoint/{id}");
  EXPECT_GT(n, 2);   // beyond max_attempts: 429 is retried until the deadline
  EXPECT_LE(n, 11);  // but at most one try per >= 3 s within 30 s
}

TEST_F(CiliumClientTest, ServerErrorsAreRetriedUpToMaxAttempts) {
  create(kAllocId, "10.200.3.17");
  ManualClock clock;
  ClockPump pump(clock, 10s, ClockPump::Mode::on_sleep);
  auto cfg = config();
  cfg.retry.max_attempts = 3;
  CurlCiliumClient client(cfg, clock);
  agent_->inject_fault(FaultRule::fail("GET", "/endpoint/{id}", 503, 2, R"("api not ready")"));
  auto ep = client.endpoint(attach(kAllocId), clock.now() + 1min);
  ASSERT_TRUE(ep) << ep.error().message;
  EXPECT_EQ(agent_->count("GET", "/endpoint/{id}"), 3);

  agent_->clear_requests();
  agent_->inject_fault(FaultRule::fail("GET", "/endpoint/{id}", 503, -1, R"("api not ready")"));
  auto failed = client.endpoint(attach(kAllocId), clock.now() + 1min);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().status, 503);
  EXPECT_EQ(failed.error().message, "api not ready");
  EXPECT_EQ(agent_->count("GET", "/endpoint/{id}"), 3);
}

TEST_F(CiliumClientTest, DroppedConnectionIsRetried) {
  create(kAllocId, "10.200.3.17");
  ManualClock clock;
  ClockPump pump(clock, 10s, ClockPump::Mode::on_sleep);
  CurlCiliumClient client(config(), clock);
  agent_->inject_fault(FaultRule::drop("DELETE", "/endpoint/{id}"));
  ASSERT_TRUE(client.delete_endpoint(attach(kAllocId), clock.now() + 1min));
  EXPECT_EQ(agent_->count("DELETE", "/endpoint/{id}"), 2);
}

TEST_F(CiliumClientTest, HungAgentIsBoundedByTheDeadline) {
  create(kAllocId, "10.200.3.17");
  CurlCiliumClient client(config());
  agent_->set_stall(true);
  const auto start = std::chrono::steady_clock::now();
  auto r = client.endpoint(attach(kAllocId), system_clock().now() + 300ms);
  const auto took = std::chrono::steady_clock::now() - start;
  agent_->set_stall(false);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().status, 0);
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 10s);
}

}  // namespace
}  // namespace cn::cilium
