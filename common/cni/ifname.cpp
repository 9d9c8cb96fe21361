#include "common/cni/ifname.h"

namespace cn::cni {

bool is_valid_ifname(std::string_view ifname) {
  constexpr std::size_t kMaxIfname = 15;
  if (ifname.empty() || ifname.size() > kMaxIfname || ifname == "." || ifname == "..") return false;
  for (char c : ifname) {
    auto u = static_cast<unsigned char>(c);
    if (c == '/' || c == ':' || u <= 0x20 || u == 0x7f) return false;
  }
  return true;
}

}  // namespace cn::cni
