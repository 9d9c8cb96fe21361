#pragma once
// `cilium-nomad-labeler state`: the node state file for people (a table) or tools (JSON keyed by
// allocation ID). Read-only apart from the store's own recovery of a corrupt file.
#include <string>

#include "common/util/clock.h"
#include "common/util/result.h"

namespace cn::labeler {

Result<std::string> render_state(const std::string& state_file, bool as_json, Clock& clock);

}  // namespace cn::labeler
