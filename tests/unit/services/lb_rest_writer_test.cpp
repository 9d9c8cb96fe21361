// LbRestWriter against the fake agent emulating 1.16 and 1.17 over its socket: one agent
// service per VIP:port, IDs reused, removed frontends deleted, foreign frontends never touched,
// and one refused service never blocking the others.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>

#include "common/cilium/client/curl_cilium_client.h"
#include "labeler/services/lb_rest_writer.h"
#include "tests/fakes/cilium/fake_cilium_agent.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/services/lb_service_test_support.h"

namespace cn::labeler {
namespace {

using namespace std::chrono_literals;
using fakes::CiliumVersion;
using fakes::FaultRule;
using testing::backend;
using testing::ip;
using testing::service;

class LbRestWriterTest : public ::testing::TestWithParam<CiliumVersion> {
 protected:
  void SetUp() override {
    fakes::FakeCiliumAgentConfig cfg;
    cfg.socket_path = dir_.file("cilium.sock");
    cfg.version = GetParam();
    agent_ = std::make_unique<fakes::FakeCiliumAgent>(cfg);
    agent_->start();
    cilium::CiliumClientConfig c;
    c.socket_path = cfg.socket_path;
    c.retry_seed = 1;
    c.retry.max_attempts = 1;  // an unreachable agent fails at once
    client_ = std::make_unique<cilium::CurlCiliumClient>(c);
    LbRestWriterOptions opts;
    opts.vip_ranges = {*parse_ip_prefix("10.96.0.0/24")};
    writer_ = std::make_unique<LbRestWriter>(*client_, opts);
  }
  void TearDown() override { agent_->stop(); }

  static Deadline soon() { return Deadline{system_clock().now() + 10s}; }

  // The agent's services by frontend "ip:port".
  std::map<std::string, cilium::ServiceSpec> served() {
    auto listed = client_->services(soon());
    EXPECT_TRUE(listed) << listed.error().message;
    std::map<std::string, cilium::ServiceSpec> out;
    if (!listed) return out;
    for (auto& s : *listed) {
      out[s.frontend.ip + ":" + std::to_string(s.frontend.port)] = s;
    }
    return out;
  }

  void apply_ok(const std::vector<LbService>& services, bool expect_written = true) {
    auto r = writer_->apply(services, soon());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(*r, expect_written);
    EXPECT_TRUE(writer_->last_report().failures.empty()) << writer_->last_report().failures.front();
  }

  static LbService two_ports() {
    auto api = service("prod", "api", "10.96.0.2", 80);
    api.ports.push_back({"grpc", 9090, LbProtocol::tcp});
    auto a1 = backend("a1", "10.200.0.5", 8080);
    a1.ports.push_back({"grpc", 9000, LbProtocol::tcp});
    a1.node_name = "node-1";
    auto a2 = backend("a2", "10.200.1.7", 8080, BackendState::not_ready);
    a2.ports.push_back({"grpc", 9000, LbProtocol::tcp});
    api.backends = {a1, a2};
    return api;
  }

  cn::testing::TempDir dir_;
  std::unique_ptr<fakes::FakeCiliumAgent> agent_;
  std::unique_ptr<cilium::CurlCiliumClient> client_;
  std::unique_ptr<LbRestWriter> writer_;
};

TEST_P(LbRestWriterTest, EachPortIsOneServiceWithItsOwnBackendPorts) {
  apply_ok({two_ports()});
  auto s = served();
  ASSERT_EQ(s.size(), 2u);
  const auto& http = s.at("10.96.0.2:80");
  const auto& grpc = s.at("10.96.0.2:9090");
  EXPECT_NE(http.id, grpc.id);
  EXPECT_EQ(http.frontend.protocol, "tcp");
  EXPECT_EQ(http.frontend.scope, "external");
  EXPECT_EQ(http.type, "ClusterIP");
  EXPECT_EQ(http.name, "api");
  EXPECT_EQ(http.nomad_namespace, "prod");
  ASSERT_EQ(grpc.backends.size(), 2u);
  std::map<std::string, cilium::ServiceBackend> by_ip;
  for (const auto& b : grpc.backends) by_ip[b.ip] = b;
  EXPECT_EQ(by_ip.at("10.200.0.5").port, 9000);
  EXPECT_EQ(by_ip.at("10.200.0.5").state, "active");
  EXPECT_EQ(by_ip.at("10.200.0.5").weight, 100);
  EXPECT_EQ(by_ip.at("10.200.0.5").node_name, "node-1");
  EXPECT_EQ(by_ip.at("10.200.1.7").state, "maintenance");
  EXPECT_EQ(by_ip.at("10.200.1.7").weight, 100);
  EXPECT_EQ(writer_->last_report().written, 2);
}

TEST_P(LbRestWriterTest, AnUpdateKeepsTheIdsAndWritesOnlyWhatChanged) {
  apply_ok({two_ports()});
  auto before = served();
  agent_->clear_requests();

  apply_ok({two_ports()}, /*expect_written=*/false);
  EXPECT_EQ(agent_->count("PUT", "/service/{id}"), 0);
  EXPECT_EQ(writer_->last_report().unchanged, 2);

  auto changed = two_ports();
  changed.backends[1].state = BackendState::ready;
  apply_ok({changed});
  EXPECT_EQ(agent_->count("PUT", "/service/{id}"), 2);
  auto after = served();
  EXPECT_EQ(after.at("10.96.0.2:80").id, before.at("10.96.0.2:80").id);
  EXPECT_EQ(after.at("10.96.0.2:9090").id, before.at("10.96.0.2:9090").id);
  for (const auto& b : after.at("10.96.0.2:80").backends) EXPECT_EQ(b.state, "active");
}

TEST_P(LbRestWriterTest, ARemovedServiceOrPortIsDeleted) {
  auto web = service("prod", "web", "10.96.0.3", 443, {backend("w1", "10.200.0.9", 8443)});
  apply_ok({two_ports(), web});
  ASSERT_EQ(served().size(), 3u);

  auto one_port = two_ports();
  one_port.ports.pop_back();
  apply_ok({one_port});
  auto s = served();
  EXPECT_EQ(s.size(), 1u);
  EXPECT_TRUE(s.contains("10.96.0.2:80"));
  EXPECT_EQ(writer_->last_report().deleted, 2);

  apply_ok({});
  EXPECT_TRUE(served().empty());
}

TEST_P(LbRestWriterTest, AFrontendOutsideTheVipRangeIsNeverTouched) {
  cilium::ServiceSpec foreign;
  foreign.id = 1;
  foreign.frontend = {"10.0.0.10", 53, "udp", "external"};
  foreign.backends = {{"10.0.1.1", 53, "UDP", "active", 100, ""}};
  foreign.type = "ClusterIP";
  foreign.name = "dns";
  foreign.nomad_namespace = "kube-system";
  foreign.ext_traffic_policy = "Cluster";
  foreign.int_traffic_policy = "Cluster";
  ASSERT_TRUE(client_->put_service(foreign, soon()));

  apply_ok({two_ports()});
  auto s = served();
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s.at("10.0.0.10:53").id, 1);
  // New IDs skip the one the agent already uses.
  EXPECT_NE(s.at("10.96.0.2:80").id, 1);
  EXPECT_NE(s.at("10.96.0.2:9090").id, 1);

