#pragma once
// A small file read whole, bounded: what the labeler's own status and policy files need. A file
// larger than the bound is refused before it is read, so a wrong path (a log, a device) cannot
// make a reader allocate without limit.
#include <cstddef>
#include <string>

#include "common/util/result.h"

namespace cn {

// The content of `path`. Errors: kind `io` with sys_errno when it cannot be opened or read
// (ENOENT: it does not exist), kind `invalid` when it holds more than `max_bytes`.
[[nodiscard]] Result<std::string> read_whole_file(const std::string& path, std::size_t max_bytes);

}  // namespace cn
