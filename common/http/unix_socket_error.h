#pragma once
// What a failed connect to a unix socket means to an operator. curl reports any such failure as
// "Failed to connect to localhost port 80" (the host name it sends in requests), which names
// neither the socket nor the reason; the socket file tells both.
#include <string>
#include <string_view>

namespace cn::http {

// "no such file: PATH", "not a socket: PATH", "<errno text>: PATH", or, when the file is a
// socket, "nothing accepts connections on PATH" followed by curl's text in parentheses.
std::string unix_connect_error_text(const std::string& path, std::string_view curl_message);

}  // namespace cn::http
