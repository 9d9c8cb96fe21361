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

// A framed text after one line changed, as three pieces to write one after the other: `before`
// and `after` point into the old text, `middle` is new. The whole text is never copied, so a
// one-entry update touches no more memory than the line it changes.
struct StateTextEdit {
  std::string_view before;
  std::string middle;
  std::string_view after;
};

// Sets the line of `alloc_id` to `body` (inserted in ID order when absent), or removes it when
// `body` is empty. `lines` must be split_state_lines(text): the pieces are cut at its views.
// Joining the pieces gives join_state_lines of the edited lines, byte for byte.
StateTextEdit edit_state_line(std::string_view text, const std::vector<StateLine>& lines,
                              std::string_view alloc_id, std::string_view body);

}  // namespace cn::state
