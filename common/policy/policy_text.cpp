#include "common/policy/policy_text.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <exception>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "common/policy/policy_document.h"
#include "common/util/json_read.h"

namespace cn::policy {
namespace {

using nlohmann::json;

struct Refused {
  std::string pointer;
  std::string reason;
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_decimal_int(std::string_view s) {
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) s.remove_prefix(1);
  if (s.empty() || (s.size() > 1 && s.front() == '0')) return false;
  return std::ranges::all_of(s, [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

bool is_decimal_float(std::string_view s) {
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) s.remove_prefix(1);
  std::size_t i = 0;
  std::size_t digits = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    std::size_t exp = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++exp;
    if (exp == 0) return false;
  }
  return i == s.size();
}

// Plain scalars a YAML 1.1 reader (Go's) and a YAML 1.2 reader would type differently, or that
// have no JSON form: refused so that nobody's policy means something else on the node.
bool is_ambiguous_plain(std::string_view s) {
  static const char* const kWords[] = {"y",   "n",    "yes",   "no",    "on",
                                       "off", ".inf", "-.inf", "+.inf", ".nan"};
  std::string l = lower(s);
  for (const char* w : kWords)
    if (l == w) return true;
  if (s.empty()) return false;
  std::string_view body = s;
  if (body.front() == '-' || body.front() == '+') body.remove_prefix(1);
  if (body.size() > 1 && body.front() == '0' && std::isdigit(static_cast<unsigned char>(body[1]))) {
    return true;  // 0755: octal in YAML 1.1
  }
  if (body.starts_with("0x") || body.starts_with("0o") || body.starts_with("0b")) return true;
  // 1_000 and 1:30 are numbers in YAML 1.1.
  bool digits_and_marks = !body.empty() && std::isdigit(static_cast<unsigned char>(body.front()));
  bool has_mark = false;
  for (char c : body) {
    if (c == '_' || c == ':')
      has_mark = true;
    else if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.')
      digits_and_marks = false;
  }
  return digits_and_marks && has_mark;
}

json plain_scalar(std::string_view s, const std::string& pointer) {
  // The spellings both YAML versions read as booleans; "tRUE" is a string in YAML 1.1.
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  std::string l = lower(s);
  if (is_ambiguous_plain(s) || l == "true" || l == "false") {
    throw Refused{pointer, "\"" + std::string(s) +
                               "\" reads differently in YAML 1.1 and 1.2; quote it if it is a "
                               "string, or write a plain decimal number or true/false"};
  }
  if (is_decimal_int(s)) {
    std::string_view digits = s.front() == '+' ? s.substr(1) : s;
    std::int64_t i = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), i);
    if (ec == std::errc() && end == digits.data() + digits.size()) return i;
    std::uint64_t u = 0;
    auto [uend, uec] = std::from_chars(digits.data(), digits.data() + digits.size(), u);
    if (uec == std::errc() && uend == digits.data() + digits.size()) return u;
    throw Refused{pointer, "number " + std::string(s) + " is out of range"};
  }
  if (is_decimal_float(s)) {
    std::string_view digits = s.front() == '+' ? s.substr(1) : s;
    double d = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), d);
    if (ec != std::errc() || end != digits.data() + digits.size()) {
      throw Refused{pointer, "number " + std::string(s) + " is out of range"};
    }
    return d;
  }
  return std::string(s);
}

// Builds the JSON value from yaml-cpp's events, so that anchors, aliases and depth are seen
// before anything is built from them.
// clang-tidy 14 says the implicit default constructor may throw; its members are an int, a null
// json and an empty vector, none of which throws when default-constructed.
// NOLINTNEXTLINE(bugprone-exception-escape)
class JsonBuilder : public YAML::EventHandler {
 public:
  int documents = 0;
  json root;

  void OnDocumentStart(const YAML::Mark&) override {
    if (++documents > 1)
      throw Refused{"", "more than one YAML document; the agent reads only the first"};
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t anchor) override {
    no_anchor(anchor);
    put(json(nullptr), "");
  }
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {
    throw Refused{here(), "YAML aliases are not supported; write the value out"};
  }
  void OnAnchor(const YAML::Mark&, const std::string&) override {
    throw Refused{here(), "YAML anchors are not supported; write the value out"};
  }
  void OnScalar(const YAML::Mark&, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    no_anchor(anchor);
    if (tag == "?") {
      if (expecting_key()) {
        // Go's YAML reader types keys too and the JSON step prints them back: "on" becomes
        // "true", "1.0" becomes "1". Only keys that come back as written are taken unquoted.
        json typed = plain_scalar(value, here());
        if (!typed.is_string() && !(typed.is_number_integer() && typed.dump() == value)) {
          throw Refused{here(), "the key \"" + value + "\" is not a string in YAML; quote it"};
        }
        put(json(value), value);
      } else {
        put(plain_scalar(value, here()), "");
      }
    } else if (tag == "!" || tag == "tag:yaml.org,2002:str") {
      put(json(value), value);
    } else {
      throw Refused{here(), "YAML tag " + tag + " is not supported"};
    }
  }
  void OnSequenceStart(const YAML::Mark&, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(tag, anchor, json::array());
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark&, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(tag, anchor, json::object());
  }
  void OnMapEnd() override { close(); }

 private:
  struct Frame {
    json value;
    std::string pointer;
    bool have_key = false;  // maps: a key was read, its value comes next
    std::string key;
  };
  std::vector<Frame> stack_;
  bool done_ = false;

