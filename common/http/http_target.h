#pragma once
// Where an HttpClient sends its requests: a base URL (http/https, optional path prefix) or a
// Unix socket. Over a Unix socket requests go to http://<host>/..., where <host> is what the
// server sees in the Host header: "localhost" for the Cilium agent (as Cilium's Go client
// sends; Go >= 1.20.6 refuses a Host made from the socket path), "127.0.0.1" for Nomad's
// unix:// addresses (as Nomad's Go api client sends).
#include <string>
#include <string_view>

#include "common/util/result.h"

namespace cn::http {

class HttpTarget {
 public:
  // "http://host[:port][/prefix]" or "https://..."; IPv6 hosts in brackets. No user info, query
  // or fragment (a credential in an address would end up in logs).
  [[nodiscard]] static Result<HttpTarget> url(std::string_view base_url);
  static HttpTarget unix_socket(std::string path, std::string host = "localhost");

  bool is_unix() const { return !socket_path_.empty(); }
  bool is_https() const { return scheme_ == "https"; }
  const std::string& socket_path() const { return socket_path_; }
  const std::string& scheme() const { return scheme_; }
  const std::string& host() const { return host_; }  // without brackets
  int port() const { return port_; }
  const std::string& path_prefix() const { return prefix_; }  // "" or "/prefix", no trailing '/'

  // For logs and error messages: "unix:/var/run/cilium/cilium.sock" or "https://10.0.0.1:4646".
  std::string describe() const;

 private:
  HttpTarget() = default;

  std::string scheme_ = "http";
  std::string host_;
  int port_ = 80;
  std::string prefix_;
  std::string socket_path_;
};

// host as it appears in a URL or CONNECT_TO entry: IPv6 literals get brackets.
std::string url_host(const std::string& host);

}  // namespace cn::http
