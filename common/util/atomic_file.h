#pragma once
// Replacing a file so that no reader ever sees a partial one, and the new content survives a
// crash: write a temp file beside it, fsync, rename(2) over the target, fsync the directory.
// The one way both the node state file and the policy directory are written.
#include <sys/types.h>
#include <initializer_list>
#include <string>
#include <string_view>

#include "common/util/result.h"

namespace cn {

// The temp name is "<path>.tmp.<pid>.<n>": it never ends in the target's extension, so a
// directory watcher that only reads "*.yaml" never picks one up, and a crashed writer's leftovers
// are recognisable (is_temp_file_of).
[[nodiscard]] Status replace_file_atomically(const std::string& path, std::string_view content,
                                             mode_t mode);
// The same with the content in pieces, written one after the other by one writev(2): a caller
// that changes part of a large file need not first copy the whole of it into one buffer.
[[nodiscard]] Status replace_file_atomically(const std::string& path,
                                             std::initializer_list<std::string_view> pieces,
                                             mode_t mode);

// Whether `name` (a file name, not a path) is a temp file left by replace_file_atomically() for
// the target file named `target_name`.
bool is_temp_file_of(std::string_view name, std::string_view target_name);

}  // namespace cn
