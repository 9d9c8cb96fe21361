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
  if (!doc->is_object()) return fail(ErrorKind::bad_answer, "ipcache entry: not a JSON object");
  IpEntry entry;
  json::JsonReader reader(*doc, "ipcache entry");
  reader.read("IP", entry.ip);
  reader.read("HostIP", entry.host_ip);
  if (!reader.ok()) return fail(ErrorKind::bad_answer, reader.error());
  if (entry.ip.empty()) return fail(ErrorKind::bad_answer, "ipcache entry: no IP");
  auto id = doc->find("ID");
  if (id == doc->end() || !id->is_number_unsigned())
    return fail(ErrorKind::bad_answer, "ipcache entry: no ID");
  entry.id = id->get<std::uint64_t>();
  return entry;
}

}  // namespace cn::labeler::cluster::kvstore
