#pragma once
// A tiny blocking HTTP/1.1 client over a unix socket or 127.0.0.1 TCP, for test tools
// (fake-cilium-cni) and tests that need byte-level control. Not for product code: the product
// talks HTTP through libcurl in common/http.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/util/result.h"

namespace cn::fakes {

struct RawHttpResponse {
  int status = 0;
  std::string reason;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::optional<std::string> header(std::string_view name) const;
};

// Where to connect: a unix socket path, or host:port when unix_path is empty.
struct HttpTarget {
  std::string unix_path;
  std::string host = "127.0.0.1";
  int port = 0;
  static HttpTarget unix_socket(std::string path) { return {std::move(path), {}, 0}; }
  static HttpTarget tcp(std::string host, int port) { return {{}, std::move(host), port}; }
};

class RawConnection {
 public:
  static Result<RawConnection> open(const HttpTarget& target,
                                    std::chrono::milliseconds timeout = std::chrono::seconds(10));
  RawConnection(RawConnection&& other) noexcept;
  RawConnection& operator=(RawConnection&& other) noexcept;
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;
  ~RawConnection();

  bool send(std::string_view bytes);
  // Reads one response: Content-Length, chunked, or until close.
  Result<RawHttpResponse> read_response();
  Result<RawHttpResponse> request(
      std::string_view method, std::string_view target, std::string_view body = {},
      const std::vector<std::pair<std::string, std::string>>& headers = {});
  // True when the server closed the connection (read returns EOF without data).
  bool peer_closed(std::chrono::milliseconds wait);
  void shutdown_write();
  int fd() const { return fd_; }

 private:
  RawConnection(int fd, std::chrono::milliseconds timeout) : fd_(fd), timeout_(timeout) {}
  int fd_ = -1;
  std::chrono::milliseconds timeout_;
  std::string pending_;  // bytes read past the previous response (pipelining)
};

std::string format_request(std::string_view method, std::string_view target, std::string_view body,
                           const std::vector<std::pair<std::string, std::string>>& headers = {});

// One request on a fresh connection.
Result<RawHttpResponse> http_request(
    const HttpTarget& target, std::string_view method, std::string_view path,
    std::string_view body = {},
    const std::vector<std::pair<std::string, std::string>>& headers = {},
    std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace cn::fakes
