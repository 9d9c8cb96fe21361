#pragma once
// The SAX handler behind parse_json_text(text, what, fields): builds a document holding only
// the members a Fields tree lists. Dropped members are still read and checked by the parser
// but never built, which skips the allocations (and the DOM callback machinery) they would cost.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/util/json_fields.h"

namespace cn::json {

class FieldFilter {
 public:
  // A top-level array's elements are filtered as documents of their own (a list body).
  FieldFilter(const Fields& keep, int max_depth) : root_(&keep), max_depth_(max_depth) {}

  nlohmann::json& result() { return result_; }
  bool too_deep() const { return too_deep_; }
  const std::string& error() const { return error_; }

  // nlohmann's SAX interface.
  bool null() { return put(nullptr); }
  bool boolean(bool v) { return put(v); }
  bool number_integer(std::int64_t v) { return put(v); }
  bool number_unsigned(std::uint64_t v) { return put(v); }
  bool number_float(double v, const std::string&) { return put(v); }
  bool string(std::string& v) { return put(std::move(v)); }
  bool binary(nlohmann::json::binary_t& v) { return put(std::move(v)); }
  bool start_object(std::size_t) { return open(false); }
  bool start_array(std::size_t) { return open(true); }
  bool key(std::string& k);
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e);

 private:
  struct Open {
    nlohmann::json* value;  // nullptr: a dropped member, or inside one
    const Fields* fields;   // nullptr: everything below is kept
    bool array;
  };
  // Where the next value goes (nullptr: dropped) and which fields govern it.
  nlohmann::json* slot(const Fields*& fields);
  template <class V>
  bool put(V&& v) {
    const Fields* unused = nullptr;
    if (nlohmann::json* at = slot(unused)) *at = std::forward<V>(v);
    return true;
  }
  bool open(bool array);
  bool close();

  const Fields* root_;
  int max_depth_;
  nlohmann::json result_;
  std::vector<Open> open_;
  // The member named by the last key.
  bool member_kept_ = true;
  const Fields* member_fields_ = nullptr;
  std::string member_key_;
  bool too_deep_ = false;
  std::string error_;
};

}  // namespace cn::json
