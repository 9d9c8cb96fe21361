#pragma once
// Verbs newer than the oldest version we speak: CHECK arrived in CNI 0.4.0, GC and STATUS in 1.1.0.
// A config older than the verb gets the same error the reference plugin library (skel) returns,
// so that runtimes see one behaviour across plugins in a chain.
#include <optional>
#include <string_view>

#include "common/cni/cni_error.h"

namespace cn::plugin {

// nullopt when the config's version allows `command`; VERSION and unknown commands pass here.
std::optional<cni::CniError> version_rule_violation(std::string_view command,
                                                    std::string_view config_version);

}  // namespace cn::plugin
