#pragma once
// IP addresses and prefixes as Go's net/netip reads them (the agent's and Nomad's parser), for
// policy CIDRs and the service VIP range alike.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cn {

// An address is a prefix of full length (32 or 128 bits).
struct IpPrefix {
  bool v6 = false;
  std::array<std::uint8_t, 16> addr{};  // IPv4 in the first 4 bytes
  int bits = 0;

  int address_bits() const { return v6 ? 128 : 32; }
  bool operator==(const IpPrefix&) const = default;
};

// Go's netip.ParsePrefix: "<address>/<bits>", no zone, no leading zeros in bits or IPv4 octets.
std::optional<IpPrefix> parse_ip_prefix(std::string_view text);
// Go's netip.ParseAddr (no zone): a bare address, taken as a full-length prefix.
std::optional<IpPrefix> parse_ip_address(std::string_view text);
// Whether `inner`'s address lies inside `outer` (same family).
bool prefix_contains(const IpPrefix& outer, const IpPrefix& inner);
// Whether the two prefixes share any address (same family; one then contains the other).
bool prefixes_overlap(const IpPrefix& a, const IpPrefix& b);

// The address alone, in the canonical text form (inet_ntop: "10.0.0.1", "2001:db8::1").
std::string ip_text(const IpPrefix& address);
// The prefix as "<address>/<bits>", its host bits cleared.
std::string prefix_text(const IpPrefix& prefix);

// The prefix's first address plus `offset` (host bits of the prefix only; an offset beyond the
// prefix wraps inside it), as a full-length address.
IpPrefix address_at(const IpPrefix& prefix, std::uint64_t offset);
// The number of addresses in the prefix, capped at 2^63 (an IPv6 /64 already has more than any
// table could use).
std::uint64_t prefix_size(const IpPrefix& prefix);
// Where `address` sits inside `prefix` (the inverse of address_at), or nullopt if outside or
// beyond prefix_size.
std::optional<std::uint64_t> offset_in(const IpPrefix& prefix, const IpPrefix& address);

}  // namespace cn
