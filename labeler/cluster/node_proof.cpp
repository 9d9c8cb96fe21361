#include "labeler/cluster/node_proof.h"

#include <algorithm>

namespace cn::labeler::cluster {

std::optional<NodeNameRule> parse_node_name_rule(std::string_view text) {
  if (text == "name") return NodeNameRule::name;
  if (text == "short-name") return NodeNameRule::short_name;
  return std::nullopt;
}

std::string cilium_node_name(std::string_view nomad_name, NodeNameRule rule) {
  if (rule == NodeNameRule::short_name)
    return std::string(nomad_name.substr(0, nomad_name.find('.')));
  return std::string(nomad_name);
}

Result<NomadListing> nomad_listing(const std::vector<nomad::NodeStub>& nodes,
                                   std::string_view local_node, NodeNameRule rule) {
  if (nodes.empty()) return fail(ErrorKind::invalid, "Nomad listed no node");
  if (local_node.empty())
    return fail(ErrorKind::invalid, "the local node's name is not configured");
  if (std::none_of(nodes.begin(), nodes.end(),
                   [&](const nomad::NodeStub& n) { return n.name == local_node; })) {
    return fail(ErrorKind::invalid,
                "Nomad's node list lacks the local node " + std::string(local_node));
  }
  NomadListing listing;
  for (const auto& node : nodes) {
    const bool alive = node.status != "down";
    auto [it, added] =
        listing.try_emplace(cilium_node_name(node.name, rule), ListedNode{alive, node});
    if (!added && alive && !it->second.alive) it->second = ListedNode{true, node};
  }
  return listing;
}

NodeVerdict node_verdict(const NomadListing& listing, std::string_view name, bool our_marker) {
  auto seen = listing.find(name);
  if (seen != listing.end()) return seen->second.alive ? NodeVerdict::alive : NodeVerdict::down;
  return our_marker ? NodeVerdict::absent : NodeVerdict::never_listed;
}

}  // namespace cn::labeler::cluster
