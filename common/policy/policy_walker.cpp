#include "common/policy/policy_walker.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "common/policy/policy_fields.h"
#include "common/policy/policy_text.h"
#include "common/util/edit_distance.h"
#include "common/util/json_read.h"

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

template <typename Fields>
void refuse_case_variant(const std::string& pointer, const std::string& key, const Fields& fields) {
  std::string folded = fold(key);
  for (auto f : fields) {
    if (folded == fold(f)) {
      refuse(child(pointer, key), "unknown field; the agent would read it as \"" + std::string(f) +
                                      "\": spell it exactly");
    }
  }
}

char fold_ascii_case(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

// The field nearest to a misspelt `key`: at most two edits, or a quarter of the name for long
// ones ("toPortz", "fromEndpoint", "matchLabel"), or nothing.
std::string_view nearest_field(std::string_view key, const std::vector<std::string_view>& fields) {
  std::string_view best;
  std::size_t best_distance = std::max<std::size_t>(2, key.size() / 4) + 1;
  for (auto f : fields) {
    std::size_t d = edit_distance(key, f, fold_ascii_case);
    if (d < best_distance) {
      best_distance = d;
      best = f;
    }
  }
  return best;
}

// The members an object may have: the newest release's (older releases know a subset, checked
// by the field table test; what an older agent would mis-read is refused in policy_rules.cpp).
const std::vector<std::string_view>& known_fields(std::string_view table_object) {
  return fields::newest().members(table_object);
}

thread_local FieldLog* field_log = nullptr;

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

void loose_object(const json& v, const std::string& pointer,
                  std::initializer_list<std::string_view> fields) {
  if (!v.is_object()) refuse(pointer, "must be an object, not " + type_name(v));
  for (const auto& [key, value] : v.items()) {
    bool known = false;
    for (auto f : fields) known = known || key == f;
    if (!known) refuse_case_variant(pointer, key, fields);
  }
}

void object(const json& v, const std::string& pointer, std::string_view table_object) {
  if (!v.is_object()) refuse(pointer, "must be an object, not " + type_name(v));
  const std::vector<std::string_view>& fields = known_fields(table_object);
  if (field_log != nullptr) {
    field_log->kind_of[&v] = std::string(table_object);
    field_log->read[std::string(table_object)];
  }
  for (const auto& [key, value] : v.items()) {
    if (std::find(fields.begin(), fields.end(), key) != fields.end()) continue;
    refuse_case_variant(pointer, key, fields);
    std::string why = "unknown field, which the agent would ignore";
    if (auto near = nearest_field(key, fields); !near.empty()) {
      why += "; did you mean \"" + std::string(near) + "\"?";
    } else {
      why += "; the fields here are ";
      for (std::size_t i = 0; i < fields.size(); ++i) {
        why += (i == 0 ? "" : ", ") + std::string(fields[i]);
      }
    }
    refuse(child(pointer, key), why);
  }
}

void set_field_log(FieldLog* log) {
  field_log = log;
}

const json* raw_member(const json& obj, std::string_view key) {
  if (field_log != nullptr) {
    if (auto it = field_log->kind_of.find(&obj); it != field_log->kind_of.end()) {
      field_log->read[it->second].insert(std::string(key));
    }
  }
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

const json* member(const json& obj, std::string_view key) {
  const json* v = raw_member(obj, key);
  return v == nullptr || v->is_null() ? nullptr : v;
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
  if (!v.is_number_integer()) refuse(pointer, "must be an integer, not " + type_name(v));
  // The range check is the project's one (json_read.h); the wording is the policy errors'.
  auto n = cn::json::integer_in_range(v, min, max);
  if (!n) {
    refuse(pointer,
           v.dump() + " is out of range (" + std::to_string(min) + "-" + std::to_string(max) + ")");
  }
  return *n;
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
