#include "common/http/http_target.h"

#include <charconv>

namespace cn::http {

std::string url_host(const std::string& host) {
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

Result<HttpTarget> HttpTarget::url(std::string_view base_url) {
  HttpTarget t;
  std::string_view rest = base_url;
  if (rest.starts_with("http://")) {
    t.scheme_ = "http";
    t.port_ = 80;
    rest.remove_prefix(7);
  } else if (rest.starts_with("https://")) {
    t.scheme_ = "https";
    t.port_ = 443;
    rest.remove_prefix(8);
  } else {
    return fail("address must start with http:// or https://");
  }
  auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  if (authority.find('@') != std::string_view::npos)
    return fail("address must not contain user info");
  if (path.find_first_of("?#") != std::string_view::npos)
    return fail("address must not contain a query or fragment");
  for (char c : base_url) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f)
      return fail("address contains whitespace or control bytes");
  }

  std::string_view host;
  std::string_view port;
  if (authority.starts_with("[")) {
    auto close = authority.find(']');
    if (close == std::string_view::npos) return fail("address has an unterminated IPv6 literal");
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return fail("address has junk after the IPv6 literal");
      port = after.substr(1);
    }
  } else {
    auto colon = authority.rfind(':');
    host = authority.substr(0, colon);
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (host.empty()) return fail("address has no host");
  if (!port.empty()) {
    int p = 0;
    auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (ec != std::errc{} || ptr != port.data() + port.size() || p <= 0 || p > 65535) {
      return fail("address has an invalid port");
    }
    t.port_ = p;
  }
  t.host_ = std::string(host);
  while (path.ends_with('/')) path.remove_suffix(1);
  t.prefix_ = std::string(path);
  return t;
}

HttpTarget HttpTarget::unix_socket(std::string path, std::string host) {
  HttpTarget t;
  t.socket_path_ = std::move(path);
  t.host_ = std::move(host);
  return t;
}

std::string HttpTarget::describe() const {
  if (is_unix()) return "unix:" + socket_path_;
  return scheme_ + "://" + url_host(host_) + ":" + std::to_string(port_) + prefix_;
}

}  // namespace cn::http
