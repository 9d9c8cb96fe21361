#include "common/util/alloc_id.h"

#include <array>
#include <utility>

namespace cn {
namespace {

// A table, not comparisons: the plugin checks the ID of every line of the state file on each
// ADD (state_lines.cpp), a hundred IDs on a busy node.
constexpr std::array<bool, 256> kHexDigit = [] {
  std::array<bool, 256> table{};
  for (char c : std::string_view("0123456789abcdefABCDEF"))
    table[static_cast<unsigned char>(c)] = true;
  return table;
}();

// 8-4-4-4-12: the hex runs between the dashes at 8, 13, 18 and 23.
constexpr std::array<std::pair<std::size_t, std::size_t>, 5> kHexRuns = {
    {{0, 8}, {9, 13}, {14, 18}, {19, 23}, {24, 36}}};

}  // namespace

bool is_valid_alloc_id(std::string_view id) {
  if (id.size() != 36 || id[8] != '-' || id[13] != '-' || id[18] != '-' || id[23] != '-')
    return false;
  for (auto [from, to] : kHexRuns) {
    for (std::size_t i = from; i < to; ++i) {
      if (!kHexDigit[static_cast<unsigned char>(id[i])]) return false;
    }
  }
  return true;
}

}  // namespace cn
