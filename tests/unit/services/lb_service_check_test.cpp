// The gate before the state file: what is left out, why, and that the rest still lands.
#include "labeler/services/lb_service_check.h"

#include <gtest/gtest.h>

#include "tests/unit/services/lb_service_test_support.h"

namespace cn::labeler {
namespace {

using testing::backend;
using testing::ip;
using testing::service;

std::vector<std::string> names(const LbCheckResult& r) {
  std::vector<std::string> out;
  for (const auto& s : r.services) out.push_back(s.nomad_namespace + "/" + s.name);
  return out;
}

TEST(LbServiceCheck, ABadServiceIsLeftOutWithItsReasonAndTheOthersLand) {
  auto bad_name = service("default", "web_api", "10.96.0.3", 80);
  auto bad_port = service("default", "db", "10.96.0.4", 70000);
  auto no_ports = service("default", "queue", "10.96.0.5", 80);
  no_ports.ports.clear();
  auto good = service("default", "api", "10.96.0.2", 80, {backend("a1", "10.200.0.5", 8080)});
  auto r = check_lb_services({bad_name, bad_port, no_ports, good}, {});
  EXPECT_EQ(names(r), (std::vector<std::string>{"default/api"}));
  ASSERT_EQ(r.problems.size(), 3u);
  EXPECT_EQ(r.problems[0].name, "db");
  EXPECT_EQ(r.problems[0].reason, "port http is 70000, outside 1..65535");
  EXPECT_EQ(r.problems[1].name, "queue");
  EXPECT_EQ(r.problems[1].reason, "no port to serve");
  EXPECT_EQ(r.problems[2].name, "web_api");
  EXPECT_TRUE(r.problems[2].alloc_id.empty());
}

TEST(LbServiceCheck, NomadServiceNamesFollowNomadsOwnRule) {
  for (const char* ok : {"a", "api", "Api-2", "0web"}) {
    EXPECT_TRUE(is_nomad_service_name(ok)) << ok;
  }
  EXPECT_TRUE(is_nomad_service_name(std::string(63, 'a')));
  for (const char* bad : {"", "-api", "api-", "a_b", "a.b", "a b", "a/b"}) {
    EXPECT_FALSE(is_nomad_service_name(bad)) << bad;
  }
  EXPECT_FALSE(is_nomad_service_name(std::string(64, 'a')));
}

TEST(LbServiceCheck, ABadBackendIsLeftOutAndItsServiceStays) {
  auto s = service("default", "api", "10.96.0.2", 80,
                   {backend("a1", "10.200.0.5", 8080), backend("a2", "fd00::5", 8080),
                    backend("a3", "127.0.0.1", 8080), backend("a4", "10.96.0.9", 8080),
                    backend("a5", "10.200.0.6", 0), backend("a6", "10.200.0.7", 8080),
                    backend("a7", "0.0.0.0", 8080)});
  s.backends[5].ports[0].name = "admin";
  LbCheckOptions options;
  options.vip_ranges = {*parse_ip_prefix("10.96.0.0/16")};
  auto r = check_lb_services({s}, options);
  ASSERT_EQ(r.services.size(), 1u);
  ASSERT_EQ(r.services[0].backends.size(), 1u);
  EXPECT_EQ(r.services[0].backends[0].alloc_id, "a1");
  std::vector<std::string> reasons;
  for (const auto& p : r.problems) reasons.push_back(p.alloc_id + ": " + p.reason);
  EXPECT_EQ(reasons, (std::vector<std::string>{
                         "a2: address fd00::5 is not of the virtual IP's family",
                         "a3: address 127.0.0.1 is unspecified, loopback, multicast or broadcast",
                         "a4: address 10.96.0.9 lies in the virtual IP range",
                         "a5: port http is 0, outside 1..65535",
                         "a6: port label \"admin\" is not one of the service's ports",
                         "a7: address 0.0.0.0 is unspecified, loopback, multicast or broadcast"}));
}

TEST(LbServiceCheck, TwoServicesOnOneFrontendTheFirstByNameKeepsIt) {
  // The agent rejects a whole file with a frontend conflict; here the second service goes.
  auto r = check_lb_services(
      {service("default", "web", "10.96.0.2", 80), service("default", "api", "10.96.0.2", 80)}, {});
  EXPECT_EQ(names(r), (std::vector<std::string>{"default/api"}));
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].reason, "frontend 10.96.0.2:80/TCP is already default/api's");
}

TEST(LbServiceCheck, ASharedBackendStaysInOneServiceUnlessTheAgentIsSafe) {
  auto api = service("default", "api", "10.96.0.2", 80, {backend("a1", "10.200.0.5", 8080)});
  auto api2 = service("default", "api2", "10.96.0.3", 80, {backend("a1", "10.200.0.5", 8080)});
  auto old_agents = check_lb_services({api, api2}, {});
  ASSERT_EQ(old_agents.services.size(), 2u);
  EXPECT_EQ(old_agents.services[0].backends.size(), 1u);
  EXPECT_TRUE(old_agents.services[1].backends.empty());
  ASSERT_EQ(old_agents.problems.size(), 1u);
  EXPECT_EQ(old_agents.problems[0].name, "api2");
  EXPECT_NE(old_agents.problems[0].reason.find("cilium/cilium#46493"), std::string::npos);

  LbCheckOptions safe;
  safe.shared_backends_safe = true;
  auto new_agents = check_lb_services({api, api2}, safe);
  EXPECT_TRUE(new_agents.problems.empty());
  EXPECT_EQ(new_agents.services[1].backends.size(), 1u);
}

TEST(LbServiceCheck, PortsOfOneServiceMustBeDistinctAndNamedWhenSeveral) {
  auto twice = service("default", "api", "10.96.0.2", 80);
  twice.ports.push_back({"admin", 80, LbProtocol::tcp});
  auto unnamed = service("default", "db", "10.96.0.3", 80);
  unnamed.ports.push_back({"", 81, LbProtocol::tcp});
  auto udp_too = service("default", "dns", "10.96.0.4", 53);
  udp_too.ports = {{"dns", 53, LbProtocol::tcp}, {"dns-udp", 53, LbProtocol::udp}};
  auto r = check_lb_services({twice, unnamed, udp_too}, {});
  EXPECT_EQ(names(r), (std::vector<std::string>{"default/dns"}));
  ASSERT_EQ(r.problems.size(), 2u);
  EXPECT_EQ(r.problems[0].reason, "port 80/TCP appears twice");
  EXPECT_EQ(r.problems[1].reason, "a port without a label among several");
}

TEST(LbServiceCheck, OutputIsSortedSoEveryNodeWritesTheSameFile) {
  auto r1 = check_lb_services(
      {service("b", "x", "10.96.0.2", 80,
               {backend("a2", "10.200.0.6", 8080), backend("a1", "10.200.0.5", 8080)}),
       service("a", "y", "10.96.0.3", 80)},
      {});
  auto r2 = check_lb_services(
      {service("a", "y", "10.96.0.3", 80),
       service("b", "x", "10.96.0.2", 80,
               {backend("a1", "10.200.0.5", 8080), backend("a2", "10.200.0.6", 8080)})},
      {});
  EXPECT_EQ(r1.services, r2.services);
  EXPECT_EQ(names(r1), (std::vector<std::string>{"a/y", "b/x"}));
  EXPECT_EQ(r1.services[1].backends[0].alloc_id, "a1");
}

}  // namespace
}  // namespace cn::labeler