  bool expecting_key() const {
    return !stack_.empty() && stack_.back().value.is_object() && !stack_.back().have_key;
  }
  std::string here() const {
    if (stack_.empty()) return "";
    const Frame& f = stack_.back();
    if (f.value.is_array()) return f.pointer + "/" + std::to_string(f.value.size());
    if (f.have_key) return f.pointer + "/" + pointer_token(f.key);
    return f.pointer;
  }
  void no_anchor(YAML::anchor_t anchor) const {
    if (anchor != YAML::NullAnchor)
      throw Refused{here(), "YAML anchors are not supported; write the value out"};
  }
  void open(const std::string& tag, YAML::anchor_t anchor, json empty) {
    no_anchor(anchor);
    // A collection's tag is "?" unless one was written; "!" is the explicit non-specific tag,
    // which yaml-cpp also takes glued to "[" or "{" where Go's reader refuses it.
    if (tag != "?" && tag != "tag:yaml.org,2002:map" && tag != "tag:yaml.org,2002:seq") {
      throw Refused{here(), "YAML tag " + tag + " is not supported"};
    }
    if (expecting_key()) throw Refused{here(), "a mapping key must be a scalar"};
    if (static_cast<int>(stack_.size()) >= kMaxPolicyDepth) {
      throw Refused{here(), "nested deeper than " + std::to_string(kMaxPolicyDepth) + " levels"};
    }
    std::string pointer = here();
    stack_.push_back(Frame{std::move(empty), std::move(pointer), false, {}});
  }
  void close() {
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    put(std::move(f.value), "");
  }
  // `key_text`: the scalar's text when it may be a mapping key.
  void put(json v, const std::string& key_text) {
    if (stack_.empty()) {
      if (done_) throw Refused{"", "more than one value in the document"};
      root = std::move(v);
      done_ = true;
      return;
    }
    Frame& f = stack_.back();
    if (f.value.is_array()) {
      f.value.push_back(std::move(v));
    } else if (!f.have_key) {
      if (!v.is_string()) {
        if (v.is_null()) throw Refused{f.pointer, "a mapping key is empty or null"};
        throw Refused{f.pointer, "a mapping key must be a scalar"};
      }
      if (key_text == "<<") throw Refused{f.pointer, "YAML merge keys (<<) are not supported"};
      if (f.value.contains(key_text)) {
        throw Refused{f.pointer + "/" + pointer_token(key_text), "duplicate key"};
      }
      f.key = key_text;
      f.have_key = true;
    } else {
      f.value[f.key] = std::move(v);
      f.have_key = false;
    }
  }
};

std::string where(const std::string& pointer) {
  return pointer.empty() ? "/" : pointer;
}

}  // namespace

std::string pointer_token(std::string_view key) {
  std::string out;
  out.reserve(key.size());
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

std::optional<std::string> unreadable_text(std::string_view text) {
  std::string_view s = text;
  std::size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = c < 0x80           ? 1
                      : (c >> 5) == 0x6  ? 2
                      : (c >> 4) == 0xE  ? 3
                      : (c >> 3) == 0x1E ? 4
                                         : 0;
    if (len == 0 || i + len > s.size()) return "not valid UTF-8";
    std::uint32_t cp = len == 1 ? c : c & (0xFF >> (len + 1));
    for (std::size_t k = 1; k < len; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 0x2) return "not valid UTF-8";
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return "not valid UTF-8";
    }
    bool printable = cp == 0x09 || cp == 0x0A || cp == 0x0D || (cp >= 0x20 && cp <= 0x7E) ||
                     cp == 0x85 || (cp >= 0xA0 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) ||
                     cp >= 0x10000;
    if (!printable) {
      char code[8];
      std::snprintf(code, sizeof code, "%04X", static_cast<unsigned>(cp));
      return "control character U+" + std::string(code) + " at byte " + std::to_string(i) +
             " (YAML does not allow it; write it escaped)";
    }
    i += len;
  }
  return std::nullopt;
}

Result<nlohmann::json> parse_policy_text(std::string_view text, std::size_t max_bytes) {
  if (text.size() > max_bytes) {
    return fail(ErrorKind::invalid, "/: " + std::to_string(text.size()) + " bytes, more than the " +
                                        std::to_string(max_bytes) + " allowed");
  }
  if (auto why = unreadable_text(text)) return fail(ErrorKind::invalid, "/: " + *why);
  // Strict JSON first: one reader for JSON input in this project (common/util/json_read.h).
  std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && (text[first] == '{' || text[first] == '[')) {
    if (auto doc = cn::json::parse_json_text(text, "policy", kMaxPolicyDepth)) return *doc;
  }
  try {
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    JsonBuilder builder;
    while (parser.HandleNextDocument(builder)) {
    }
    if (builder.documents == 0) return fail(ErrorKind::invalid, "/: empty document");
    return std::move(builder.root);
  } catch (const Refused& r) {
    return fail(ErrorKind::invalid, where(r.pointer) + ": " + r.reason);
  } catch (const YAML::Exception& e) {
    return fail(ErrorKind::invalid, "/: not YAML or JSON: line " + std::to_string(e.mark.line + 1) +
                                        ", column " + std::to_string(e.mark.column + 1) + ": " +
                                        e.msg);
  } catch (const std::exception& e) {
    return fail(ErrorKind::invalid, std::string("/: not YAML or JSON: ") + e.what());
  }
}

}  // namespace cn::policy
