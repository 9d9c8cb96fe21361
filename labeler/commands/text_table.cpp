#include "labeler/commands/text_table.h"

#include <algorithm>

namespace cn::labeler {

namespace {

constexpr std::size_t kGap = 2;
constexpr std::string_view kCut = "...";

std::vector<std::size_t> column_widths(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  return widths;
}

std::size_t line_width(const std::vector<std::size_t>& widths) {
  std::size_t total = 0;
  for (auto w : widths) total += w;
  return widths.empty() ? 0 : total + kGap * (widths.size() - 1);
}

}  // namespace

std::string render_table(const std::vector<std::vector<std::string>>& rows) {
  const auto widths = column_widths(rows);
  std::string out;
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      out += row[i];
      if (i + 1 < row.size()) out.append(widths[i] + kGap - row[i].size(), ' ');
    }
    out += "\n";
  }
  return out;
}

std::string render_table(std::vector<std::vector<std::string>> rows, std::size_t max_width) {
  auto widths = column_widths(rows);
  // No column gets narrower than its header or than a cut cell can show.
  std::vector<std::size_t> floor(widths.size(), kCut.size() + 1);
  if (!rows.empty()) {
    for (std::size_t i = 0; i < rows.front().size(); ++i)
      floor[i] = std::max(floor[i], rows.front()[i].size());
  }
  while (line_width(widths) > max_width) {
    std::size_t widest = widths.size();
    for (std::size_t i = 0; i < widths.size(); ++i) {
      if (widths[i] > floor[i] && (widest == widths.size() || widths[i] > widths[widest]))
        widest = i;
    }
    if (widest == widths.size()) break;
    // One column at a time, one byte at a time: the long columns end up about as wide.
    --widths[widest];
  }
  for (std::size_t r = 1; r < rows.size(); ++r) {
    for (std::size_t i = 0; i < rows[r].size(); ++i) {
      auto& cell = rows[r][i];
      if (cell.size() <= widths[i]) continue;
      cell.resize(widths[i] - kCut.size());
      cell += kCut;
    }
  }
  return render_table(rows);
}

}  // namespace cn::labeler
