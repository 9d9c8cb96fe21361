#include "common/cilium/model/agent_cluster.h"

#include <nlohmann/json.hpp>

#include "common/util/json_read.h"

namespace cn::cilium {

const json::Fields& healthz_cluster_fields() {
  static const json::Fields fields = {{"cluster", {{"self", {}}}}};
  return fields;
}

Result<std::string> cluster_name_of_self(std::string_view self) {
  if (self.empty()) return fail("StatusResponse.cluster.self: empty");
  const auto slash = self.find('/');
  if (slash == std::string_view::npos) return std::string(kDefaultClusterName);
  // Cilium's cluster names have no `/` (they are label values), so the first one splits.
  const auto cluster = self.substr(0, slash);
  if (cluster.empty() || slash + 1 == self.size()) {
    return fail(json::JsonWhere("StatusResponse")
                    .key("cluster")
                    .key("self")
                    .error("\"" + std::string(self) + "\" is not <cluster>/<node>"));
  }
  return std::string(cluster);
}

Result<std::string> parse_cluster_name(std::string_view healthz_body) {
  auto doc = json::parse_json_text(healthz_body, "StatusResponse", healthz_cluster_fields());
  if (!doc) return std::unexpected(doc.error());
  json::JsonReader r(*doc, "StatusResponse");
  std::string self;
  r.with_object("cluster", [&](json::JsonReader& cluster) { cluster.read("self", self); });
  if (!r.ok()) return fail(r.error());
  if (self.empty()) return fail("StatusResponse: no cluster.self (the agent's status not ready?)");
  return cluster_name_of_self(self);
}

}  // namespace cn::cilium
