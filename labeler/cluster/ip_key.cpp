#include "labeler/cluster/ip_key.h"

#include <nlohmann/json.hpp>

#include "common/util/json_read.h"

namespace cn::labeler::cluster::kvstore {

std::optional<std::string_view> parse_ip_key(std::string_view key) {
  if (!key.starts_with(kIpDefaultPrefix)) return std::nullopt;
  key.remove_prefix(kIpDefaultPrefix.size());
  if (key.empty() || key.find('/') != std::string_view::npos) return std::nullopt;
  return key;
}

std::string ip_key(std::string_view ip) {
  std::string key(kIpDefaultPrefix);
  key.append(ip);
  return key;
}

Result<IpEntry> parse_ip_value(std::string_view value) {
  auto doc = json::parse_json_text(value, "ipcache entry");
  if (!doc) return std::unexpected(doc.error());
  IpEntry entry;
  json::JsonReader reader(*doc, "ipcache entry");
  reader.read_required("IP", entry.ip);
  reader.read("HostIP", entry.host_ip);
  if (reader.ok() && !reader.has("ID")) reader.fail_at("ID", "missing");
  reader.read_int("ID", entry.id);
  if (!reader.ok()) return fail(ErrorKind::bad_answer, reader.error());
  return entry;
}

}  // namespace cn::labeler::cluster::kvstore
