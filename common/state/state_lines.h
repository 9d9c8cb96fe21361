#pragma once
// The state file's line framing, as `to_text` writes it:
//
//   {"schema":1,"allocations":{
//   "<alloc id>":{...},
//   "<alloc id>":{...}
//   }}
//
// One allocation per line, sorted by ID. The plugin's ADD and DEL touch one allocation; reading
// the framing lets them decode and re-encode only that line and copy the others as bytes, which
// is most of the plugin's own cost otherwise. Anything that is not exactly this framing (a file
// edited by hand, another writer's layout, damage) is left to the full parser, which accepts
// any valid document and quarantines the rest: the framing is a speed path, never a gate.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cn::state {

struct StateLine {
  std::string_view alloc_id;
  std::string_view body;  // the entry's JSON object, as written
};

// Lines in file order (strictly ascending IDs), or nullopt when the text is not in this framing.
std::optional<std::vector<StateLine>> split_state_lines(std::string_view text);

// The framed text for `lines`, which must be sorted by ID.
std::string join_state_lines(const std::vector<StateLine>& lines);

}  // namespace cn::state
