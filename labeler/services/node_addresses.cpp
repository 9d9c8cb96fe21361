#include "labeler/services/node_addresses.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <array>
#include <cerrno>
#include <string>

namespace cn::labeler {

Result<std::vector<IpPrefix>> node_interface_addresses() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) {
    return fail(ErrorKind::io, "getifaddrs: " + errno_text(errno));
  }
  std::vector<IpPrefix> out;
  for (const ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr) continue;
    std::array<char, INET6_ADDRSTRLEN> text{};
    const void* raw = nullptr;
    if (a->ifa_addr->sa_family == AF_INET) {
      raw = &reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr;
    } else if (a->ifa_addr->sa_family == AF_INET6) {
      raw = &reinterpret_cast<const sockaddr_in6*>(a->ifa_addr)->sin6_addr;
    } else {
      continue;
    }
    if (inet_ntop(a->ifa_addr->sa_family, raw, text.data(), text.size()) == nullptr) continue;
    if (auto address = parse_ip_address(text.data())) out.push_back(*address);
  }
  freeifaddrs(list);
  return out;
}

}  // namespace cn::labeler
