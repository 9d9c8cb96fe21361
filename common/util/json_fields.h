#pragma once
// The members of an outside JSON document that a model reads. Parsing with them builds only
// those members (json_read.h): the parser still reads and checks every byte but builds nothing
// else, and for Nomad's allocations (task states, resources, the job's tasks, services...) the
// rest is most of the document and most of the cost of decoding a node's allocation list.
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cn::json {

// A member listed with no members of its own is kept whole (a value, a map of meta, ...). The
// members of an array's elements are listed on the array itself.
struct Fields {
  std::vector<std::pair<std::string, Fields>> members;

  Fields() = default;
  Fields(std::initializer_list<std::pair<std::string, Fields>> list) : members(list) {}
  const Fields* find(std::string_view key) const;
};

}  // namespace cn::json
