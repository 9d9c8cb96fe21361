#include "common/state/state_lines.h"

#include <algorithm>

#include "common/state/state_entry.h"
#include "common/util/alloc_id.h"

namespace cn::state {
namespace {

std::string header() {
  return "{\"schema\":" + std::to_string(kSchemaVersion) + ",\"allocations\":{";
}

constexpr std::string_view kEmptyFooter = "}}\n";
constexpr std::string_view kFooter = "\n}}\n";
constexpr std::size_t kIdLength = 36;

// `"<id>":{...}` with the trailing comma already removed.
std::optional<StateLine> parse_line(std::string_view line) {
  if (line.size() < kIdLength + 5 || line[0] != '"' || line[kIdLength + 1] != '"' ||
      line[kIdLength + 2] != ':') {
    return std::nullopt;
  }
  StateLine out{line.substr(1, kIdLength), line.substr(kIdLength + 3)};
  if (!is_valid_alloc_id(out.alloc_id) || out.body.front() != '{' || out.body.back() != '}') {
    return std::nullopt;
  }
  return out;
}

}  // namespace

std::optional<std::vector<StateLine>> split_state_lines(std::string_view text) {
  const std::string head = header();
  if (!text.starts_with(head)) return std::nullopt;
  text.remove_prefix(head.size());
  std::vector<StateLine> lines;
  if (text == kEmptyFooter) return lines;
  if (!text.ends_with(kFooter) || text.front() != '\n') return std::nullopt;
  text.remove_prefix(1);
  text.remove_suffix(kFooter.size());
  // `text` is now the entry lines joined by ",\n", the last one without a comma.
  while (true) {
    auto newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    const bool last = newline == std::string_view::npos;
    if (!last) {
      if (!line.ends_with(',')) return std::nullopt;
      line.remove_suffix(1);
    }
    auto parsed = parse_line(line);
    if (!parsed) return std::nullopt;
    if (!lines.empty() && !(lines.back().alloc_id < parsed->alloc_id)) return std::nullopt;
    lines.push_back(*parsed);
    if (last) break;
    text.remove_prefix(newline + 1);
  }
  return lines;
}

std::string join_state_lines(const std::vector<StateLine>& lines) {
  std::size_t size = 64;
  for (const auto& line : lines) size += line.alloc_id.size() + line.body.size() + 6;
  std::string out;
  out.reserve(size);
  out += header();
  bool first = true;
  for (const auto& line : lines) {
    out += first ? "\n\"" : ",\n\"";
    first = false;
    out += line.alloc_id;
    out += "\":";
    out += line.body;
  }
  out += lines.empty() ? kEmptyFooter : kFooter;
  return out;
}

StateTextEdit edit_state_line(std::string_view text, const std::vector<StateLine>& lines,
                              std::string_view alloc_id, std::string_view body) {
  auto pos = std::lower_bound(
      lines.begin(), lines.end(), alloc_id,
      [](const StateLine& line, std::string_view id) { return line.alloc_id < id; });
  const bool found = pos != lines.end() && pos->alloc_id == alloc_id;
  // Offsets into `text` (the views in `lines` point into it). A line is `"<id>":<body>`, so it
  // starts one byte before its ID and ends where its body ends; ",\n" separates two lines.
  auto start_of = [&](const StateLine& line) {
    return static_cast<std::size_t>(line.alloc_id.data() - text.data()) - 1;
  };
  auto end_of = [&](const StateLine& line) {
    return static_cast<std::size_t>(line.body.data() - text.data()) + line.body.size();
  };
  auto cut = [&](std::size_t from, std::size_t to, std::string middle) {
    return StateTextEdit{text.substr(0, from), std::move(middle), text.substr(to)};
  };
  auto line_text = [&] { return "\"" + std::string(alloc_id) + "\":" + std::string(body); };

  if (found && !body.empty())
    return cut(end_of(*pos) - pos->body.size(), end_of(*pos), std::string(body));
  if (found) {
    // Removal: the line and one separator; the last line leaves an empty framing.
    if (lines.size() == 1) return cut(0, text.size(), join_state_lines({}));
    if (pos + 1 != lines.end()) return cut(start_of(*pos), start_of(*(pos + 1)), "");
    return cut(end_of(*(pos - 1)), end_of(*pos), "");
  }
  if (body.empty()) return cut(text.size(), text.size(), "");  // nothing to remove
  if (lines.empty()) {
    const StateLine only{alloc_id, body};
    return cut(0, text.size(), join_state_lines({only}));
  }
  if (pos != lines.end()) return cut(start_of(*pos), start_of(*pos), line_text() + ",\n");
  return cut(end_of(lines.back()), end_of(lines.back()), ",\n" + line_text());
}

}  // namespace cn::state
