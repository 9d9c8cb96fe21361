#include "labeler/services/vip_range.h"

#include "common/util/sha256.h"

namespace cn::labeler {

Result<VipRange> VipRange::parse(std::string_view cidr, const std::vector<IpPrefix>& taken) {
  auto prefix = parse_ip_prefix(cidr);
  if (!prefix) {
    return fail("service VIP range \"" + std::string(cidr) +
                "\" is not a CIDR (for example 10.96.0.0/16 or fd00:96::/112)");
  }
  const std::uint64_t size = prefix_size(*prefix);
  // Network address always, and IPv4's broadcast address: neither is a unicast host address.
  const std::uint64_t reserved = prefix->v6 ? 1 : 2;
  if (size <= reserved) {
    return fail("service VIP range " + prefix_text(*prefix) + " holds no usable address");
  }
  for (const auto& other : taken) {
    if (prefixes_overlap(*prefix, other)) {
      return fail("service VIP range " + prefix_text(*prefix) + " overlaps " +
                  (other.bits == other.address_bits() ? ip_text(other) : prefix_text(other)) +
                  ", which pods or this node already use");
    }
  }
  return VipRange(*prefix, size - reserved);
}

bool VipRange::contains(const IpPrefix& address) const {
  auto offset = offset_in(prefix_, address);
  return offset && *offset >= 1 && *offset <= capacity_;
}

IpPrefix VipRange::choice(std::string_view nomad_namespace, std::string_view service_name,
                          std::uint64_t attempt) const {
  std::string key(nomad_namespace);
  key += '/';
  key += service_name;
  const auto digest = sha256(key);
  std::uint64_t start = 0;
  for (std::size_t i = 0; i < 8; ++i) start = (start << 8) | digest[i];
  // Offsets 1 .. capacity: 0 is the network address.
  const std::uint64_t offset = 1 + (start % capacity_ + attempt % capacity_) % capacity_;
  return address_at(prefix_, offset);
}

}  // namespace cn::labeler
