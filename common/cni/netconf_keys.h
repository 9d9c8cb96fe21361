#pragma once
// The keys our plugin's netconf may hold: its own settings, and what the CNI spec and the runtime
// add (cniVersion, name, type, prevResult, runtimeConfig, the GC attachment lists...). Anything
// else is most likely a misspelled setting, silently ignored otherwise.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace cn::cni {

// Top-level keys of `netconf` (an object) that are neither ours nor the spec's, in document order.
std::vector<std::string> unknown_netconf_keys(const nlohmann::json& netconf);

// The known key closest to `key` (edit distance, case ignored; at most 3 edits, '_' counted as
// '-'), or "" when none is that close.
std::string nearest_netconf_key(std::string_view key);

// One line naming each unknown key and, when there is one, the key it was probably meant to be:
// `wait-for-label-ms (did you mean wait-for-labels-ms?), foo`. Control bytes and quotes in a key
// become '?', long keys and long lists are cut.
std::string describe_unknown_keys(const std::vector<std::string>& keys);

}  // namespace cn::cni
