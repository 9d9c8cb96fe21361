#pragma once
// The agent's cluster name, as its GET /v1/healthz tells it. The agent has no field for the name
// alone: `cluster.self` is its absolute node name (GetAbsoluteNodeName in cilium/cilium
// pkg/node/types/nodename.go), `<cluster>/<node>`, or the bare node name when the cluster name
// is `default` or empty.
#include <string>
#include <string_view>

#include "common/util/json_fields.h"
#include "common/util/result.h"

namespace cn::cilium {

inline constexpr std::string_view kDefaultClusterName = "default";

// The members parse_cluster_name() reads: keep it in step with agent_cluster.cpp.
const json::Fields& healthz_cluster_fields();

// `eu/node1` -> `eu`; `node1` -> `default`. Fails (invalid) on an empty self or an empty part.
[[nodiscard]] Result<std::string> cluster_name_of_self(std::string_view self);

// Body of GET /v1/healthz (not brief: a brief answer has no `cluster`). Fails (invalid) on a
// wrong type, and also when `cluster.self` is missing or empty: the agent leaves `cluster` out
// until its status collector first ran, and reading that as `default` could relabel every
// endpoint with the wrong name.
[[nodiscard]] Result<std::string> parse_cluster_name(std::string_view healthz_body);

}  // namespace cn::cilium
