#include "common/util/json_fields.h"

namespace cn::json {

const Fields* Fields::find(std::string_view key) const {
  for (const auto& [name, fields] : members) {
    if (name == key) return &fields;
  }
  return nullptr;
}

}  // namespace cn::json
