// The per-service VIP variables a job's template reads, against the fake Nomad through the real
// client: the items written, no write when nothing changed, a foreign variable left alone, a
// conflict settled on the next call, deletion only of our own variable with that VIP, the owner
// rule, and a namespace the token may not write stopping no other.
#include "labeler/services/service_vip_variables.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "common/nomad/client/curl_nomad_client.h"
#include "tests/fakes/nomad/fake_nomad.h"

namespace cn::labeler {
namespace {

using namespace std::chrono_literals;

using Items = std::map<std::string, std::string>;

class ServiceVipVariablesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fakes::FakeNomadConfig cfg;
    fake_ = std::make_unique<fakes::FakeNomad>(cfg);
    ASSERT_TRUE(fake_->start());
    client_ = client("");
    vars_ = std::make_unique<ServiceVipVariables>(*client_, *client_);
  }
  void TearDown() override { fake_->stop(); }

  std::unique_ptr<nomad::CurlNomadClient> client(const std::string& token) {
    nomad::NomadClientConfig c;
    c.address = fake_->address();
    c.token = token;
    c.retry_seed = 1;
    auto made = nomad::CurlNomadClient::create(std::move(c));
    EXPECT_TRUE(made) << made.error().message;
    return std::move(*made);
  }
  static Deadline soon() { return Deadline{system_clock().now() + 10s}; }
  static ServiceVipWant want(std::string ns, std::string name, std::string_view vip,
                             std::vector<LbPort> ports = {{"http", 8080, LbProtocol::tcp}}) {
    return ServiceVipWant{std::move(ns), std::move(name), *parse_ip_address(vip), std::move(ports)};
  }
  Items stored(const std::string& ns, const std::string& name) const {
    auto v = fake_->variable(ns, "cilium-nomad/vip/" + name);
    return v ? Items(v->items.begin(), v->items.end()) : Items{};
  }
  ServiceVipSyncReport sync(const std::vector<ServiceVipWant>& wanted) {
    auto report = vars_->sync(wanted, soon());
    EXPECT_TRUE(report) << report.error().message;
    return report.value_or(ServiceVipSyncReport{});
  }

  std::unique_ptr<fakes::FakeNomad> fake_;
  std::unique_ptr<nomad::CurlNomadClient> client_;
  std::unique_ptr<ServiceVipVariables> vars_;
};

TEST_F(ServiceVipVariablesTest, WritesVipPortsAndServiceInTheServicesNamespace) {
  auto report = sync({want("prod", "api", "10.96.0.17",
                           {{"http", 8080, LbProtocol::tcp}, {"", 9090, LbProtocol::udp}}),
                      want("default", "web", "fd00:96::5")});
  EXPECT_EQ(report.written, 2);
  EXPECT_TRUE(report.failures.empty());
  EXPECT_EQ(stored("prod", "api"), (Items{{"vip", "10.96.0.17"},
                                          {"port_http", "8080"},
                                          {"port", "9090"},
                                          {"service", "prod/api"}}));
  EXPECT_EQ(stored("default", "web"),
            (Items{{"vip", "fd00:96::5"}, {"port_http", "8080"}, {"service", "default/web"}}));
  EXPECT_FALSE(fake_->variable("default", "cilium-nomad/vip/api"));
}

TEST_F(ServiceVipVariablesTest, NothingChangedMeansNoRequestAtAll) {
  const std::vector<ServiceVipWant> wanted{want("prod", "api", "10.96.0.17")};
  sync(wanted);
  const auto index = fake_->variable("prod", "cilium-nomad/vip/api")->modify_index;
  fake_->clear_requests();
  auto report = sync(wanted);
  EXPECT_EQ(report.written, 0);
  EXPECT_EQ(fake_->request_count("variable"), 0);
  EXPECT_EQ(fake_->variable("prod", "cilium-nomad/vip/api")->modify_index, index);
}

TEST_F(ServiceVipVariablesTest, AVariableWrittenBeforeARestartIsReadOnceAndNotRewritten) {
  sync({want("prod", "api", "10.96.0.17")});
  ServiceVipVariables restarted(*client_, *client_);
  fake_->clear_requests();
  auto report = restarted.sync({want("prod", "api", "10.96.0.17")}, soon());
  ASSERT_TRUE(report);
  EXPECT_EQ(report->written, 0);
  EXPECT_EQ(fake_->request_count("variable"), 1);  // the GET, no PUT
}

