#pragma once
// Log lines carry values from outside (CNI_ARGS, Nomad's job names and meta, agent answers). A
// newline in one would start a forged line, a terminal escape would rewrite what an operator
// sees: every control byte is written as an escape instead.
#include <string>
#include <string_view>

namespace cn {

// `\n`, `\r` and `\t` as those two characters, any other byte below 0x20 and 0x7f as `\xNN`;
// everything else (UTF-8 included) unchanged.
std::string escape_control_chars(std::string_view text);

}  // namespace cn
