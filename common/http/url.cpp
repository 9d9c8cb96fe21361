#include "common/http/url.h"

namespace cn::http {

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
