#pragma once
// JSON string literals written by hand, for output built straight into a string (log lines, the
// load balancer's state file) rather than through a JSON tree.
#include <string>
#include <string_view>

namespace cn {

// `s` as a JSON string literal (quotes included): control bytes escaped, invalid UTF-8 replaced by
// U+FFFD, so that the output is valid JSON whatever the bytes.
void append_json_string(std::string& out, std::string_view s);

}  // namespace cn
