#include "common/nomad/model/node.h"

#include <nlohmann/json.hpp>

#include "common/util/json_read.h"

namespace cn::nomad {

namespace {

// A stub carries the node's drivers and host volumes, and with ?os / ?resources its attributes
// and resources: most of each element, none of it read here, so none of it is built.
const json::Fields& node_stub_fields() {
  static const json::Fields fields = {{"ID", {}}, {"Name", {}}, {"Status", {}}};
  return fields;
}

}  // namespace

Result<std::vector<NodeStub>> parse_node_list_text(std::string_view body) {
  auto doc = json::parse_json_text(body, "node list", node_stub_fields());
  if (!doc) return std::unexpected(doc.error());
  // A nil slice encodes as null: no nodes, as [] is.
  if (doc->is_null()) return std::vector<NodeStub>{};
  if (!doc->is_array()) return fail("node list: not a JSON array");
  std::vector<NodeStub> out;
  out.reserve(doc->size());
  for (std::size_t i = 0; i < doc->size(); ++i) {
    json::JsonReader r((*doc)[i], json::JsonWhere("node list").index(i));
    NodeStub node;
    r.read("ID", node.id);
    r.read("Name", node.name);
    r.read("Status", node.status);
    // The whole list is refused, not the element set aside: reaping reads a node missing from
    // the list as gone from Nomad, so a skipped element could get a live node's entry deleted.
    if (r.ok() && node.id.empty()) r.fail_at("ID", "missing");
    if (r.ok() && node.name.empty()) r.fail_at("Name", "missing");
    if (!r.ok()) return fail(r.error());
    out.push_back(std::move(node));
  }
  return out;
}

}  // namespace cn::nomad
