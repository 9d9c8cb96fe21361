#pragma once
// Turning an error body into an Error message: servers answer with plain text (Nomad), JSON
// strings or objects (Cilium), or HTML from something in between; the message must stay one
// readable line of bounded size either way.
#include <cstddef>
#include <string>
#include <string_view>

namespace cn::http {

inline constexpr std::size_t kMaxErrorText = 200;

// Whitespace-trimmed, control bytes (newlines included) replaced by spaces, cut to `max` bytes
// on a UTF-8 boundary with "..." appended when cut.
std::string body_excerpt(std::string_view body, std::size_t max = kMaxErrorText);

// Replaces every occurrence of `secret` (when non-empty) by "<redacted>": a last line of
// defence should a server ever echo a credential in an error body.
std::string redact(std::string text, std::string_view secret);

}  // namespace cn::http
