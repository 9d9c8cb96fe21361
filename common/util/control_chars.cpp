#include "common/util/control_chars.h"

#include <algorithm>

namespace cn {

std::string escape_control_chars(std::string_view text) {
  auto is_control = [](char c) {
    const auto b = static_cast<unsigned char>(c);
    return b < 0x20 || b == 0x7f;
  };
  if (std::ranges::none_of(text, is_control)) return std::string(text);
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size() + 8);
  for (char c : text) {
    if (!is_control(c)) {
      out.push_back(c);
      continue;
    }
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default: {
        const auto b = static_cast<unsigned char>(c);
        out += "\\x";
        out.push_back(kDigits[b >> 4]);
        out.push_back(kDigits[b & 0xfU]);
      }
    }
  }
  return out;
}

}  // namespace cn
