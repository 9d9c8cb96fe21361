#include "common/util/read_whole_file.h"

#include <algorithm>
#include <cerrno>
#include <fstream>

namespace cn {

Result<std::string> read_whole_file(const std::string& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    return fail_errno("cannot read " + path + ": " + errno_text(err), err);
  }
  // Read in slices up to one byte more than allowed (that byte tells "too large" without reading
  // the rest). Slices, not one buffer of the limit: the limit is a bound, not a size, and a
  // buffer of it would be zeroed on every read and kept as capacity by whoever holds the text.
  std::string text;
  while (text.size() <= max_bytes) {
    const std::size_t old_size = text.size();
    const std::size_t slice = std::max<std::size_t>(4096, old_size);  // doubles the buffer
    text.resize(old_size + std::min(slice, max_bytes + 1 - old_size));
    in.read(text.data() + old_size, static_cast<std::streamsize>(text.size() - old_size));
    text.resize(old_size + static_cast<std::size_t>(in.gcount()));
    if (in.bad()) {
      const int err = errno;
      return fail_errno("cannot read " + path + ": " + errno_text(err), err);
    }
    if (!in) break;  // end of file
  }
  if (text.size() > max_bytes) {
    return fail(ErrorKind::invalid,
                path + " is larger than the " + std::to_string(max_bytes) + " bytes expected");
  }
  text.shrink_to_fit();  // callers keep many of these (a directory's files)
  return text;
}

}  // namespace cn
