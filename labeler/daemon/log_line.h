#pragma once
// The one convention every labeler log line follows, as data:
//   <message>[:] key=value key="quoted value" key={key=value ...} ...
// The text format prints the line as it was written; the JSON format (logging.cpp) parses it back
// into fields with this. docs/logging.md lists the keys and says why the line is parsed rather
// than built from fields at each call site.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cn::labeler {

struct LogField {
  std::string key;
  std::string value;            // without the quotes of key="value"; nothing is unescaped
  std::vector<LogField> group;  // the members of key={...} (one level deep)
  bool is_group = false;
  bool quoted = false;  // key="value"
};

struct LogLine {
  std::string message;  // the text before the first field, without the trailing ':'
  std::vector<LogField> fields;
};

// nullopt when `text` does not follow the convention (the JSON format then keeps it whole in msg).
// A quoted value ends at the first '"' that is followed by the end, or by " key=" (or '}' inside
// a group): a value that itself holds `" key=` is cut there, still giving valid JSON.
std::optional<LogLine> parse_log_line(std::string_view text);

enum class LogFieldType { string, number, boolean };

// The JSON type of a key's value: fixed per key, so a log shipper's index sees one type per field.
// A value that is not a JSON number or boolean (an unknown endpoint "?") stays a string.
LogFieldType log_field_type(std::string_view key);

// `"msg":"...","key":value,...` for one line (no braces), parsed with parse_log_line.
std::string log_line_json_members(std::string_view text);

}  // namespace cn::labeler