TEST_F(ServiceVipVariablesTest, ANewVipOrPortRewritesTheVariable) {
  sync({want("prod", "api", "10.96.0.17")});
  EXPECT_EQ(sync({want("prod", "api", "10.96.0.18")}).written, 1);
  EXPECT_EQ(stored("prod", "api").at("vip"), "10.96.0.18");
  EXPECT_EQ(sync({want("prod", "api", "10.96.0.18", {{"grpc", 9000, LbProtocol::tcp}})}).written,
            1);
  EXPECT_EQ(stored("prod", "api"),
            (Items{{"vip", "10.96.0.18"}, {"port_grpc", "9000"}, {"service", "prod/api"}}));
}

TEST_F(ServiceVipVariablesTest, AForeignVariableIsLeftAloneAndReported) {
  ASSERT_TRUE(fake_->put_variable("prod", "cilium-nomad/vip/api", {{"vip", "192.0.2.1"}}));
  ASSERT_TRUE(fake_->put_variable("prod", "cilium-nomad/vip/db",
                                  {{"vip", "192.0.2.2"}, {"service", "prod/other"}}));
  auto report = sync({want("prod", "api", "10.96.0.17"), want("prod", "db", "10.96.0.19"),
                      want("prod", "web", "10.96.0.20")});
  EXPECT_EQ(report.written, 1);  // web only
  ASSERT_EQ(report.failures.size(), 2u);
  for (const auto& f : report.failures) {
    EXPECT_TRUE(f.foreign) << f.name;
    EXPECT_EQ(f.nomad_namespace, "prod");
  }
  EXPECT_EQ(report.failures[0].name, "api");
  EXPECT_NE(report.failures[1].reason.find("prod/other"), std::string::npos)
      << report.failures[1].reason;
  EXPECT_EQ(stored("prod", "api"), (Items{{"vip", "192.0.2.1"}}));
  EXPECT_EQ(stored("prod", "db").at("vip"), "192.0.2.2");

  // Once its writer removes it, the next call writes ours.
  fake_->delete_variable("prod", "cilium-nomad/vip/api");
  report = sync({want("prod", "api", "10.96.0.17"), want("prod", "db", "10.96.0.19"),
                 want("prod", "web", "10.96.0.20")});
  EXPECT_EQ(report.written, 1);
  EXPECT_EQ(report.failures.size(), 1u);
  EXPECT_EQ(stored("prod", "api").at("vip"), "10.96.0.17");
}

TEST_F(ServiceVipVariablesTest, AConflictIsSettledOnTheNextCall) {
  sync({want("prod", "api", "10.96.0.17")});
  // The previous owner, still a pass behind, writes its own view after ours.
  ASSERT_TRUE(
      fake_->put_variable("prod", "cilium-nomad/vip/api",
                          {{"vip", "10.96.0.17"}, {"port_http", "8081"}, {"service", "prod/api"}}));
  auto report = sync({want("prod", "api", "10.96.0.18")});
  EXPECT_EQ(report.written, 0);
  EXPECT_EQ(report.conflicts, 1);
  EXPECT_TRUE(report.failures.empty());
  EXPECT_EQ(stored("prod", "api").at("port_http"), "8081");

  fake_->clear_requests();
  report = sync({want("prod", "api", "10.96.0.18")});
  EXPECT_EQ(report.written, 1);
  EXPECT_EQ(fake_->request_count("variable"), 1);  // Nomad's copy was kept: no GET
  EXPECT_EQ(stored("prod", "api"),
            (Items{{"vip", "10.96.0.18"}, {"port_http", "8080"}, {"service", "prod/api"}}));
}

TEST_F(ServiceVipVariablesTest, AServiceNoLongerOwnedIsForgottenNotDeleted) {
  sync({want("prod", "api", "10.96.0.17")});
  sync({});
  EXPECT_EQ(stored("prod", "api").at("vip"), "10.96.0.17");
  // Owned again later: read afresh, since another node may have written it meanwhile.
  fake_->clear_requests();
  sync({want("prod", "api", "10.96.0.17")});
  EXPECT_EQ(fake_->request_count("variable"), 1);
}

