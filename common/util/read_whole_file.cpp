#include "common/util/read_whole_file.h"

#include <cerrno>
#include <fstream>

namespace cn {

Result<std::string> read_whole_file(const std::string& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    return fail_errno("cannot read " + path + ": " + errno_text(err), err);
  }
  // One byte more than allowed tells "too large" without reading the rest.
  std::string text(max_bytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) {
    const int err = errno;
    return fail_errno("cannot read " + path + ": " + errno_text(err), err);
  }
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > max_bytes) {
    return fail(ErrorKind::invalid,
                path + " is larger than the " + std::to_string(max_bytes) + " bytes expected");
  }
  return text;
}

}  // namespace cn
