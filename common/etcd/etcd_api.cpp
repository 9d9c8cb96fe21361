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
  // Not braced: {1, '\0'} would be the two bytes 0x01 0x00.
  return std::string(1, '\0');  // NOLINT(modernize-return-braced-init-list)
}

}  // namespace cn::etcd
