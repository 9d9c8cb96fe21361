#include "common/etcd/etcd_api.h"

namespace cn::etcd {

std::string prefix_end(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    auto& last = reinterpret_cast<unsigned char&>(end.back());
    if (last < 0xff) {
      ++last;
      return end;
    }
    end.pop_back();
  }
  // etcd reads a range_end of "\0" as "every key from `key` on".
  return std::string(1, '\0');
}

}  // namespace cn::etcd
