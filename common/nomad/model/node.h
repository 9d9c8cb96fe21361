#pragma once
// Nomad's client nodes as GET /v1/nodes lists them (NodeListStub in nomad/structs/structs.go):
// node reaping (docs/cluster-duties.md) needs each node's name and status.
#include <string>
#include <string_view>
#include <vector>

#include "common/util/result.h"

namespace cn::nomad {

struct NodeStub {
  std::string id;
  std::string name;
  // "initializing", "ready", "down" or "disconnected" (structs.NodeStatus*); kept as text, since
  // a newer Nomad may add one and reaping acts only on "down".
  std::string status;
};

// Body of GET /v1/nodes: a JSON array of NodeListStub.
[[nodiscard]] Result<std::vector<NodeStub>> parse_node_list_text(std::string_view body);

}  // namespace cn::nomad
