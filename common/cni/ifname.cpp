#include "common/cni/ifname.h"

#include <algorithm>

namespace cn::cni {

bool is_valid_ifname(std::string_view ifname) {
  constexpr std::size_t kMaxIfname = 15;
  if (ifname.empty() || ifname.size() > kMaxIfname || ifname == "." || ifname == "..") return false;
  return std::ranges::none_of(ifname, [](char c) {
    auto u = static_cast<unsigned char>(c);
    return c == '/' || c == ':' || u <= 0x20 || u == 0x7f;
  });
}

}  // namespace cn::cni
