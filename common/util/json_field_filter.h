#pragma once
// The engine behind parse_json_text(text, what, fields) and parse_json_list (json_read.h): walks
// JSON text itself, builds only the members a Fields tree lists, and steps over every other
// member with a byte scanner that checks it without decoding it. Kept values (small: IDs,
// indexes, meta) are handed to nlohmann, which checks them fully; the dropped ones (a Nomad
// allocation's task states, resources, the Job's tasks...) are most of the bytes, and nlohmann's
// lexer spent most of the decoding time on them while building nothing.
//
// What a skipped value is checked for: the whole JSON grammar (strings closed, escapes one of
// \" \\ \/ \b \f \n \r \t \uXXXX, no raw control characters in strings, numbers well formed,
// true/false/null spelled out, brackets matched, commas and colons where they belong) and the
// depth limit. What it is not checked for: that its strings are valid UTF-8 (including \u
// surrogate pairs), that its numbers fit any C++ type, and that its keys are unique: none of its
// bytes is ever decoded. The same holds for the keys of filtered objects that no field lists.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/util/json_fields.h"

namespace cn::json {

struct FilterError {
  std::string message;  // e.g. "unterminated string at byte 12"
  bool too_deep = false;
};

// A value deferred by filter_list: its text, checked like a skipped value. Empty when the
// member is absent or null.
using DeferredText = std::string_view;

// `keep` governs the document; a top-level array's elements are filtered as documents of their
// own (a list body). Returns false and fills `error` on malformed input.
bool filter_document(std::string_view text, const Fields& keep, int max_depth, nlohmann::json& out,
                     FilterError& error);

// A top-level array (or null: no elements), element by element: each element filtered by
// `keep`, and the text of its member `deferred` handed over as well, for the caller to decode
// whole or not (filtered as any member if `keep` lists it, e.g. a few members to decide on).
// on_element runs once per element, in order, before the rest of the body is read; a malformed body
// still fails after some elements were handed.
bool filter_list(std::string_view text, const Fields& keep, std::string_view deferred,
                 int max_depth,
                 const std::function<void(nlohmann::json&& element, DeferredText)>& on_element,
                 FilterError& error);

}  // namespace cn::json
