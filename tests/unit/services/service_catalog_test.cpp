// From registrations, allocations, health and VIPs to load-balancer services.
#include "labeler/services/service_catalog.h"

#include <gtest/gtest.h>

#include "tests/unit/services/lb_service_test_support.h"

namespace cn::labeler {
namespace {

using testing::ip;
using testing::registration;

constexpr const char* kAllocA = "4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11";
constexpr const char* kAllocB = "9c2e1d3f-0000-4000-8000-00000000000b";

nomad::Allocation alloc(const char* id, const char* cilium_ip, std::int64_t host_port,
                        std::int64_t to) {
  nomad::Allocation a;
  a.id = id;
  a.client_status = "running";
  a.desired_status = "run";
  a.network_status = nomad::NetworkStatus{"eth0", cilium_ip, ""};
  a.ports = {{"http", host_port, to, "10.0.1.15"}};
  return a;
}

CatalogInput input_with(std::vector<nomad::ServiceRegistration> regs) {
  CatalogInput in;
  in.registrations = std::move(regs);
  in.allocations[kAllocA] = alloc(kAllocA, "10.200.3.17", 25431, 8080);
  in.allocations[kAllocB] = alloc(kAllocB, "10.200.4.9", 27002, 8080);
  in.vips["default/web"] = ip("10.96.0.7");
  in.health[instance_health_key(kAllocA, "web")] = {BackendState::ready, ""};
  in.health[instance_health_key(kAllocB, "web")] = {BackendState::not_ready,
                                                    "check web-alive: failure"};
  return in;
}

TEST(ServiceCatalog, PortLabelComesFromTheRegistrationId) {
  auto r = registration(kAllocA, "10.200.3.17", 8080, "my-web", "http");
  EXPECT_EQ(port_label_of(r), "http");
  r.id = std::string("_nomad-task-") + kAllocA + "-server-my-web-";  // a service without a label
  EXPECT_EQ(port_label_of(r), "");
}

TEST(ServiceCatalog, AllocModeServesTheCiliumIpsOnTheToPort) {
  auto catalog = build_catalog(input_with(
      {registration(kAllocA, "10.200.3.17", 8080), registration(kAllocB, "10.200.4.9", 8080)}));
  ASSERT_TRUE(catalog.problems.empty()) << catalog.problems[0].reason;
  ASSERT_EQ(catalog.services.size(), 1u);
  const LbService& s = catalog.services[0];
  EXPECT_EQ(s.vip, ip("10.96.0.7"));
  EXPECT_EQ(s.ports, (std::vector<LbPort>{{"http", 8080, LbProtocol::tcp}}));
  ASSERT_EQ(s.backends.size(), 2u);
  EXPECT_EQ(s.backends[0].address, ip("10.200.3.17"));
  EXPECT_EQ(s.backends[0].state, BackendState::ready);
  EXPECT_EQ(s.backends[1].state, BackendState::not_ready);
  EXPECT_EQ(s.backends[1].state_reason, "check web-alive: failure");
  ASSERT_EQ(catalog.described.size(), 1u);
  EXPECT_EQ(catalog.described[0].modes.at(AddressMode::alloc), 2);
}

TEST(ServiceCatalog, HostModeServesHostPortsBehindTheToPort) {
  // address_mode "auto" on a CNI allocation: Nomad registers the host IP and the dynamic host
  // port; the VIP still listens on the port inside the allocation, the same for every instance.
  auto catalog = build_catalog(input_with(
      {registration(kAllocA, "10.0.1.15", 25431), registration(kAllocB, "10.0.1.16", 27002)}));
  ASSERT_EQ(catalog.services.size(), 1u);
  const LbService& s = catalog.services[0];
  EXPECT_EQ(s.ports, (std::vector<LbPort>{{"http", 8080, LbProtocol::tcp}}));
  EXPECT_EQ(s.backends[0].ports, (std::vector<LbPort>{{"http", 25431, LbProtocol::tcp}}));
  EXPECT_EQ(s.backends[1].ports, (std::vector<LbPort>{{"http", 27002, LbProtocol::tcp}}));
  EXPECT_EQ(catalog.described[0].modes.at(AddressMode::host), 1);
  EXPECT_EQ(catalog.described[0].modes.at(AddressMode::other), 1);  // 10.0.1.16 is not its host
}

TEST(ServiceCatalog, AnInstanceWithoutHealthIsNotReadyAndSaysWhy) {
  auto in = input_with({registration(kAllocA, "10.200.3.17", 8080)});
  in.health.clear();
  auto catalog = build_catalog(in);
  ASSERT_EQ(catalog.services.size(), 1u);
  EXPECT_EQ(catalog.services[0].backends[0].state, BackendState::not_ready);
  EXPECT_EQ(catalog.services[0].backends[0].state_reason, "no check results from its node yet");
}

TEST(ServiceCatalog, AStoppingAllocationIsNoBackend) {
  auto in = input_with(
      {registration(kAllocA, "10.200.3.17", 8080), registration(kAllocB, "10.200.4.9", 8080)});
  in.allocations[kAllocB].desired_status = "stop";
  auto catalog = build_catalog(in);
  ASSERT_EQ(catalog.services.size(), 1u);
  ASSERT_EQ(catalog.services[0].backends.size(), 1u);
  EXPECT_EQ(catalog.services[0].backends[0].alloc_id, kAllocA);

  in.allocations[kAllocA].client_status = "complete";
  auto none = build_catalog(in);
  EXPECT_TRUE(none.services.empty());
  ASSERT_EQ(none.problems.size(), 1u);
  EXPECT_EQ(none.problems[0].reason, "no instance is running");
}

TEST(ServiceCatalog, BadAddressesAndMissingVipsAreReportedPerServiceOrInstance) {
  auto in = input_with({registration(kAllocA, "web.example.com", 8080),
                        registration(kAllocB, "10.200.4.9", 8080),
                        registration(kAllocA, "10.200.3.17", 5432, "db", "pg")});
  auto catalog = build_catalog(in);
  ASSERT_EQ(catalog.services.size(), 1u);
  EXPECT_EQ(catalog.services[0].name, "web");
  ASSERT_EQ(catalog.services[0].backends.size(), 1u);
  ASSERT_EQ(catalog.problems.size(), 2u);
  EXPECT_EQ(catalog.problems[0].name, "db");
  EXPECT_EQ(catalog.problems[0].reason, "no virtual IP assigned yet");
  EXPECT_EQ(catalog.problems[1].alloc_id, kAllocA);
  EXPECT_EQ(catalog.problems[1].reason, "address \"web.example.com\" is not an IP address");
}

TEST(ServiceCatalog, TwoLabelsOfOneInstanceAreOneBackendWithTwoPorts) {
  auto in = input_with({registration(kAllocA, "10.200.3.17", 8080),
                        registration(kAllocA, "10.200.3.17", 9090, "web", "admin")});
  in.allocations[kAllocA].ports.push_back({"admin", 26000, 9090, "10.0.1.15"});
  auto catalog = build_catalog(in);
  ASSERT_EQ(catalog.services.size(), 1u);
  EXPECT_EQ(catalog.services[0].ports, (std::vector<LbPort>{{"admin", 9090, LbProtocol::tcp},
                                                            {"http", 8080, LbProtocol::tcp}}));
  ASSERT_EQ(catalog.services[0].backends.size(), 1u);
  EXPECT_EQ(catalog.services[0].backends[0].ports.size(), 2u);
}

TEST(ServiceCatalog, TheCatalogPassesTheGate) {
  auto catalog = build_catalog(input_with(
      {registration(kAllocA, "10.200.3.17", 8080), registration(kAllocB, "10.200.4.9", 8080)}));
  auto checked = check_lb_services(catalog.services, {});
  EXPECT_TRUE(checked.problems.empty());
  EXPECT_EQ(checked.services, catalog.services);
}

}  // namespace
}  // namespace cn::labeler
