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
  if (!doc->is_object()) return fail(ErrorKind::bad_answer, "in-use report: not a JSON object");
  InUseReport report;
  json::JsonReader reader(*doc, "in-use report");
  reader.read("node", report.node);
  reader.read("at", report.at);
  const nlohmann::json* ids = reader.array("identities");
  if (!reader.ok()) return fail(ErrorKind::bad_answer, reader.error());
  if (report.node.empty()) return fail(ErrorKind::bad_answer, "in-use report: no node");
  if (report.at.empty()) return fail(ErrorKind::bad_answer, "in-use report: no at");
  if (ids == nullptr) return fail(ErrorKind::bad_answer, "in-use report: no identities");
  const nlohmann::json* ips = reader.array("ips");
  if (!reader.ok()) return fail(ErrorKind::bad_answer, reader.error());
  if (ips != nullptr) {
    report.ips.emplace();
    report.ips->reserve(ips->size());
    for (const auto& ip : *ips) {
      if (!ip.is_string())
        return fail(ErrorKind::bad_answer, "in-use report: an IP is not a string");
      report.ips->push_back(ip.get<std::string>());
    }
  }
  report.identities.reserve(ids->size());
  for (const auto& id : *ids) {
    if (!id.is_number_unsigned()) {
      return fail(ErrorKind::bad_answer,
                  "in-use report: an identity is not a non-negative integer");
    }
    report.identities.push_back(id.get<std::uint64_t>());
  }
  return report;
}

}  // namespace cn::labeler::cluster
