#include "common/cilium/model/endpoint_ref.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "common/util/alloc_id.h"
#include "common/util/percent_encode.h"

namespace cn::cilium {

namespace {

std::string_view prefix_of(EndpointIdKind kind) {
  switch (kind) {
    case EndpointIdKind::local:
      return "";
    case EndpointIdKind::cni_attachment:
      return "cni-attachment-id:";
    case EndpointIdKind::container_id:
      return "container-id:";
    case EndpointIdKind::ipv4:
      return "ipv4:";
    case EndpointIdKind::ipv6:
      return "ipv6:";
  }
  return "";
}

bool parses_as(int family, std::string_view address) {
  if (address.empty() || address.size() > INET6_ADDRSTRLEN) return false;
  std::string text(address);  // inet_pton needs a terminator; also stops at an embedded NUL
  if (text.size() != std::char_traits<char>::length(text.c_str())) return false;
  in6_addr buf{};
  return inet_pton(family, text.c_str(), &buf) == 1;
}

}  // namespace

Result<EndpointRef> EndpointRef::cni_attachment(std::string_view alloc_id,
                                                std::string_view ifname) {
  if (!is_valid_alloc_id(alloc_id)) return fail("cni-attachment-id: invalid allocation ID");
  if (!cni::is_valid_ifname(ifname)) return fail("cni-attachment-id: invalid interface name");
  std::string value(alloc_id);
  value.append(":").append(ifname);
  return EndpointRef(EndpointIdKind::cni_attachment, std::move(value));
}

Result<EndpointRef> EndpointRef::container_id(std::string_view alloc_id) {
  if (!is_valid_alloc_id(alloc_id)) return fail("container-id: invalid allocation ID");
  return EndpointRef(EndpointIdKind::container_id, std::string(alloc_id));
}

Result<EndpointRef> EndpointRef::ipv4(std::string_view address) {
  if (!parses_as(AF_INET, address)) return fail("ipv4: not an IPv4 address");
  return EndpointRef(EndpointIdKind::ipv4, std::string(address));
}

Result<EndpointRef> EndpointRef::ipv6(std::string_view address) {
  if (!parses_as(AF_INET6, address)) return fail("ipv6: not an IPv6 address");
  return EndpointRef(EndpointIdKind::ipv6, std::string(address));
}

Result<EndpointRef> EndpointRef::local(std::int64_t endpoint_id) {
  if (endpoint_id < 1 || endpoint_id > kMaxEndpointId) {
    return fail(ErrorKind::bad_answer, "endpoint ID " + std::to_string(endpoint_id) +
                                           " is outside 1.." + std::to_string(kMaxEndpointId));
  }
  return EndpointRef(EndpointIdKind::local, std::to_string(endpoint_id));
}

std::string EndpointRef::to_string() const {
  std::string out(prefix_of(kind_));
  out += value_;
  return out;
}

std::string EndpointRef::to_path_segment() const {
  return percent_encode(to_string(), ":");
}

std::vector<EndpointRef> endpoint_refs_for(std::string_view alloc_id, std::string_view ifname,
                                           const std::vector<std::string>& addresses) {
  std::vector<EndpointRef> refs;
  auto add = [&](Result<EndpointRef> r) {
    if (r) refs.push_back(std::move(*r));
  };
  if (!ifname.empty()) add(EndpointRef::cni_attachment(alloc_id, ifname));
  add(EndpointRef::container_id(alloc_id));
  for (const auto& address : addresses) {
    std::string_view ip = std::string_view(address).substr(0, address.find('/'));
    add(ip.find(':') == std::string_view::npos ? EndpointRef::ipv4(ip) : EndpointRef::ipv6(ip));
  }
  return refs;
}

}  // namespace cn::cilium
