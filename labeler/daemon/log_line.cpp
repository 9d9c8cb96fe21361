#include "labeler/daemon/log_line.h"

#include "common/util/json_string.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace cn::labeler {
namespace {

bool is_key_start(char c) {
  return c >= 'a' && c <= 'z';
}
bool is_key_char(char c) {
  return is_key_start(c) || (c >= '0' && c <= '9') || c == '_';
}

// The position just after "key=" when a key starts at `pos`, else npos.
std::size_t key_end(std::string_view text, std::size_t pos) {
  if (pos >= text.size() || !is_key_start(text[pos])) return std::string_view::npos;
  std::size_t i = pos + 1;
  while (i < text.size() && is_key_char(text[i])) ++i;
  if (i >= text.size() || text[i] != '=') return std::string_view::npos;
  return i + 1;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  // Fields from pos_ up to the end (top level) or up to and including the closing '}' (group).
  bool fields(std::vector<LogField>& out, bool in_group) {
    if (in_group && at('}')) {
      ++pos_;
      return true;
    }
    while (true) {
      auto after_key = key_end(text_, pos_);
      if (after_key == std::string_view::npos) return false;
      LogField f;
      f.key = std::string(text_.substr(pos_, after_key - 1 - pos_));
      pos_ = after_key;
      if (!value(f, in_group)) return false;
      out.push_back(std::move(f));
      if (pos_ == text_.size()) return !in_group;
      if (in_group && at('}')) {
        ++pos_;
        return true;
      }
      if (!next_field_at(pos_)) return false;
      ++pos_;
    }
  }

  std::size_t pos() const { return pos_; }
  void seek(std::size_t pos) { pos_ = pos; }

 private:
  bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }

  // " key=" starts at `i`.
  bool next_field_at(std::size_t i) const {
    return i < text_.size() && text_[i] == ' ' && key_end(text_, i + 1) != std::string_view::npos;
  }

  // A value may end at `i`.
  bool value_ends_at(std::size_t i, bool in_group) const {
    if (i == text_.size()) return !in_group;
    if (in_group && text_[i] == '}') return true;
    return next_field_at(i);
  }

