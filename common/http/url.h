#pragma once
// Building request targets. IDs from the outside (job IDs with '/', endpoint IDs with ':')
// always go through percent_encode so a value can never add a path segment or a query key.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cn::http {

// Everything outside RFC 3986 unreserved [A-Za-z0-9-._~] becomes %XX (upper-case hex), like
// Go's url.QueryEscape except that ' ' is %20, never '+'.
std::string percent_encode(std::string_view s);

// `/v1/x?k1=v1&k2=v2` with keys and values encoded; keys kept in insertion order.
class Target {
 public:
  explicit Target(std::string path) : path_(std::move(path)) {}
  Target& query(std::string_view key, std::string_view value);
  std::string str() const;

 private:
  std::string path_;
  std::vector<std::pair<std::string, std::string>> query_;
};

}  // namespace cn::http
