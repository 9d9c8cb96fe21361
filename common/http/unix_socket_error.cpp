#include "common/http/unix_socket_error.h"

#include <sys/stat.h>

#include <cerrno>

#include "common/util/result.h"

namespace cn::http {

std::string unix_connect_error_text(const std::string& path, std::string_view curl_message) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT) return "no such file: " + path;
    return errno_text(err) + ": " + path;
  }
  if (!S_ISSOCK(st.st_mode)) return "not a socket: " + path;
  return "nothing accepts connections on " + path + " (" + std::string(curl_message) + ")";
}

}  // namespace cn::http
