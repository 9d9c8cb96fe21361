#pragma once
// How far apart two names are, for "did you mean" suggestions on misspelt keys.
#include <cstddef>
#include <string_view>

namespace cn {

// Levenshtein distance (insert, delete, replace one character) between `a` and `b`, with each
// character first mapped through `fold` (the caller's notion of "the same character").
std::size_t edit_distance(std::string_view a, std::string_view b, char (*fold)(char));

}  // namespace cn
