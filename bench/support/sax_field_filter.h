#pragma once
// The reader's former field filter (an nlohmann SAX handler: dropped members are still
// lexed by nlohmann, only not built), kept for the benches to compare with the byte skimmer of
// common/util/json_field_filter.cpp in the same run. Not a reader of outside input: the product has
// one, common/util/json_read.h.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/nomad/model/allocation.h"
#include "common/util/json_fields.h"
#include "common/util/result.h"

namespace cn::bench {

using cn::json::Fields;

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

// The old decode of a node's allocation list: the SAX filter above, then parse_allocation per
// element (what parse_allocation_list did before the byte skimmer replaced it).
Result<nomad::AllocationList> sax_parse_allocation_list(std::string_view body);

}  // namespace cn::bench
