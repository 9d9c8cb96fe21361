#pragma once
// Reads the one request line of each accepted notification connection without blocking, so that
// the accept loop can wait on all of them at once: a client that connects and says nothing then
// holds up only itself, never the plugins behind it.
#include <cstddef>
#include <string>

namespace cn::labeler {

enum class ReadProgress {
  kMore,         // no full line yet; wait for the socket again
  kLine,         // `buffer` holds the request up to and including its '\n'
  kClosedEmpty,  // closed before sending a byte: a liveness probe, not a request
  kClosed,       // closed in the middle of a line
  kTooLong,      // more than max_bytes before any '\n'
  kFailed,       // recv failed; `error` says why
};

// Appends what the non-blocking `fd` has to `buffer`, stopping at the first '\n'.
ReadProgress read_available(int fd, std::string& buffer, std::size_t max_bytes, std::string& error);

}  // namespace cn::labeler
