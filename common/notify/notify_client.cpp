#include "common/notify/notify_client.h"

#include "common/notify/unix_line_socket.h"

namespace cn::notify {

Result<std::optional<Reply>> send_request(const std::string& socket_path, const Request& request,
                                          Clock& clock, MonoTime deadline) {
  auto fd = connect_unix(socket_path, clock, deadline);
  if (!fd) return std::unexpected(fd.error());
  if (auto sent = send_all(fd->get(), encode(request), clock, deadline); !sent) {
    return std::unexpected(sent.error());
  }
  if (request.wait_ms <= 0) return std::optional<Reply>{};
  // No shutdown(SHUT_WR) here: the labeler watches for EOF to learn that we gave up waiting.
  auto line = read_line(fd->get(), kMaxFrameBytes, clock, deadline);
  if (!line) return std::unexpected(line.error());
  auto reply = decode_reply(*line);
  if (!reply) return fail("bad reply from labeler: " + reply.error().message);
  return std::optional<Reply>(std::move(*reply));
}

}  // namespace cn::notify
