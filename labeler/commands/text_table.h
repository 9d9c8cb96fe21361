#pragma once
// Column-aligned text for the CLI's listings (`state`, `policy status`): the first row is the
// header, columns are separated by two spaces, the last column is not padded.
#include <cstddef>
#include <string>
#include <vector>

namespace cn::labeler {

std::string render_table(const std::vector<std::vector<std::string>>& rows);

// The same, each line at most `max_width` bytes where the headers allow it: the widest column is
// narrowed first, its long cells cut and ending in "...", so that a terminal never wraps a row.
std::string render_table(std::vector<std::vector<std::string>> rows, std::size_t max_width);

}  // namespace cn::labeler
