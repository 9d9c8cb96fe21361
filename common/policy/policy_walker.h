#pragma once
// The walk over a policy document: the first violation ends it with "<JSON pointer>: <reason>".
// Internal to common/policy; the checks in policy_schema.cpp and policy_rules.cpp use it.
#include <initializer_list>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace cn::policy::walk {

using nlohmann::json;

// Thrown at the first violation and caught by validate_policy_object().
struct Violation {
  std::string pointer;
  std::string reason;
};

[[noreturn]] void refuse(const std::string& pointer, std::string reason);

std::string child(const std::string& pointer, std::string_view key);
std::string child(const std::string& pointer, std::size_t index);
std::string type_name(const json& v);

// Go's encoding/json (which the agent decodes with) ignores unknown members but matches names
// case-insensitively, so "ToPorts" would be read as "toPorts" without our checks seeing it.
// `v` must be an object (or null: absent); a member whose name differs from a known field only
// in case is refused. Unknown members are otherwise left alone, as the agent leaves them.
void object(const json& v, const std::string& pointer,
            std::initializer_list<std::string_view> fields);

// The member, or nullptr when absent or null (the agent's zero value).
const json* member(const json& obj, std::string_view key);

// Typed leaves. Each refuses another type; null never reaches them (member() hides it).
const std::string& string(const json& v, const std::string& pointer);
std::int64_t integer(const json& v, const std::string& pointer, std::int64_t min, std::int64_t max);
void boolean(const json& v, const std::string& pointer);
// An array (its items are the caller's); refuses null items, which Go would silently zero.
const json& array(const json& v, const std::string& pointer, std::size_t max_items = SIZE_MAX);
void string_array(const json& v, const std::string& pointer);
void string_map(const json& v, const std::string& pointer);
// One of `values` exactly (enums are case-sensitive in the CRD schema).
const std::string& one_of(const json& v, const std::string& pointer,
                          std::initializer_list<std::string_view> values);

}  // namespace cn::policy::walk
