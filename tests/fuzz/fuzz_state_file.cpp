// The state file parser: whatever a crash, an old version or a person left in the file, parsing
// never crashes, and what it accepts survives a write/read round trip unchanged. The plugin's
// line framing agrees with the full parser on every entry it lets through.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/state/state_entry.h"
#include "common/state/state_lines.h"
#include "common/util/alloc_id.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto lines = cn::state::split_state_lines(text);
  if (lines && cn::state::join_state_lines(*lines) != text) std::abort();
  auto doc = cn::state::state_from_json(text);
  if (lines && doc) {
    // A crafted line can hide a second key after its object (`{..},"<id>":{..}`); only our own
    // writer produces the framing, so agreement is required just for lines that decode alone.
    for (const auto& line : *lines) {
      if (cn::state::entry_from_text(line.body) &&
          !doc->allocations.contains(std::string(line.alloc_id))) {
        std::abort();
      }
    }
  }
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
