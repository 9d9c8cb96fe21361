#pragma once
// An endpoint's mutable options as the agent keeps them (cilium/cilium pkg/option/endpoint.go,
// the endpoint mutable option library) and PATCH /v1/endpoint/{id}/config's validation of them
// (pkg/option/option.go, OptionLibrary.ValidateConfigurationMap): names are looked up ignoring
// case and stored under the library's spelling, boolean values are what NormalizeBool accepts,
// MonitorAggregationLevel takes its level names. One bad entry refuses the whole map.
#include <map>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "common/util/result.h"

namespace cn::fakes::cilium {

using EndpointOptionMap = std::map<std::string, std::string>;

// The options a new endpoint starts with, as GET /v1/endpoint prints them ("Enabled"/
// "Disabled"); `policy_audit_mode` is the agent's --policy-audit-mode, which endpoints inherit.
EndpointOptionMap default_endpoint_options(bool policy_audit_mode);

// The body's `options` (a ConfigurationMap; absent or null: nothing to change) as the values to
// store. Error kind `invalid` with the agent's message ("unknown option \"X\"", "invalid option
// value X") for the 400 answer.
Result<EndpointOptionMap> validate_endpoint_options(const nlohmann::json& options);

}  // namespace cn::fakes::cilium
