#pragma once
// The walk over a policy document: the first violation ends it with "<JSON pointer>: <reason>".
// Internal to common/policy; the checks in policy_schema.cpp and policy_rules.cpp use it.
#include <initializer_list>
#include <map>
#include <set>
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

// A member of the kind `table_object` in the field tables (policy_fields.h): `v` must be an
// object whose members are all fields of that object in the newest supported release. Go's
// encoding/json, which the agent decodes with, ignores unknown members and matches names
// case-insensitively, so a misspelt member silently drops what it meant ("toPortz" leaves the
// port list empty: every port allowed). A member differing from a field only in case is refused
// as the agent's reading of it; any other unknown member is refused, with the nearest field
// name when one is close.
void object(const json& v, const std::string& pointer, std::string_view table_object);

// For objects outside the CRD rule schema (metadata, status, label maps): `v` must be an object,
// and only a member differing from one of `fields` in case alone is refused.
void loose_object(const json& v, const std::string& pointer,
                  std::initializer_list<std::string_view> fields);

// The member, or nullptr when absent or null (the agent's zero value).
const json* member(const json& obj, std::string_view key);
// The member even when null (a null that the agent does not treat as absent), or nullptr.
const json* raw_member(const json& obj, std::string_view key);

// While installed on a thread, records which table objects object() visits and which of their
// members the checks read (member(), raw_member()), whether present or not: the test that the
// walker and the field tables agree reads it. Nothing is recorded otherwise.
struct FieldLog {
  std::map<std::string, std::set<std::string>, std::less<>> read;
  // By address, so valid for one document only: the next one's objects may reuse the
  // addresses. Cleared by forget_document().
  std::map<const json*, std::string> kind_of;
  void forget_document() { kind_of.clear(); }
};
void set_field_log(FieldLog* log);

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
