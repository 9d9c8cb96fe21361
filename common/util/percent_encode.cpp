#include "common/util/percent_encode.h"

namespace cn {

std::string percent_encode(std::string_view s, std::string_view keep) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  auto unreserved = [&](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~' || keep.find(c) != std::string_view::npos;
  };
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (unreserved(c)) {
      out.push_back(c);
    } else {
      auto u = static_cast<unsigned char>(c);
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 0xfU]);
    }
  }
  return out;
}

}  // namespace cn
