#pragma once
// The plugin's side of the protocol: one connection per request.
#include <optional>
#include <string>

#include "common/notify/protocol.h"
#include "common/util/clock.h"

namespace cn::notify {

// Sends `request`; when request.wait_ms > 0, waits for the labeler's reply until `deadline`.
// Returns no reply for fire-and-forget requests.
[[nodiscard]] Result<std::optional<Reply>> send_request(const std::string& socket_path,
                                                        const Request& request, Clock& clock,
                                                        MonoTime deadline);

}  // namespace cn::notify