  apply_ok({});
  s = served();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s.at("10.0.0.10:53").id, 1);
  EXPECT_EQ(agent_->count("DELETE", ""), 2);
}

TEST_P(LbRestWriterTest, AnOwnedServiceLeftByAnEarlierRunIsAdoptedUnderItsId) {
  cilium::ServiceSpec stale;
  stale.id = 4242;
  stale.frontend = {"10.96.0.2", 80, "tcp", "external"};
  stale.type = "ClusterIP";
  stale.ext_traffic_policy = "Cluster";
  stale.int_traffic_policy = "Cluster";
  auto put = client_->put_service(stale, soon());
  ASSERT_TRUE(put) << put.error().message;

  apply_ok({two_ports()});
  auto s = served();
  EXPECT_EQ(s.at("10.96.0.2:80").id, 4242);
  EXPECT_EQ(s.at("10.96.0.2:80").backends.size(), 2u);
}

TEST_P(LbRestWriterTest, ARefusedServiceDoesNotBlockTheOthers) {
  auto web = service("prod", "web", "10.96.0.3", 443, {backend("w1", "10.200.0.9", 8443)});
  auto outside = service("prod", "stray", "10.97.0.1", 80);
  agent_->inject_fault(FaultRule::fail("PUT", "/service/{id}", 461, 1));

  auto r = writer_->apply({two_ports(), web, outside}, soon());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(*r);
  const auto& report = writer_->last_report();
  ASSERT_EQ(report.failures.size(), 2u);
  EXPECT_NE(report.failures[0].find("10.97.0.1 (prod/stray)"), std::string::npos)
      << report.failures[0];
  EXPECT_NE(report.failures[1].find("PUT 10.96.0.2:80/tcp (prod/api)"), std::string::npos)
      << report.failures[1];
  EXPECT_EQ(report.written, 2);
  auto s = served();
  EXPECT_FALSE(s.contains("10.96.0.2:80"));
  EXPECT_TRUE(s.contains("10.96.0.2:9090"));
  EXPECT_TRUE(s.contains("10.96.0.3:443"));

  // The next apply writes what was refused.
  r = writer_->apply({two_ports(), web}, soon());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(writer_->last_report().failures.empty());
  EXPECT_TRUE(served().contains("10.96.0.2:80"));
}

TEST_P(LbRestWriterTest, AFrontendTheAgentHoldsUnderAnotherIdIsWrittenThere) {
  // As the agent answers when the frontend appeared under ID 9 after the list was read.
  agent_->inject_fault(FaultRule::fail(
      "PUT", "/service/{id}", 460, 1,
      std::string("\"the service provided is already registered with ID 9, please use that ID "
                  "instead of 1\"\n")));
  apply_ok({service("prod", "web", "10.96.0.3", 443, {backend("w1", "10.200.0.9", 8443)})});
  EXPECT_EQ(served().at("10.96.0.3:443").id, 9);
}

TEST_P(LbRestWriterTest, AnUnreachableAgentIsAnError) {
  agent_->stop();
  auto r = writer_->apply({two_ports()}, soon());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::transport) << r.error().message;
}

INSTANTIATE_TEST_SUITE_P(Agents, LbRestWriterTest,
                         ::testing::Values(CiliumVersion::v1_16, CiliumVersion::v1_17),
                         [](const auto& param_info) {
                           auto name = fakes::to_string(param_info.param);
                           std::replace(name.begin(), name.end(), '.', '_');
                           return "v" + name;
                         });

}  // namespace
}  // namespace cn::labeler
