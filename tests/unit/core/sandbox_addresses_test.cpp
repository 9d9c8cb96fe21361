#include <gtest/gtest.h>

#include "common/cni/sandbox_addresses.h"

namespace cn::cni {
namespace {

using nlohmann::json;

TEST(SandboxAddresses, CiliumResultGivesTheContainerAddress) {
  auto r = sandbox_addresses(
      json::parse(R"({"interfaces":[{"name":"lxc1"},{"name":"eth0","sandbox":"/x"}],
    "ips":[{"interface":1,"address":"10.200.3.17/32","gateway":"10.200.3.1"}]})"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->interface_name, "eth0");
  EXPECT_EQ(r->ips, std::vector<std::string>{"10.200.3.17"});
}

TEST(SandboxAddresses, OldResultVersionsWithVersionField) {
  auto r = sandbox_addresses(json::parse(
      R"({"cniVersion":"0.3.1","interfaces":[{"name":"veth"},{"name":"eth0","sandbox":"/x"}],
    "ips":[{"version":"4","interface":1,"address":"10.1.0.5/24"},{"version":"6","interface":1,"address":"fd00::5/64"}]})"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->ips, (std::vector<std::string>{"10.1.0.5", "fd00::5"}));
}

TEST(SandboxAddresses, HostSideAddressesAreIgnored) {
  auto r = sandbox_addresses(
      json::parse(R"({"interfaces":[{"name":"br0"},{"name":"eth0","sandbox":"/x"}],
    "ips":[{"interface":0,"address":"10.1.0.1/24"},{"interface":1,"address":"10.1.0.7/24"},{"address":"10.9.9.9/24"}]})"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->ips, std::vector<std::string>{"10.1.0.7"});
}

TEST(SandboxAddresses, NoSandboxInterfaceIsValidAndEmpty) {
  auto r = sandbox_addresses(json::parse(
      R"({"interfaces":[{"name":"lxc1"}],"ips":[{"interface":0,"address":"10.0.0.1/32"}]})"));
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->ips.empty());
  EXPECT_TRUE(r->interface_name.empty());
  EXPECT_TRUE(sandbox_addresses(json::object()));
}

TEST(SandboxAddresses, WrongTypesAreErrors) {
  EXPECT_FALSE(sandbox_addresses(json::parse(R"({"interfaces":{}})")));
  EXPECT_FALSE(sandbox_addresses(json::parse(R"({"interfaces":[1]})")));
  EXPECT_FALSE(sandbox_addresses(json::parse(R"({"ips":"x"})")));
  EXPECT_FALSE(sandbox_addresses(json::parse(R"({"ips":[{"interface":0}]})")));
}

}  // namespace
}  // namespace cn::cni
