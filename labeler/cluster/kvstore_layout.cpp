#include "labeler/cluster/kvstore_layout.h"

#include <charconv>

#include "common/util/json_read.h"

namespace cn::labeler::cluster::kvstore {

std::optional<std::uint64_t> parse_identity_number(std::string_view text) {
  if (text.empty() || (text.size() > 1 && text.front() == '0')) return std::nullopt;
  std::uint64_t id = 0;
  const auto* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, id);
  // from_chars accepts no sign for unsigned types, so digits only remain to be checked by `ptr`.
  if (ec != std::errc{} || ptr != end) return std::nullopt;
  return id;
}

std::optional<std::uint64_t> parse_master_key(std::string_view key) {
  if (!key.starts_with(kIdentityIdPrefix)) return std::nullopt;
  return parse_identity_number(key.substr(kIdentityIdPrefix.size()));
}

std::string master_key(std::uint64_t id) {
  return std::string(kIdentityIdPrefix) + std::to_string(id);
}

bool is_label_string(std::string_view value) {
  return !value.empty() && value.back() == ';';
}

std::optional<ValueKey> parse_value_key(std::string_view key) {
  if (!key.starts_with(kIdentityValuePrefix)) return std::nullopt;
  const std::string_view rest = key.substr(kIdentityValuePrefix.size());
  const auto slash = rest.rfind('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == rest.size()) {
    return std::nullopt;
  }
  return ValueKey{rest.substr(0, slash), rest.substr(slash + 1)};
}

std::string value_key_prefix(std::string_view labels) {
  std::string prefix(kIdentityValuePrefix);
  prefix.append(labels);
  prefix.push_back('/');
  return prefix;
}

std::string_view lock_path(std::string_view lock_key) {
  const auto slash = lock_key.rfind('/');
  return slash == std::string_view::npos ? lock_key : lock_key.substr(0, slash);
}

std::string node_prefix(std::string_view cluster) {
  std::string prefix(kNodesPrefix);
  prefix.append(cluster);
  prefix.push_back('/');
  return prefix;
}

std::optional<std::string_view> parse_node_key(std::string_view key, std::string_view cluster) {
  if (!key.starts_with(kNodesPrefix)) return std::nullopt;
  std::string_view rest = key.substr(kNodesPrefix.size());
  if (!rest.starts_with(cluster) || rest.size() <= cluster.size() || rest[cluster.size()] != '/') {
    return std::nullopt;
  }
  rest.remove_prefix(cluster.size() + 1);
  if (rest.empty() || rest.find('/') != std::string_view::npos) return std::nullopt;
  return rest;
}

Result<NodeEntry> parse_node_value(std::string_view value) {
  auto doc = json::parse_json_text(value, "node entry");
  if (!doc) return std::unexpected(doc.error());
  NodeEntry entry;
  json::JsonReader reader(*doc, "node entry");
  reader.read_required("Name", entry.name);
  reader.read("Cluster", entry.cluster);
  if (!reader.ok()) return fail(ErrorKind::bad_answer, reader.error());
  auto addresses = doc->find("IPAddresses");
  if (addresses != doc->end() && addresses->is_array()) {
    for (const auto& address : *addresses) {
      if (!address.is_object()) continue;
      auto ip = address.find("IP");
      if (ip != address.end() && ip->is_string() && !ip->get_ref<const std::string&>().empty())
        entry.ips.push_back(ip->get<std::string>());
    }
  }
  return entry;
}

}  // namespace cn::labeler::cluster::kvstore