TEST_F(ServiceVipVariablesTest, RemoveDeletesOnlyOurVariableWithThatVip) {
  sync({want("prod", "api", "10.96.0.17"), want("prod", "web", "10.96.0.20")});
  ASSERT_TRUE(fake_->put_variable("prod", "cilium-nomad/vip/db", {{"vip", "10.96.0.19"}}));
  const auto vip = [](std::string_view text) { return *parse_ip_address(text); };

  // Another address than the one freed: the service has moved on, the variable stays.
  ASSERT_TRUE(vars_->remove("prod", "web", vip("10.96.0.99"), soon()));
  EXPECT_FALSE(stored("prod", "web").empty());
  // Not ours (no service item): stays, even with that VIP.
  ASSERT_TRUE(vars_->remove("prod", "db", vip("10.96.0.19"), soon()));
  EXPECT_FALSE(stored("prod", "db").empty());
  // Another service's name under that path: stays.
  ASSERT_TRUE(fake_->put_variable("prod", "cilium-nomad/vip/db",
                                  {{"vip", "10.96.0.19"}, {"service", "prod/other"}}));
  ASSERT_TRUE(vars_->remove("prod", "db", vip("10.96.0.19"), soon()));
  EXPECT_FALSE(stored("prod", "db").empty());
  // Ours with that VIP: deleted; a second call finds nothing, which is success.
  ASSERT_TRUE(vars_->remove("prod", "api", vip("10.96.0.17"), soon()));
  EXPECT_FALSE(fake_->variable("prod", "cilium-nomad/vip/api"));
  ASSERT_TRUE(vars_->remove("prod", "api", vip("10.96.0.17"), soon()));
  // Another namespace's service of the same name is another variable.
  ASSERT_TRUE(vars_->remove("default", "web", vip("10.96.0.20"), soon()));
  EXPECT_FALSE(stored("prod", "web").empty());
}

TEST_F(ServiceVipVariablesTest, OwnerIsTheNodeOfTheSmallestAllocation) {
  auto reg = [](std::string ns, std::string name, std::string alloc, std::string node) {
    nomad::ServiceRegistration r;
    r.nomad_namespace = std::move(ns);
    r.service_name = std::move(name);
    r.alloc_id = std::move(alloc);
    r.node_id = std::move(node);
    return r;
  };
  const std::vector<nomad::ServiceRegistration> regs{
      reg("prod", "api", "c0000000", "node-1"), reg("prod", "api", "a0000000", "node-2"),
      reg("prod", "api", "b0000000", "node-1"), reg("prod", "web", "d0000000", "node-1"),
      reg("dev", "api", "00000000", "node-1"),  reg("prod", "db", "e0000000", "node-3"),
  };
  using Owned = std::set<std::pair<std::string, std::string>>;
  EXPECT_EQ(owned_services(regs, "node-1"), (Owned{{"dev", "api"}, {"prod", "web"}}));
  EXPECT_EQ(owned_services(regs, "node-2"), (Owned{{"prod", "api"}}));
  EXPECT_EQ(owned_services(regs, "node-4"), Owned{});
  // The order registrations arrive in does not matter.
  auto reversed = regs;
  std::reverse(reversed.begin(), reversed.end());
  EXPECT_EQ(owned_services(reversed, "node-2"), (Owned{{"prod", "api"}}));
}

TEST_F(ServiceVipVariablesTest, ANamespaceTheTokenMayNotWriteStopsNoOther) {
  auto token = fakes::token_with_policy("labeler", R"(
namespace "*" {
  capabilities = ["read-job"]
  variables {
    path "cilium-nomad/vip/*" {
      capabilities = ["read", "write", "destroy"]
    }
  }
}
namespace "locked" {
  capabilities = ["read-job"]
  variables {
    path "cilium-nomad/vip/*" {
      capabilities = ["deny"]
    }
  }
}
)");
  ASSERT_TRUE(token) << token.error().message;
  fake_->add_token(*token);
  fake_->set_acl_enabled(true);
  auto labeler = client("labeler");
  ServiceVipVariables vars(*labeler, *labeler);
  auto report = vars.sync({want("locked", "api", "10.96.0.17"), want("prod", "api", "10.96.0.18"),
                           want("default", "web", "10.96.0.19")},
                          soon());
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->written, 2);
  ASSERT_EQ(report->failures.size(), 1u);
  EXPECT_EQ(report->failures[0].nomad_namespace, "locked");
  EXPECT_FALSE(report->failures[0].foreign);
  EXPECT_NE(report->failures[0].reason.find("permission"), std::string::npos)
      << report->failures[0].reason;
  EXPECT_EQ(stored("prod", "api").at("vip"), "10.96.0.18");
  EXPECT_EQ(stored("default", "web").at("vip"), "10.96.0.19");
}

TEST_F(ServiceVipVariablesTest, AnUnreachableNomadIsAnError) {
  fake_->stop();
  nomad::NomadClientConfig c;
  c.address = fake_->address();
  c.retry_seed = 1;
  auto down = std::move(*nomad::CurlNomadClient::create(std::move(c)));
  ServiceVipVariables vars(*down, *down);
  auto report = vars.sync({want("prod", "api", "10.96.0.17")}, Deadline{system_clock().now() + 2s});
  ASSERT_FALSE(report);
  EXPECT_TRUE(report.error().kind == ErrorKind::transport ||
              report.error().kind == ErrorKind::timeout)
      << report.error().message;
}

}  // namespace
}  // namespace cn::labeler
