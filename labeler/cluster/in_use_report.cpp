#include "labeler/cluster/in_use_report.h"

#include <nlohmann/json.hpp>

#include "common/util/json_read.h"

namespace cn::labeler::cluster {

std::string in_use_prefix(std::string_view cluster) {
  std::string prefix = "cilium-nomad/";
  prefix.append(cluster);
  prefix.append("/in-use/");
  return prefix;
}

std::string in_use_key(std::string_view cluster, std::string_view node) {
  return in_use_prefix(cluster).append(node);
}

std::string in_use_report_json(std::string_view node, const std::vector<std::uint64_t>& identities,
                               WallTime at) {
  nlohmann::json doc = {{"node", node}, {"identities", identities}, {"at", rfc3339(at)}};
  return doc.dump();
}

std::string in_use_report_json(std::string_view node, const std::vector<std::uint64_t>& identities,
                               const std::vector<std::string>& ips, WallTime at) {
  nlohmann::json doc = {
      {"node", node}, {"identities", identities}, {"ips", ips}, {"at", rfc3339(at)}};
  return doc.dump();
}

Result<InUseReport> parse_in_use_report(std::string_view value) {
  auto doc = json::parse_json_text(value, "in-use report");
  if (!doc) return std::unexpected(doc.error());
  InUseReport report;
  json::JsonReader reader(*doc, "in-use report");
  reader.read_required("node", report.node);
  reader.read_required("at", report.at);
  const nlohmann::json* ids = reader.array("identities");
  if (reader.ok() && ids == nullptr) reader.fail_at("identities", "missing");
  // Absent: a report from before IPs were reported (nullopt), not an empty list.
  if (reader.ok() && reader.array("ips") != nullptr) reader.read("ips", report.ips.emplace());
  if (!reader.ok()) return fail(ErrorKind::bad_answer, reader.error());
  report.identities.reserve(ids->size());
  for (std::size_t i = 0; i < ids->size(); ++i) {
    auto id = json::unsigned_in_range((*ids)[i], 0, std::numeric_limits<std::uint64_t>::max());
    if (!id) return fail(ErrorKind::bad_answer, reader.at("identities", i).error(id.error()));
    report.identities.push_back(*id);
  }
  return report;
}

}  // namespace cn::labeler::cluster
