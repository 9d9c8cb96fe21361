#pragma once
// Regular expressions as the agent compiles them: Go's regexp package, whose syntax is RE2's.
#include <optional>
#include <string>
#include <string_view>

namespace cn::policy {

// Why Go's regexp.Compile (syntax.Perl) would refuse `pattern`, with RE2's own message, or
// nothing when it compiles.
std::optional<std::string> go_regexp_problem(std::string_view pattern);

}  // namespace cn::policy
