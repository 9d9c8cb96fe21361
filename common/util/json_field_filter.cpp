#include "common/util/json_field_filter.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <vector>

namespace cn::json {

namespace {

// Bytes a string may hold as they are: everything but the quote, the backslash and control
// characters.
constexpr std::array<bool, 256> kPlainStringByte = [] {
  std::array<bool, 256> plain{};
  for (int c = 0; c < 256; ++c) plain[c] = c >= 0x20 && c != '"' && c != '\\';
  return plain;
}();

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Whether one of the eight bytes at `p` is a quote, a backslash or a control character (the
// classic "has a zero byte" bit trick on the word, its XORs with '"' and '\\', and a "less
// than 0x20" variant; bytes from 0x80 up never match).
bool ends_plain_run(const char* p) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
  std::uint64_t v = 0;
  std::memcpy(&v, p, sizeof v);
  auto zero_byte = [](std::uint64_t x) { return (x - kOnes) & ~x & kHighs; };
  const std::uint64_t below_space = (v - kOnes * 0x20) & ~v & kHighs;
  return (zero_byte(v ^ (kOnes * '"')) | zero_byte(v ^ (kOnes * '\\')) | below_space) != 0;
}

bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// A listed member without members of its own is kept whole: no filtering below it.
const Fields* governing(const Fields* fields) {
  return fields != nullptr && !fields->members.empty() ? fields : nullptr;
}

// A cursor over the text for the scanner's inner loops. Each step returns nullptr, or why the
// bytes there are not JSON.
// The escape at `p`, a backslash inside a string: its length, or 0 with why it is refused.
// `truncated`: the text ends inside it.
struct Escape {
  std::size_t length = 0;
  const char* why = nullptr;
  bool truncated = false;
};

Escape escape_at(const char* p, const char* end) {
  if (end - p < 2) return {0, "unterminated string", true};
  switch (p[1]) {
    case '"':
    case '\\':
    case '/':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't':
      return {2};
    case 'u':
      if (end - p < 6) return {0, "unterminated string", true};
      if (!is_hex(p[2]) || !is_hex(p[3]) || !is_hex(p[4]) || !is_hex(p[5]))
        return {0, "invalid \\u escape"};
      return {6};
    default:
      return {0, "invalid escape in a string"};
  }
}

struct Bytes {
  const char* p;
  const char* end;

  [[gnu::always_inline]] void space() {
    while (p != end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) ++p;
  }

  // At a quote: steps over the string.
  [[gnu::always_inline]] const char* string() {
    ++p;
    for (;;) {
      // Eight bytes at a time while none of them ends the plain run, then byte by byte.
      while (end - p >= 8 && !ends_plain_run(p)) p += 8;
      while (p != end && kPlainStringByte[static_cast<unsigned char>(*p)]) ++p;
      if (p == end) return "unterminated string";
      if (*p == '"') {
        ++p;
        return nullptr;
      }
      if (const char* why = escape()) return why;
    }
  }

  // At a backslash in a string.
  const char* escape() {
    if (*p != '\\') return "control character in a string";
    const Escape e = escape_at(p, end);
    if (e.length == 0) {
      if (e.truncated) p = end;
      return e.why;
    }
    p += e.length;
    return nullptr;
  }

  // A member's key and its colon.
  [[gnu::always_inline]] const char* key() {
    space();
    if (p == end || *p != '"') return "expected a key";
    if (const char* why = string()) return why;
    space();
    if (p == end || *p != ':') return "expected ':'";
    ++p;
    return nullptr;
  }

  bool digits() {
    const char* first = p;
    while (p != end && is_digit(*p)) ++p;
    return p != first;
  }

  const char* number() {
    if (*p == '-') ++p;
    if (p != end && *p == '0') {
      ++p;
    } else if (!digits()) {
      return "invalid number";
    }
    if (p != end && *p == '.') {
      ++p;
      if (!digits()) return "invalid number";
    }
    if (p != end && (*p == 'e' || *p == 'E')) {
      ++p;
      if (p != end && (*p == '+' || *p == '-')) ++p;
      if (!digits()) return "invalid number";
    }
    return nullptr;
  }

  const char* literal(std::string_view word) {
    for (char c : word) {
      if (p == end) return "unexpected end of input";
      if (*p != c) return "invalid literal";
      ++p;
    }
    return nullptr;
  }

