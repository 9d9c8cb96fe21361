#pragma once
// Building request targets. IDs from the outside (job IDs with '/', endpoint IDs with ':')
// always go through percent_encode so a value can never add a path segment or a query key.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/util/percent_encode.h"

namespace cn::http {

using cn::percent_encode;

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
