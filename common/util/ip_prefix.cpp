#include "common/util/ip_prefix.h"

#include <arpa/inet.h>

#include <algorithm>

namespace cn {
namespace {

bool is_digits(std::string_view s) {
  return !s.empty() && std::ranges::all_of(s, [](char c) { return c >= '0' && c <= '9'; });
}

constexpr int kMaxSizeBits = 63;

std::size_t bytes_of(const IpPrefix& p) {
  return p.v6 ? 16 : 4;
}

IpPrefix network_of(const IpPrefix& prefix) {
  IpPrefix n = prefix;
  const int total = prefix.address_bits();
  for (int bit = prefix.bits; bit < total; ++bit) {
    auto byte = static_cast<std::size_t>(bit / 8);
    n.addr[byte] = static_cast<std::uint8_t>(n.addr[byte] & ~(0x80 >> (bit % 8)));
  }
  return n;
}

}  // namespace

std::optional<IpPrefix> parse_ip_address(std::string_view text) {
  if (text.empty() || text.size() > 45) return std::nullopt;
  std::string s(text);
  // inet_pton stops at an embedded NUL; Go's parser refuses the whole text.
  if (s.size() != std::char_traits<char>::length(s.c_str())) return std::nullopt;
  IpPrefix p;
  if (s.find(':') != std::string::npos) {
    if (s.find('%') != std::string::npos) return std::nullopt;  // zones are not allowed
    if (inet_pton(AF_INET6, s.c_str(), p.addr.data()) != 1) return std::nullopt;
    p.v6 = true;
    p.bits = 128;
    return p;
  }
  // inet_pton refuses leading zeros in octets, as Go's ParseAddr does.
  if (inet_pton(AF_INET, s.c_str(), p.addr.data()) != 1) return std::nullopt;
  p.bits = 32;
  return p;
}

std::optional<IpPrefix> parse_ip_prefix(std::string_view text) {
  auto slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto p = parse_ip_address(text.substr(0, slash));
  std::string_view bits = text.substr(slash + 1);
  if (!p || !is_digits(bits) || bits.size() > 3 || (bits.size() > 1 && bits.front() == '0')) {
    return std::nullopt;
  }
  int n = 0;
  for (char c : bits) n = n * 10 + (c - '0');
  if (n > p->bits) return std::nullopt;
  p->bits = n;
  return p;
}

bool prefix_contains(const IpPrefix& outer, const IpPrefix& inner) {
  if (outer.v6 != inner.v6) return false;
  int full = outer.bits / 8;
  for (int i = 0; i < full; ++i) {
    if (outer.addr[static_cast<std::size_t>(i)] != inner.addr[static_cast<std::size_t>(i)]) {
      return false;
    }
  }
  int rest = outer.bits % 8;
  if (rest == 0) return true;
  auto mask = static_cast<std::uint8_t>(0xFF << (8 - rest));
  auto i = static_cast<std::size_t>(full);
  return (outer.addr[i] & mask) == (inner.addr[i] & mask);
}

bool prefixes_overlap(const IpPrefix& a, const IpPrefix& b) {
  return a.bits <= b.bits ? prefix_contains(a, b) : prefix_contains(b, a);
}

std::string ip_text(const IpPrefix& address) {
  std::array<char, INET6_ADDRSTRLEN> buf{};
  if (inet_ntop(address.v6 ? AF_INET6 : AF_INET, address.addr.data(), buf.data(),
                static_cast<socklen_t>(buf.size())) == nullptr) {
    return {};
  }
  return buf.data();
}

std::string prefix_text(const IpPrefix& prefix) {
  return ip_text(network_of(prefix)) + "/" + std::to_string(prefix.bits);
}

std::uint64_t prefix_size(const IpPrefix& prefix) {
  const int host_bits = prefix.address_bits() - prefix.bits;
  return host_bits >= kMaxSizeBits ? (std::uint64_t{1} << kMaxSizeBits)
                                   : (std::uint64_t{1} << host_bits);
}

IpPrefix address_at(const IpPrefix& prefix, std::uint64_t offset) {
  IpPrefix out = network_of(prefix);
  out.bits = prefix.address_bits();
  offset %= prefix_size(prefix);
  // Add the offset to the low 64 bits, byte by byte from the end; the carry cannot leave the
  // prefix because offset < prefix_size.
  const std::size_t n = bytes_of(prefix);
  unsigned carry = 0;
  for (std::size_t i = 0; i < n && (offset != 0 || carry != 0); ++i) {
    const std::size_t at = n - 1 - i;
    const unsigned sum = out.addr[at] + static_cast<unsigned>(offset & 0xFF) + carry;
    out.addr[at] = static_cast<std::uint8_t>(sum & 0xFF);
    carry = sum >> 8;
    offset >>= 8;
  }
  return out;
}

std::optional<std::uint64_t> offset_in(const IpPrefix& prefix, const IpPrefix& address) {
  if (!prefix_contains(prefix, address) || address.bits != address.address_bits()) {
    return std::nullopt;
  }
  const IpPrefix base = network_of(prefix);
  // Subtract the network address from the address over the low 8 bytes; the bytes above them
  // are equal when the host part fits in 63 bits, and a larger difference is out of range.
  const std::size_t n = bytes_of(prefix);
  std::uint64_t diff = 0;
  int borrow = 0;
  std::uint64_t scale = 1;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t at = n - 1 - i;
    int d = static_cast<int>(address.addr[at]) - static_cast<int>(base.addr[at]) - borrow;
    borrow = d < 0 ? 1 : 0;
    if (d < 0) d += 256;
    if (i < 8) {
      diff += static_cast<std::uint64_t>(d) * scale;
      scale <<= 8;
    } else if (d != 0) {
      return std::nullopt;
    }
  }
  if (diff >= prefix_size(prefix)) return std::nullopt;
  return diff;
}

}  // namespace cn