  bool value(LogField& f, bool in_group) {
    const std::size_t start = pos_;
    if (at('"')) {
      for (std::size_t j = start + 1; j < text_.size(); ++j) {
        if (text_[j] == '"' && value_ends_at(j + 1, in_group)) {
          f.value = std::string(text_.substr(start + 1, j - start - 1));
          f.quoted = true;
          pos_ = j + 1;
          return true;
        }
      }
      return false;
    }
    if (at('{') && !in_group) {
      f.is_group = true;
      ++pos_;
      return fields(f.group, /*in_group=*/true);
    }
    std::size_t end = start;
    while (!value_ends_at(end, in_group)) {
      if (end == text_.size()) return false;
      ++end;
    }
    f.value = std::string(text_.substr(start, end - start));
    pos_ = end;
    return true;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

bool is_json_number(std::string_view s) {
  std::size_t i = 0;
  auto digits = [&] {
    std::size_t from = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > from;
  };
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && s[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

void append_value(std::string& out, const LogField& f) {
  if (f.is_group) {
    out += '{';
    bool first = true;
    for (const auto& member : f.group) {
      if (!first) out += ',';
      first = false;
      append_json_string(out, member.key);
      out += ':';
      append_value(out, member);
    }
    out += '}';
    return;
  }
  switch (log_field_type(f.key)) {
    case LogFieldType::number:
      if (is_json_number(f.value)) {
        out += f.value;
        return;
      }
      break;
    case LogFieldType::boolean:
      if (f.value == "true" || f.value == "false") {
        out += f.value;
        return;
      }
      break;
    case LogFieldType::string:
      break;
  }
  append_json_string(out, f.value);
}

}  // namespace

std::optional<LogLine> parse_log_line(std::string_view text) {
  std::size_t first = std::string_view::npos;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((i == 0 || text[i - 1] == ' ') && key_end(text, i) != std::string_view::npos) {
      first = i;
      break;
    }
  }
  LogLine line;
  std::string_view message = text.substr(0, std::min(first, text.size()));
  while (!message.empty() && message.back() == ' ') message.remove_suffix(1);
  if (message.ends_with(':')) message.remove_suffix(1);
  if (message.empty()) return std::nullopt;
  line.message = std::string(message);
  if (first == std::string_view::npos) return line;
  Parser parser(text);
  parser.seek(first);
  if (!parser.fields(line.fields, /*in_group=*/false)) return std::nullopt;
  return line;
}

LogFieldType log_field_type(std::string_view key) {
  // Keep in step with the tables in docs/logging.md (LogFormat.DocsListEveryKey checks the names).
  static constexpr std::array<std::string_view, 59> kNumbers{"agent_id",
                                                             "allocations",
                                                             "asked",
                                                             "attempt",
                                                             "candidates",
                                                             "claims",
                                                             "connect_timeout_ms",
                                                             "correct",
                                                             "count",
                                                             "deleted",
                                                             "dropped_entries",
                                                             "due",
                                                             "duplicates",
                                                             "endpoint",
                                                             "endpoint_gone",
                                                             "endpoints",
                                                             "enqueued",
                                                             "first_seen",
                                                             "frames",
                                                             "from",
                                                             "got",
                                                             "holder_pid",
                                                             "id",
                                                             "identity",
                                                             "in_range",
                                                             "index",
                                                             "last",
                                                             "leased",
                                                             "live_allocs",
                                                             "max_per_pass",
                                                             "modify_index",
                                                             "ms",
                                                             "no_report",
                                                             "node_gone",
                                                             "orphaned_s",
                                                             "orphans",
                                                             "pid",
                                                             "range_size",
                                                             "referenced",
                                                             "refused",
                                                             "request_timeout_ms",
                                                             "requests",
                                                             "resume_index",
                                                             "resync_s",
                                                             "retry_max_attempts",
                                                             "retry_ms",
                                                             "revision",
                                                             "scanned",
                                                             "seen",
                                                             "signal",
                                                             "status",
                                                             "to",
                                                             "took_ms",
                                                             "uid",
                                                             "unreadable_reports",
                                                             "wait_ms",
                                                             "wait_s",
                                                             "workers",
                                                             "would_delete"};
  static constexpr std::array<std::string_view, 11> kBooleans{
      "baseline",    "degraded",     "dry_run",
      "duplicate",   "duties",       "k8s_compat_labels",
      "kept_file",   "removed_file", "shared_backends_safe",
      "skip_verify", "wrote"};
  if (std::find(kNumbers.begin(), kNumbers.end(), key) != kNumbers.end()) {
    return LogFieldType::number;
  }
  if (std::find(kBooleans.begin(), kBooleans.end(), key) != kBooleans.end()) {
    return LogFieldType::boolean;
  }
  return LogFieldType::string;
}

std::string log_line_json_members(std::string_view text) {
  std::string out = "\"msg\":";
  auto line = parse_log_line(text);
  if (!line) {
    append_json_string(out, text);
    return out;
  }
  // A key twice, or one of the envelope's, can only come from a value that holds " key=": keep
  // such a line whole rather than emit an object with duplicate keys.
  std::vector<std::string_view> seen{"ts", "level", "logger", "msg"};
  for (const auto& f : line->fields) {
    if (std::find(seen.begin(), seen.end(), f.key) != seen.end()) {
      append_json_string(out, text);
      return out;
    }
    seen.push_back(f.key);
  }
  append_json_string(out, line->message);
  for (const auto& f : line->fields) {
    out += ',';
    append_json_string(out, f.key);
    out += ':';
    append_value(out, f);
  }
  return out;
}

}  // namespace cn::labeler
