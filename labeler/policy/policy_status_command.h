#pragma once
// `cilium-nomad-labeler policy status`: the distributor's view of each policy, read from the
// status file the daemon keeps beside the state file. Read-only: it never creates or repairs
// anything, and a missing or unreadable file is an error with the reason.
#include <string>

#include "common/util/clock.h"
#include "common/util/result.h"

namespace cn::labeler::policy {

Result<std::string> render_policy_status(const std::string& status_file, bool as_json,
                                         Clock& clock);

}  // namespace cn::labeler::policy
