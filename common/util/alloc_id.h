#pragma once
// Nomad allocation IDs are UUIDs (8-4-4-4-12 lowercase or uppercase hex). They become file keys,
// URL path segments and endpoint IDs, so anything else is refused at every entry point.
#include <string_view>

namespace cn {

bool is_valid_alloc_id(std::string_view id);

}  // namespace cn
