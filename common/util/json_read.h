#pragma once
// The one reader for outside JSON (Nomad's, the Cilium agent's, etcd's, the CNI runtime's, our
// own files and frames read back): a missing key or null is the zero value (those producers omit
// empty fields), a present key of the wrong type or out of range is an error.
// Every error has one shape: the document's name, the RFC 6901 pointer of the value inside it and
// the reason, "Allocation at /Job/TaskGroups/0/Name: expected a string, got number" (at the root:
// "Allocation: expected an object, got null").
// The reader keeps the first error, so a parser can read every field and check once at the end.
#include <concepts>
#include <cstdint>
#include <expected>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/util/json_fields.h"
#include "common/util/json_where.h"
#include "common/util/result.h"

namespace cn::json {

// A bare value as an integer from min to max; otherwise the reason it is not one ("expected an
// integer from 0 to 600000, got 700000"). Floats, even integral ones, are refused.
[[nodiscard]] std::expected<std::int64_t, std::string> integer_in_range(const nlohmann::json& value,
                                                                        std::int64_t min,
                                                                        std::int64_t max);
[[nodiscard]] std::expected<std::uint64_t, std::string> unsigned_in_range(
    const nlohmann::json& value, std::uint64_t min, std::uint64_t max);

class JsonReader {
 public:
  JsonReader(const nlohmann::json& value, JsonWhere where);
  // The reader points into `value`: a temporary would be gone before the first read.
  JsonReader(const nlohmann::json&& value, JsonWhere where) = delete;

  void read(std::string_view key, std::string& out);
  void read(std::string_view key, std::uint64_t& out);
  void read(std::string_view key, std::int64_t& out);
  void read(std::string_view key, bool& out);
  void read(std::string_view key, std::map<std::string, std::string>& out);
  void read(std::string_view key, std::vector<std::string>& out);
  // An integer from min to max, any integral type: a float, a string of digits or a value out
  // of range is an error (never cut to fit).
  template <std::integral T>
  void read_int(std::string_view key, T& out, T min = std::numeric_limits<T>::min(),
                T max = std::numeric_limits<T>::max());

  // An integer written as a decimal string, the way proto3's JSON mapping writes 64-bit
  // integers (etcd's gateway) and Kubernetes annotations hold numbers; an empty string is the
  // zero value like an absent key. Signs, spaces and other text are errors.
  template <std::integral T>
  void read_int_text(std::string_view key, T& out, T min = std::numeric_limits<T>::min(),
                     T max = std::numeric_limits<T>::max());

  // A string that must be there: "missing" when absent, null or empty.
  void read_required(std::string_view key, std::string& out);
  // Whether the member is present and not null.
  bool has(std::string_view key) const;

  // The member if it is an object (array); nullptr if absent or null, and also (with an error
  // recorded) if it has another type.
  const nlohmann::json* object(std::string_view key);
  const nlohmann::json* array(std::string_view key);

  // Reads the member `key`, an object, with a reader of its own handed to `fn`; its errors
  // become this reader's. False (and `fn` not called) when the member is absent, null or
  // (an error then) not an object.
  template <class Fn>
  bool with_object(std::string_view key, Fn&& fn);

  // Records `reason` against the member `key` (fail_at) or the value itself (fail_here).
  void fail_at(std::string_view key, std::string_view reason);
  void fail_here(std::string_view reason);
  // Keeps an error already in the one shape (a nested reader's).
  void fail(std::string message);
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  // Where the member `key` (element `index` of the array `key`) sits, for a nested reader.
  JsonWhere at(std::string_view key) const { return where_.key(key); }
  JsonWhere at(std::string_view key, std::size_t index) const {
    return where_.key(key).index(index);
  }
  const JsonWhere& where() const { return where_; }

 private:
  const nlohmann::json* find(std::string_view key);
  void wrong_type(std::string_view key, std::string_view expected, const nlohmann::json& got);
  template <std::integral T>
  void read_integer(std::string_view key, T& out, T min, T max, bool as_text);
  // The engine of both, for std::int64_t and std::uint64_t only (json_read.cpp).
  template <class Wide>
  bool read_wide(std::string_view key, Wide& out, Wide min, Wide max, bool as_text);

  const nlohmann::json* value_ = nullptr;
  JsonWhere where_;
  std::string error_;
};

template <std::integral T>
void JsonReader::read_integer(std::string_view key, T& out, T min, T max, bool as_text) {
  using Wide = std::conditional_t<std::is_unsigned_v<T>, std::uint64_t, std::int64_t>;
  Wide v = 0;
  if (read_wide<Wide>(key, v, min, max, as_text)) out = static_cast<T>(v);
}

template <std::integral T>
void JsonReader::read_int(std::string_view key, T& out, T min, T max) {
  read_integer(key, out, min, max, /*as_text=*/false);
}

template <std::integral T>
void JsonReader::read_int_text(std::string_view key, T& out, T min, T max) {
  read_integer(key, out, min, max, /*as_text=*/true);
}

template <class Fn>
bool JsonReader::with_object(std::string_view key, Fn&& fn) {
  const auto* member = object(key);
  if (member == nullptr) return false;
  JsonReader child(*member, at(key));
  fn(child);
  if (!child.ok()) fail(child.error());
  return true;
}

// Parses JSON text without letting an exception out; documents nested deeper than `max_depth`
// are refused before they are built (the deepest real payload is far below the default).
[[nodiscard]] Result<nlohmann::json> parse_json_text(std::string_view text, std::string_view what,
                                                     int max_depth = 128);
// The same, building only the members `keep` lists (see json_fields.h); the others are checked
// by a byte scanner and never decoded (json_field_filter.h says how far that checks them).
[[nodiscard]] Result<nlohmann::json> parse_json_text(std::string_view text, std::string_view what,
                                                     const Fields& keep, int max_depth = 128);
// A list body (a top-level array, or null: no elements) element by element: each element
// filtered by `keep` as above, and the text of its member `deferred` handed over too, empty when
// absent or null, so the caller decodes it whole only when it wants to (with parse_json_text, at
// max_depth - 2). If `keep` lists that member, what it lists is built as well (enough to decide).
// on_element sees each element as soon as it is read; on a failure the elements already handed
// must be dropped by the caller.
[[nodiscard]] Status parse_json_list(
    std::string_view text, std::string_view what, const Fields& keep, std::string_view deferred,
    const std::function<void(nlohmann::json&&, std::string_view)>& on_element, int max_depth = 128);

}  // namespace cn::json
