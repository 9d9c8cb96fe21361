#pragma once
// What this Nomad region's node list and markers prove about a Cilium node, the one rule that
// node reaping (node_reaper.h) and the IP GC (ip_gc.h) act on: a node is "ours and gone" when
// Nomad lists it only as `down`, or no longer lists it while a marker of this region says it
// did. A node Nomad lists in any other status is alive; one with neither proof was never ours.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/nomad/model/node.h"
#include "common/util/result.h"

namespace cn::labeler::cluster {

// How a Nomad node's name maps to the Cilium node name (the agent's hostname as it registers).
enum class NodeNameRule {
  name,        // the Nomad node name as it is
  short_name,  // the Nomad node name up to its first '.' ("web-1.dc1.example" -> "web-1")
};
// "name" or "short-name"; nullopt for anything else.
std::optional<NodeNameRule> parse_node_name_rule(std::string_view text);
std::string cilium_node_name(std::string_view nomad_name, NodeNameRule rule);

struct ListedNode {
  bool alive = false;
  nomad::NodeStub stub;  // the node the name came from (an alive one when several map to it)
};
// Cilium node name -> what the list says. A name several Nomad nodes map to (a node
// re-registered under a new ID, two FQDNs with one short name) is alive while any of them is.
using NomadListing = std::map<std::string, ListedNode, std::less<>>;

// An error (the pass doubts, deletes nothing) when the list is empty, the local node's name is
// unknown or the list lacks it: this labeler runs there, so such a list is not the whole region.
[[nodiscard]] Result<NomadListing> nomad_listing(const std::vector<nomad::NodeStub>& nodes,
                                                 std::string_view local_node, NodeNameRule rule);

enum class NodeVerdict { alive, down, absent, never_listed };
// `our_marker`: a well-formed marker of this region exists for the name.
NodeVerdict node_verdict(const NomadListing& listing, std::string_view name, bool our_marker);

}  // namespace cn::labeler::cluster
