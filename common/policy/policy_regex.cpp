#include "common/policy/policy_regex.h"

#include <re2/re2.h>

namespace cn::policy {

// Go's regexp.Compile parses with syntax.Perl (Perl classes \d \s \w, \b, non-greedy
// operators, Unicode classes, ^ and $ at the ends of the text only): RE2's default options
// outside POSIX mode. Known differences, all making us stricter or equal:
//   - \C (any single byte) is RE2's alone; Go refuses it, so it is refused here first.
//   - RE2 gives up on a program larger than its memory budget (max_mem, 8 MiB) that Go might
//     still compile; such a pattern is refused here ("pattern too large").
//   - Debian 12's RE2 (2022-02-01) lacks the (?<name>...) group syntax Go 1.22 accepts; write
//     (?P<name>...), which both take.
std::optional<std::string> go_regexp_problem(std::string_view pattern) {
  for (std::size_t i = 0; i + 1 < pattern.size(); ++i) {
    if (pattern[i] != '\\') continue;
    if (pattern[i + 1] == 'C') return "invalid escape sequence: \\C (Go's regexp has no \\C)";
    ++i;  // the escaped character, so "\\C" is a backslash and a C
  }
  RE2::Options options;
  options.set_log_errors(false);
  options.set_encoding(RE2::Options::EncodingUTF8);
  const RE2 re(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (re.ok()) return std::nullopt;
  return re.error();
}

}  // namespace cn::policy
