#pragma once
// A go-bexpr subset for ?filter= on list endpoints: selectors (dotted paths, e.g. NodeID,
// Job.Meta.team), ==, !=, contains, "in", "not in", "is empty", "is not empty", and, or, not,
// parentheses, double-quoted or bare values. Enough for what a labeler sends
// (`NodeID == "<id>"`); anything else is a 400, as a bad filter is against Nomad.
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "common/util/result.h"

namespace cn::fakes {

class FilterExpr {
 public:
  virtual ~FilterExpr() = default;
  // A selector missing from the document reads as the zero value "", as the struct field would.
  virtual bool matches(const nlohmann::json& doc) const = 0;
};

Result<std::shared_ptr<const FilterExpr>> parse_filter(const std::string& text);

}  // namespace cn::fakes
