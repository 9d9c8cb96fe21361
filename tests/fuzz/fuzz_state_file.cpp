// The state file parser: whatever a crash, an old version or a person left in the file, parsing
// never crashes, and what it accepts survives a write/read round trip unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/state/state_entry.h"
#include "common/util/alloc_id.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto doc = cn::state::state_from_json(text);
  if (!doc) return 0;
  for (const auto& [id, entry] : doc->allocations) {
    if (!cn::is_valid_alloc_id(id)) std::abort();
    (void)entry;
  }
  auto again = cn::state::state_from_json(
      cn::state::to_json(*doc).dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  if (!again) std::abort();
  // Invalid UTF-8 is replaced on write, so compare only when the round trip kept every byte.
  if (cn::state::to_json(*again).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) !=
      cn::state::to_json(*doc).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) {
    std::abort();
  }
  return 0;
}
