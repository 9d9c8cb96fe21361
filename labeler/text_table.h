#pragma once
// Column-aligned text for the CLI's listings (`state`, `policy status`): the first row is the
// header, columns are separated by two spaces, the last column is not padded.
#include <string>
#include <vector>

namespace cn::labeler {

std::string render_table(const std::vector<std::vector<std::string>>& rows);

}  // namespace cn::labeler
