#include "common/policy/policy_walker.h"

#include <cctype>

#include "common/policy/policy_text.h"

namespace cn::policy::walk {
namespace {

// Go's case folding, enough for field names: ASCII, plus the two non-ASCII letters that fold to
// ASCII ones (U+017F long s -> s, U+212A Kelvin sign -> k).
std::string fold(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s.substr(i).starts_with("\xC5\xBF")) {
      out += 's';
      i += 1;
    } else if (s.substr(i).starts_with("\xE2\x84\xAA")) {
      out += 'k';
      i += 2;
    } else {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
    }
  }
  return out;
}

}  // namespace

void refuse(const std::string& pointer, std::string reason) {
  throw Violation{pointer, std::move(reason)};
}

std::string child(const std::string& pointer, std::string_view key) {
  return pointer + "/" + pointer_token(key);
}

std::string child(const std::string& pointer, std::size_t index) {
  return pointer + "/" + std::to_string(index);
}

std::string type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    case json::value_t::number_float:
      return "a number with a fraction";
    case json::value_t::null:
      return "null";
    default:
      return "an unsupported value";
  }
}

void object(const json& v, const std::string& pointer,
            std::initializer_list<std::string_view> fields) {
  if (!v.is_object()) refuse(pointer, "must be an object, not " + type_name(v));
  for (const auto& [key, value] : v.items()) {
    bool known = false;
    for (auto f : fields) known = known || key == f;
    if (known) continue;
    std::string folded = fold(key);
    for (auto f : fields) {
      if (folded == fold(f)) {
        refuse(child(pointer, key), "unknown field; the agent would read it as \"" +
                                        std::string(f) + "\": spell it exactly");
      }
    }
  }
}

const json* member(const json& obj, std::string_view key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

const std::string& string(const json& v, const std::string& pointer) {
  if (!v.is_string()) {
    std::string hint = v.is_number() || v.is_boolean() ? " (quote it)" : "";
    refuse(pointer, "must be a string, not " + type_name(v) + hint);
  }
  return v.get_ref<const std::string&>();
}

std::int64_t integer(const json& v, const std::string& pointer, std::int64_t min,
                     std::int64_t max) {
  auto out_of_range = [&] {
    refuse(pointer,
           v.dump() + " is out of range (" + std::to_string(min) + "-" + std::to_string(max) + ")");
  };
  std::int64_t n = 0;
  if (v.is_number_unsigned()) {
    auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(max)) out_of_range();
    n = static_cast<std::int64_t>(u);
  } else if (v.is_number_integer()) {
    n = v.get<std::int64_t>();
  } else {
    refuse(pointer, "must be an integer, not " + type_name(v));
  }
  if (n < min || n > max) out_of_range();
  return n;
}

void boolean(const json& v, const std::string& pointer) {
  if (!v.is_boolean()) refuse(pointer, "must be true or false, not " + type_name(v));
}

const json& array(const json& v, const std::string& pointer, std::size_t max_items) {
  if (!v.is_array()) refuse(pointer, "must be an array, not " + type_name(v));
  if (v.size() > max_items) {
    refuse(pointer,
           std::to_string(v.size()) + " items, at most " + std::to_string(max_items) + " allowed");
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i].is_null()) refuse(child(pointer, i), "null is not allowed here");
  }
  return v;
}

void string_array(const json& v, const std::string& pointer) {
  array(v, pointer);
  for (std::size_t i = 0; i < v.size(); ++i) string(v[i], child(pointer, i));
}

void string_map(const json& v, const std::string& pointer) {
  if (!v.is_object()) refuse(pointer, "must be an object, not " + type_name(v));
  for (const auto& [key, value] : v.items()) string(value, child(pointer, key));
}

const std::string& one_of(const json& v, const std::string& pointer,
                          std::initializer_list<std::string_view> values) {
  const std::string& s = string(v, pointer);
  std::string list;
  for (auto allowed : values) {
    if (s == allowed) return s;
    list += (list.empty() ? "" : ", ") + std::string(allowed);
  }
  refuse(pointer, "\"" + s + "\" is not one of " + list);
}

}  // namespace cn::policy::walk
