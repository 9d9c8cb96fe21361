#pragma once
// Reading the Cilium agent's error answers (pkg/api in cilium/cilium): handler errors are
// JSON strings, go-openapi validation errors {"code":602,"message":...} objects, the "API
// disabled" 403 plain text, most 404s an empty body. And the 429 text, which says how long the
// limiter would have made us wait.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace cn::cilium {

// The human text of an error body: the unquoted JSON string, the object's "message", or the
// (trimmed, bounded) raw text. Empty for an empty body.
std::string agent_error_text(std::string_view body);

// "request would have to wait 16s to be served (maximum wait duration: 15s)" -> 16 s. Accepts
// Go durations ("1.5s", "250ms", "1m30s"); nullopt when the text has no such figure.
std::optional<std::chrono::milliseconds> rate_limit_wait_hint(std::string_view text);

}  // namespace cn::cilium
