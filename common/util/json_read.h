#pragma once
// Reading outside JSON (Nomad's, the Cilium agent's) without trusting it: a missing key or null is
// the zero value (both omit empty fields), a present key of the wrong type is an error naming the
// field.
// The reader keeps the first error, so a parser can read every field and check once at the end.
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/util/json_fields.h"
#include "common/util/result.h"

namespace cn::json {

class JsonReader {
 public:
  // `where` names the object in errors, e.g. "Allocation.Job".
  JsonReader(const nlohmann::json& value, std::string where);

  void read(std::string_view key, std::string& out);
  void read(std::string_view key, std::uint64_t& out);
  void read(std::string_view key, std::int64_t& out);
  void read(std::string_view key, bool& out);
  void read(std::string_view key, std::map<std::string, std::string>& out);
  void read(std::string_view key, std::vector<std::string>& out);

  // The member if it is an object (array); nullptr if absent or null, and also (with an error
  // recorded) if it has another type.
  const nlohmann::json* object(std::string_view key);
  const nlohmann::json* array(std::string_view key);

  void fail(std::string message);
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  std::string path(std::string_view key) const;

 private:
  const nlohmann::json* find(std::string_view key);
  void wrong_type(std::string_view key, std::string_view expected, const nlohmann::json& got);

  const nlohmann::json* value_ = nullptr;
  std::string where_;
  std::string error_;
};

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
