#include "labeler/serve/request_reader.h"

#include <sys/socket.h>

#include <cerrno>

#include "common/util/result.h"

namespace cn::labeler {

ReadProgress read_available(int fd, std::string& buffer, std::size_t max_bytes,
                            std::string& error) {
  char chunk[4096];
  for (;;) {
    ssize_t n = ::recv(fd, chunk, sizeof chunk, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return ReadProgress::kMore;
    if (n < 0) {
      error = std::string("recv: ") + errno_text(errno);
      return ReadProgress::kFailed;
    }
    if (n == 0) return buffer.empty() ? ReadProgress::kClosedEmpty : ReadProgress::kClosed;
    std::string_view got(chunk, static_cast<std::size_t>(n));
    auto nl = got.find('\n');
    // One request per connection: whatever follows its newline is not read.
    buffer.append(got.substr(0, nl == std::string_view::npos ? got.size() : nl + 1));
    if (buffer.size() > max_bytes) return ReadProgress::kTooLong;
    if (nl != std::string_view::npos) return ReadProgress::kLine;
  }
}

}  // namespace cn::labeler
