#include "common/http/url.h"

namespace cn::http {

namespace {
bool unreserved(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}
}  // namespace

std::string percent_encode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
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

Target& Target::query(std::string_view key, std::string_view value) {
  query_.emplace_back(percent_encode(key), percent_encode(value));
  return *this;
}

std::string Target::str() const {
  std::string out = path_;
  char sep = '?';
  for (const auto& [k, v] : query_) {
    out.push_back(sep);
    out += k;
    out.push_back('=');
    out += v;
    sep = '&';
  }
  return out;
}

}  // namespace cn::http
