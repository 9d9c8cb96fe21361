// The VIP range: what it refuses, and the order in which a service tries its addresses.
#include "labeler/services/vip_range.h"

#include <gtest/gtest.h>

#include <set>

namespace cn::labeler {
namespace {

TEST(VipRange, RefusesWhatIsNotARangeOrHoldsNoAddress) {
  for (const char* bad : {"", "10.96.0.0", "10.96.0.0/33", "banana/16", "10.96.0.0/31",
                          "10.96.0.1/32", "fd00::/128"}) {
    EXPECT_FALSE(VipRange::parse(bad)) << bad;
  }
  EXPECT_TRUE(VipRange::parse("10.96.0.0/30"));
  EXPECT_TRUE(VipRange::parse("fd00::/127"));
}

TEST(VipRange, RefusesARangeOverlappingPodsOrTheNode) {
  const std::vector<IpPrefix> taken = {*parse_ip_prefix("10.0.0.0/16"),
                                       *parse_ip_address("192.168.1.10")};
  auto pods = VipRange::parse("10.0.128.0/20", taken);
  ASSERT_FALSE(pods);
  EXPECT_EQ(pods.error().message,
            "service VIP range 10.0.128.0/20 overlaps 10.0.0.0/16, which pods or this node "
            "already use");
  auto node = VipRange::parse("192.168.0.0/16", taken);
  ASSERT_FALSE(node);
  EXPECT_NE(node.error().message.find("overlaps 192.168.1.10,"), std::string::npos);
  EXPECT_TRUE(VipRange::parse("10.96.0.0/16", taken));
}

TEST(VipRange, NeverHandsOutTheNetworkOrBroadcastAddress) {
  auto range = *VipRange::parse("10.96.0.0/30");
  EXPECT_EQ(range.capacity(), 2u);
  std::set<std::string> seen;
  for (std::uint64_t attempt = 0; attempt < 10; ++attempt) {
    seen.insert(ip_text(range.choice("default", "api", attempt)));
  }
  EXPECT_EQ(seen, (std::set<std::string>{"10.96.0.1", "10.96.0.2"}));
  EXPECT_FALSE(range.contains(*parse_ip_address("10.96.0.0")));
  EXPECT_FALSE(range.contains(*parse_ip_address("10.96.0.3")));
  EXPECT_TRUE(range.contains(*parse_ip_address("10.96.0.2")));

  auto v6 = *VipRange::parse("fd00:96::/126");
  EXPECT_EQ(v6.capacity(), 3u);  // IPv6 has no broadcast; only the subnet-router anycast is kept
  EXPECT_TRUE(v6.contains(*parse_ip_address("fd00:96::3")));
  EXPECT_FALSE(v6.contains(*parse_ip_address("fd00:96::")));
}

TEST(VipRange, EveryNodeComputesTheSameChoicesAndTheyVisitTheWholeRange) {
  auto a = *VipRange::parse("10.96.0.0/24");
  auto b = *VipRange::parse("10.96.0.0/24");
  std::set<std::string> seen;
  for (std::uint64_t attempt = 0; attempt < a.capacity(); ++attempt) {
    auto choice = a.choice("prod", "api", attempt);
    EXPECT_EQ(choice, b.choice("prod", "api", attempt));
    EXPECT_TRUE(a.contains(choice)) << ip_text(choice);
    seen.insert(ip_text(choice));
  }
  EXPECT_EQ(seen.size(), a.capacity());
  // The start comes from the name: another service (or the same name in another namespace)
  // starts elsewhere.
  EXPECT_NE(a.choice("prod", "api", 0), a.choice("prod", "web", 0));
  EXPECT_NE(a.choice("prod", "api", 0), a.choice("dev", "api", 0));
}

TEST(VipRange, FirstChoicesOfManyServicesRarelyCollide) {
  // With 1,000 services in a /16, a hash-spread first choice leaves most of them free of any
  // retry: the expected number of collisions is about n^2 / (2 * capacity) = 7.6.
  auto range = *VipRange::parse("10.96.0.0/16");
  std::set<std::string> firsts;
  for (int i = 0; i < 1000; ++i) {
    firsts.insert(ip_text(range.choice("default", "svc-" + std::to_string(i), 0)));
  }
  EXPECT_GE(firsts.size(), 975u);
}

TEST(VipRange, AWideIpv6RangeWorks) {
  auto range = *VipRange::parse("fd00:96::/64");
  auto vip = range.choice("default", "api", 0);
  EXPECT_TRUE(vip.v6);
  EXPECT_TRUE(range.contains(vip));
  EXPECT_EQ(range.choice("default", "api", 0), vip);
}

}  // namespace
}  // namespace cn::labeler