  // A string, number or literal.
  [[gnu::always_inline]] const char* scalar() {
    switch (*p) {
      case '"':
        return string();
      case 't':
        return literal("true");
      case 'f':
        return literal("false");
      case 'n':
        return literal("null");
      default:
        return *p == '-' || is_digit(*p) ? number() : "unexpected character";
    }
  }

  // After a value: closes the containers it ends and steps to the next value, or sets `done`
  // when the outermost one closed.
  [[gnu::always_inline]] const char* next_value(std::string& open, bool& done) {
    for (;;) {
      if (open.empty()) {
        done = true;
        return nullptr;
      }
      space();
      if (p == end) return "unexpected end of input";
      if (*p != open.back()) break;
      ++p;
      open.pop_back();
    }
    if (*p != ',') return open.back() == '}' ? "expected ',' or '}'" : "expected ',' or ']'";
    ++p;
    return open.back() == '}' ? key() : nullptr;
  }
};

class Scanner {
 public:
  Scanner(std::string_view text, int max_depth, FilterError& error)
      : text_(text), max_depth_(max_depth), error_(error) {}

  // A value at `depth` (containers open around it), built into `out` as `fields` says
  // (nullptr: whole).
  bool filtered_value(const Fields* fields, int depth, nlohmann::json& out);
  // Checks and steps over one value.
  bool skip_value(int depth);
  // The top-level array of a list body, element by element.
  bool list(const Fields* fields, std::string_view deferred,
            const std::function<void(nlohmann::json&&, DeferredText)>& on_element);
  // Only whitespace may follow the document.
  bool end();
  void whitespace() {
    std::size_t p = pos_;  // local: see string()
    const std::size_t size = text_.size();
    const char* const bytes = text_.data();
    while (p != size &&
           (bytes[p] == ' ' || bytes[p] == '\n' || bytes[p] == '\r' || bytes[p] == '\t'))
      ++p;
    pos_ = p;
  }

 private:
  bool filtered_object(const Fields& fields, int depth, nlohmann::json& out,
                       std::string_view deferred = {}, DeferredText* deferred_text = nullptr);
  bool filtered_array(const Fields& fields, int depth, nlohmann::json& out);
  bool whole_value(int depth, nlohmann::json& out);
  // A string token; `raw` is what lies between the quotes, `escaped` whether it holds escapes.
  bool string(std::string_view& raw, bool& escaped);
  bool key(std::string& decoded_or_empty, std::string_view& raw);
  bool literal(std::string_view word);
  bool expect(char c);
  bool opening(int depth);
  // Just inside an opening bracket: steps over `close` when the container is empty.
  bool closes_at_once(char close);
  // After a member or element: ',' (`more`: another follows) or `close` (the container ends).
  bool separator(char close, bool& more);

  bool failed(std::string what) {
    if (error_.message.empty())
      error_.message = std::move(what) + " at byte " + std::to_string(pos_);
    return false;
  }
  bool truncated() { return failed("unexpected end of input"); }
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return text_[pos_]; }

