#pragma once
// `cilium-nomad-labeler policy validate FILE...`: the distributor's own check, offline, on files.
#include <iosfwd>
#include <string>
#include <vector>

#include "common/cilium/model/agent_options.h"

namespace cn::labeler {

// One line per file, "<file>: OK" on `out` or "<file>: <pointer>: <reason>" on `err`. A file
// holding a bare rule array (netreap's `cilium policy import` format) is checked as the
// distributor wraps it, a CiliumClusterwideNetworkPolicy's `specs`.
// A valid file that needs an agent option `options` lacks (upstream defaults unless
// --agent-option) is refused with the option named: the distributor would not write it.
// Returns 0 when every file is valid, 1 otherwise (unreadable files count as invalid).
int validate_policy_files(const std::vector<std::string>& files,
                          const cilium::AgentOptions& options, std::ostream& out,
                          std::ostream& err);

}  // namespace cn::labeler
