#pragma once
// `cilium-nomad-labeler state`: the node state file for people (a table) or tools (JSON keyed by
// allocation ID). Strictly read-only: it takes no lock, creates nothing and repairs nothing, so
// it is safe beside a running daemon and on a file kept for a post-mortem. A missing or corrupt
// file is an error that names the path, never an empty node.
#include <string>

#include "common/util/result.h"

namespace cn::labeler {

[[nodiscard]] Result<std::string> render_state(const std::string& state_file, bool as_json);

}  // namespace cn::labeler