  std::string_view text_;
  std::size_t pos_ = 0;
  int max_depth_;
  FilterError& error_;
};

bool Scanner::end() {
  whitespace();
  return at_end() || failed("unexpected data after the document");
}

bool Scanner::closes_at_once(char close) {
  whitespace();
  if (at_end() || peek() != close) return false;
  ++pos_;
  return true;
}

bool Scanner::separator(char close, bool& more) {
  whitespace();
  if (at_end()) return truncated();
  const char c = peek();
  if (c != ',' && c != close) return failed(std::string("expected ',' or '") + close + "'");
  ++pos_;
  more = c == ',';
  return true;
}

bool Scanner::expect(char c) {
  whitespace();
  if (at_end()) return truncated();
  if (peek() != c) return failed(std::string("expected '") + c + "'");
  ++pos_;
  return true;
}

bool Scanner::opening(int depth) {
  if (depth < max_depth_) return true;
  error_.too_deep = true;
  return failed("nested deeper than " + std::to_string(max_depth_));
}

bool Scanner::string(std::string_view& raw, bool& escaped) {
  // At the opening quote. The hot loop runs on a local pointer: pos_ could alias the bytes read
  // through it and would be stored and reloaded on every byte.
  const auto* bytes = reinterpret_cast<const unsigned char*>(text_.data());
  const unsigned char* const end = bytes + text_.size();
  const unsigned char* const start = bytes + pos_ + 1;
  const unsigned char* p = start;
  escaped = false;
  for (;;) {
    while (p != end && kPlainStringByte[*p]) ++p;
    if (p == end) {
      pos_ = text_.size();
      return failed("unterminated string");
    }
    if (*p == '"') break;
    pos_ = static_cast<std::size_t>(p - bytes);
    if (*p != '\\') return failed("control character in a string");
    escaped = true;
    const Escape e =
        escape_at(reinterpret_cast<const char*>(p), reinterpret_cast<const char*>(end));
    if (e.length == 0) return failed(e.why);
    p += e.length;
  }
  raw = text_.substr(static_cast<std::size_t>(start - bytes), static_cast<std::size_t>(p - start));
  pos_ = static_cast<std::size_t>(p - bytes) + 1;
  return true;
}

bool Scanner::literal(std::string_view word) {
  if (text_.size() - pos_ < word.size()) {
    return text_.compare(pos_, std::string_view::npos, word.substr(0, text_.size() - pos_)) == 0
               ? truncated()
               : failed("invalid literal");
  }
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (text_[pos_ + i] != word[i]) return failed("invalid literal");
  }
  pos_ += word.size();
  return true;
}

bool Scanner::skip_value(int depth) {
  // Most of a Nomad list's bytes pass through here, so the steps run on a local cursor: pos_
  // could alias the bytes read and would be stored and reloaded on every byte.
  const char* const begin = text_.data();
  Bytes bytes{begin + pos_, begin + text_.size()};
  std::string open;  // '}' or ']' per open container, innermost last; SSO below 16 levels
  auto refuse = [&](std::string_view why) {
    pos_ = static_cast<std::size_t>(bytes.p - begin);
    return bytes.p == bytes.end && why != "unterminated string" ? truncated()
                                                                : failed(std::string(why));
  };
  for (;;) {
    // A value starts here.
    bytes.space();
    if (bytes.p == bytes.end) return refuse("unexpected end of input");
    const char* why = nullptr;
    if (*bytes.p == '{' || *bytes.p == '[') {
      const char close = *bytes.p == '{' ? '}' : ']';
      pos_ = static_cast<std::size_t>(bytes.p - begin);
      if (!opening(depth + static_cast<int>(open.size()))) return false;
      ++bytes.p;
      bytes.space();
      if (bytes.p == bytes.end || *bytes.p != close) {
        open.push_back(close);
        if (close == '}' && (why = bytes.key()) != nullptr) return refuse(why);
        continue;
      }
      ++bytes.p;
    } else if ((why = bytes.scalar()) != nullptr) {
      return refuse(why);
    }
    bool done = false;
    if ((why = bytes.next_value(open, done)) != nullptr) return refuse(why);
    if (done) {
      pos_ = static_cast<std::size_t>(bytes.p - begin);
      return true;
    }
  }
}

bool Scanner::whole_value(int depth, nlohmann::json& out) {
  whitespace();
  const std::size_t start = pos_;
  if (at_end()) return truncated();
  const char first = peek();
  if (!skip_value(depth)) return false;
  const std::string_view value = text_.substr(start, pos_ - start);
  // The common small values without a second parse; everything else through nlohmann, which
  // also checks what the scanner does not (UTF-8, number range).
  if (first == '"') {
    const std::string_view inner = value.substr(1, value.size() - 2);
    const bool ascii = std::all_of(inner.begin(), inner.end(), [](char c) {
      return static_cast<unsigned char>(c) < 0x80 && c != '\\';
    });
    if (ascii) {
      out = std::string(inner);
      return true;
    }
  } else if (is_digit(first) && value.size() <= 19) {
    std::uint64_t n = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec == std::errc{} && end == value.data() + value.size()) {
      out = n;
      return true;
    }
  } else if (value == "null") {
    out = nullptr;
    return true;
  } else if (value == "true" || value == "false") {
    out = value == "true";
    return true;
  }
  try {
    out = nlohmann::json::parse(value);
    return true;
  } catch (const nlohmann::json::exception& e) {
    pos_ = start;
    return failed(std::string("invalid value (") + e.what() + ")");
  }
}

