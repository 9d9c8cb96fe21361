#pragma once
// Cuts a byte stream (curl write callbacks of any size) into NDJSON lines. Bounded: a peer that
// never sends '\n' cannot make us buffer without limit.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/util/result.h"

namespace cn::nomad {

class NdjsonFramer {
 public:
  static constexpr std::size_t kDefaultMaxLine = std::size_t{16} * 1024 * 1024;

  explicit NdjsonFramer(std::size_t max_line = kDefaultMaxLine) : max_line_(max_line) {}

  // Complete lines in this chunk, without their '\n' (and a '\r' before it); blank lines are
  // dropped. Fails once a line grows past max_line; the framer then stays failed until reset().
  [[nodiscard]] Result<std::vector<std::string>> feed(std::string_view chunk);

  // At end of stream: fails if bytes without a final '\n' are pending. Nomad ends a stream this
  // way with a plain-text reason ("subscription closed by server, ..."), so the error quotes
  // the start of the tail.
  [[nodiscard]] Status finish();

  void reset();
  std::size_t pending_bytes() const { return buffer_.size(); }

 private:
  std::size_t max_line_;
  std::string buffer_;  // bytes after the last '\n'
  bool failed_ = false;
};

}  // namespace cn::nomad
