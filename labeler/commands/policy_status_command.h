#pragma once
// `cilium-nomad-labeler policy status`: the distributor's view of each policy, read from the
// status file the daemon keeps beside the state file. Read-only: it never creates or repairs
// anything, and a missing or unreadable file is an error with the reason.
#include <string>

#include "common/util/clock.h"
#include "common/util/result.h"

namespace cn::labeler::policy {

enum class StatusView {
  table,  // fits kTableWidth columns: file names without the directory, long cells cut
  wide,   // every cell whole: full paths, full reasons, change times
  json,   // the status file as it is, for machines
};

// What an 80- to 100-column terminal shows without wrapping.
inline constexpr std::size_t kTableWidth = 100;

[[nodiscard]] Result<std::string> render_policy_status(const std::string& status_file,
                                                       StatusView view, Clock& clock);

}  // namespace cn::labeler::policy
