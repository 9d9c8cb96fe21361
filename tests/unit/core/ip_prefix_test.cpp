// Addresses and prefixes as Go's net/netip reads them, and the arithmetic the VIP range uses.
#include "common/util/ip_prefix.h"

#include <gtest/gtest.h>

namespace cn {
namespace {

TEST(IpPrefix, ParsedAsGoNetipReadsThem) {
  for (const char* ok : {"10.0.0.0/8", "0.0.0.0/0", "10.1.2.3/8", "192.168.1.1/32", "::/0",
                         "2001:db8::/32", "::ffff:10.0.0.0/104", "2001:db8::01/128"}) {
    EXPECT_TRUE(parse_ip_prefix(ok)) << ok;
  }
  for (const char* bad :
       {"10.0.0.0", "10.0.0.0/33", "10.0.0.0/08", "10.0.0.0/", "010.0.0.0/8", "10.0.0/8",
        "fe80::1%eth0/64", "2001:db8::/129", "a/8", " 10.0.0.0/8", "10.0.0.0/8 ", "10.0.0.0/-1"}) {
    EXPECT_FALSE(parse_ip_prefix(bad)) << bad;
  }
  EXPECT_TRUE(parse_ip_address("10.1.2.3"));
  EXPECT_TRUE(parse_ip_address("2001:db8::1"));
  EXPECT_FALSE(parse_ip_address("10.1.2.3/32"));
  EXPECT_FALSE(parse_ip_address("fe80::1%eth0"));
}

TEST(IpPrefix, Contains) {
  auto outer = *parse_ip_prefix("10.0.0.0/8");
  EXPECT_TRUE(prefix_contains(outer, *parse_ip_prefix("10.96.0.0/12")));
  EXPECT_FALSE(prefix_contains(outer, *parse_ip_prefix("11.0.0.0/12")));
  EXPECT_FALSE(prefix_contains(outer, *parse_ip_prefix("2001:db8::/32")));
  auto odd = *parse_ip_prefix("192.168.0.0/17");
  EXPECT_TRUE(prefix_contains(odd, *parse_ip_prefix("192.168.127.0/24")));
  EXPECT_FALSE(prefix_contains(odd, *parse_ip_prefix("192.168.128.0/24")));
  auto v6 = *parse_ip_prefix("2001:db8::/33");
  EXPECT_TRUE(prefix_contains(v6, *parse_ip_prefix("2001:db8:7fff::/48")));
  EXPECT_FALSE(prefix_contains(v6, *parse_ip_prefix("2001:db8:8000::/48")));
}

TEST(IpPrefix, OverlapIsContainmentEitherWay) {
  EXPECT_TRUE(prefixes_overlap(*parse_ip_prefix("10.0.0.0/8"), *parse_ip_prefix("10.96.0.0/12")));
  EXPECT_TRUE(prefixes_overlap(*parse_ip_prefix("10.96.0.0/12"), *parse_ip_prefix("10.0.0.0/8")));
  EXPECT_TRUE(prefixes_overlap(*parse_ip_prefix("10.96.0.0/12"), *parse_ip_address("10.96.0.1")));
  EXPECT_FALSE(prefixes_overlap(*parse_ip_prefix("10.96.0.0/12"), *parse_ip_prefix("10.0.0.0/12")));
  EXPECT_FALSE(prefixes_overlap(*parse_ip_prefix("::/0"), *parse_ip_prefix("0.0.0.0/0")));
}

TEST(IpPrefix, TextIsCanonicalAndClearsHostBits) {
  EXPECT_EQ(ip_text(*parse_ip_address("2001:db8:0:0::01")), "2001:db8::1");
  EXPECT_EQ(ip_text(*parse_ip_address("10.1.2.3")), "10.1.2.3");
  EXPECT_EQ(prefix_text(*parse_ip_prefix("10.1.2.3/8")), "10.0.0.0/8");
  EXPECT_EQ(prefix_text(*parse_ip_prefix("2001:db8::ff/120")), "2001:db8::/120");
}

TEST(IpPrefix, AddressAtAndOffsetInAreInverse) {
  auto v4 = *parse_ip_prefix("10.96.0.0/12");
  EXPECT_EQ(prefix_size(v4), 1u << 20);
  EXPECT_EQ(ip_text(address_at(v4, 0)), "10.96.0.0");
  EXPECT_EQ(ip_text(address_at(v4, 257)), "10.96.1.1");
  EXPECT_EQ(ip_text(address_at(v4, (1u << 20) - 1)), "10.111.255.255");
  EXPECT_EQ(ip_text(address_at(v4, 1u << 20)), "10.96.0.0");  // wraps inside the prefix
  for (std::uint64_t off : {0ull, 1ull, 255ull, 256ull, 65'535ull, 1'048'575ull}) {
    EXPECT_EQ(offset_in(v4, address_at(v4, off)), off) << off;
  }
  EXPECT_FALSE(offset_in(v4, *parse_ip_address("10.112.0.0")));
  EXPECT_FALSE(offset_in(v4, *parse_ip_address("2001:db8::1")));

  auto v6 = *parse_ip_prefix("fd00:10:96::/112");
  EXPECT_EQ(prefix_size(v6), 65'536u);
  EXPECT_EQ(ip_text(address_at(v6, 0x1234)), "fd00:10:96::1234");
  EXPECT_EQ(offset_in(v6, *parse_ip_address("fd00:10:96::ffff")), 65'535u);

  // A /64 holds more than 2^63 addresses: the size is capped, and offsets stay in the low bits.
  auto wide = *parse_ip_prefix("fd00::/64");
  EXPECT_EQ(prefix_size(wide), std::uint64_t{1} << 63);
  EXPECT_EQ(ip_text(address_at(wide, 0x0102030405060708ull)), "fd00::102:304:506:708");
  EXPECT_EQ(offset_in(wide, *parse_ip_address("fd00::102:304:506:708")), 0x0102030405060708ull);
  EXPECT_FALSE(offset_in(wide, *parse_ip_address("fd00::8000:0:0:0")));  // beyond the cap
}

}  // namespace
}  // namespace cn
