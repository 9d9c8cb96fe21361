#pragma once
// Percent-encoding for URL path segments and query parts: the one encoder of outside values
// (allocation IDs, job IDs with '/', endpoint IDs with ':') that go into a request target.
#include <string>
#include <string_view>

namespace cn {

// Everything outside RFC 3986 unreserved [A-Za-z0-9-._~] and the characters in `keep` becomes
// %XX (upper-case hex), like Go's url.QueryEscape except that ' ' is %20, never '+'.
std::string percent_encode(std::string_view s, std::string_view keep = {});

}  // namespace cn