bool Scanner::key(std::string& decoded, std::string_view& raw) {
  whitespace();
  if (at_end()) return truncated();
  if (peek() != '"') return failed("expected a key");
  const std::size_t start = pos_;
  bool escaped = false;
  if (!string(raw, escaped)) return false;
  decoded.clear();
  if (!escaped) return true;
  try {
    decoded = nlohmann::json::parse(text_.substr(start, pos_ - start)).get<std::string>();
    raw = decoded;
    return true;
  } catch (const nlohmann::json::exception& e) {
    pos_ = start;
    return failed(std::string("invalid key (") + e.what() + ")");
  }
}

bool Scanner::filtered_object(const Fields& fields, int depth, nlohmann::json& out,
                              std::string_view deferred, DeferredText* deferred_text) {
  // At '{', depth already checked.
  ++pos_;
  out = nlohmann::json::object();
  if (closes_at_once('}')) return true;
  std::string decoded;
  std::string_view name;
  for (;;) {
    if (!key(decoded, name) || !expect(':')) return false;
    const Fields* member = fields.find(name);
    if (deferred_text != nullptr && !deferred.empty() && name == deferred) {
      whitespace();
      const std::size_t start = pos_;
      if (member != nullptr ? !filtered_value(governing(member), depth + 1, out[std::string(name)])
                            : !skip_value(depth + 1))
        return false;
      const std::string_view text = text_.substr(start, pos_ - start);
      *deferred_text = text == "null" ? std::string_view{} : text;
    } else if (member != nullptr) {
      if (!filtered_value(governing(member), depth + 1, out[std::string(name)])) return false;
    } else if (!skip_value(depth + 1)) {
      return false;
    }
    bool more = false;
    if (!separator('}', more)) return false;
    if (!more) return true;
  }
}

bool Scanner::filtered_array(const Fields& fields, int depth, nlohmann::json& out) {
  // At '[', depth already checked. An array's elements share its fields.
  ++pos_;
  out = nlohmann::json::array();
  if (closes_at_once(']')) return true;
  for (;;) {
    out.push_back(nullptr);
    if (!filtered_value(&fields, depth + 1, out.back())) return false;
    bool more = false;
    if (!separator(']', more)) return false;
    if (!more) return true;
  }
}

bool Scanner::filtered_value(const Fields* fields, int depth, nlohmann::json& out) {
  if (fields == nullptr) return whole_value(depth, out);
  whitespace();
  if (at_end()) return truncated();
  if (peek() == '{') return opening(depth) && filtered_object(*fields, depth, out);
  if (peek() == '[') return opening(depth) && filtered_array(*fields, depth, out);
  return whole_value(depth, out);
}

bool Scanner::list(const Fields* fields, std::string_view deferred,
                   const std::function<void(nlohmann::json&&, DeferredText)>& on_element) {
  whitespace();
  if (at_end()) return truncated();
  if (peek() == 'n') return literal("null");
  if (peek() != '[') return failed("expected an array");
  if (!opening(0)) return false;
  ++pos_;
  if (closes_at_once(']')) return true;
  for (;;) {
    nlohmann::json element;
    DeferredText text;
    whitespace();
    if (at_end()) return truncated();
    if (fields != nullptr && peek() == '{') {
      if (!opening(1) || !filtered_object(*fields, 1, element, deferred, &text)) return false;
    } else if (!filtered_value(fields, 1, element)) {
      return false;
    }
    on_element(std::move(element), text);
    bool more = false;
    if (!separator(']', more)) return false;
    if (!more) return true;
  }
}

}  // namespace

bool filter_document(std::string_view text, const Fields& keep, int max_depth, nlohmann::json& out,
                     FilterError& error) {
  Scanner scanner(text, max_depth, error);
  return scanner.filtered_value(governing(&keep), 0, out) && scanner.end();
}

bool filter_list(std::string_view text, const Fields& keep, std::string_view deferred,
                 int max_depth,
                 const std::function<void(nlohmann::json&& element, DeferredText)>& on_element,
                 FilterError& error) {
  Scanner scanner(text, max_depth, error);
  return scanner.list(governing(&keep), deferred, on_element) && scanner.end();
}

}  // namespace cn::json
