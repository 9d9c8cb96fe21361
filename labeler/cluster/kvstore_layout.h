#pragma once
// The keys of Cilium's etcd kvstore that the cluster duties read and delete, and the parsers that
// tell a key of the expected shape from anything else. A key of an unknown shape is skipped and
// counted by the duties, never deleted: a newer Cilium may write keys we do not understand.
//
// The facts, with the upstream files and commits they were read in: docs/cluster-duties.md.
// Keys and values are raw bytes; the agents' etcd backend does not encode them.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/util/result.h"

namespace cn::labeler::cluster::kvstore {

// Identity allocator (pkg/kvstore/allocator over cache.IdentitiesPath).
inline constexpr std::string_view kIdentityIdPrefix = "cilium/state/identities/v1/id/";
inline constexpr std::string_view kIdentityValuePrefix = "cilium/state/identities/v1/value/";
inline constexpr std::string_view kIdentityLockPrefix = "cilium/state/identities/v1/locks/";
// Node registrations (pkg/kvstore/store over nodeStore.NodeStorePrefix).
inline constexpr std::string_view kNodesPrefix = "cilium/state/nodes/v1/";
// The key the operator's kvstore watchdog writes and the agents watch (kvstore.HeartbeatPath).
inline constexpr std::string_view kHeartbeatKey = "cilium/.heartbeat";

// A canonical decimal identity: digits only, no sign, no leading zero, fits 64 bits. Cilium
// writes IDs with strconv.FormatUint; anything else did not come from an agent.
std::optional<std::uint64_t> parse_identity_number(std::string_view text);

// `cilium/state/identities/v1/id/<ID>` -> ID; nullopt for any other shape.
std::optional<std::uint64_t> parse_master_key(std::string_view key);
std::string master_key(std::uint64_t id);

// A master key's value: the label string (`source:key=value;` per label, a ';' after each). The
// duties only need it to be a label string they can derive the value prefix from: non-empty and
// ending in ';'.
bool is_label_string(std::string_view value);

// `cilium/state/identities/v1/value/<labels>/<node>`: the label string is everything up to the
// LAST '/', since labels may hold '/' themselves (k8s:app.kubernetes.io/name=x;).
struct ValueKey {
  std::string_view labels;
  std::string_view node;  // the agent's node IP
};
std::optional<ValueKey> parse_value_key(std::string_view key);
// `cilium/state/identities/v1/value/<labels>/`: every value key of that label string. (It also
// covers a label string that begins with `<labels>/`, which can only make a check stricter.)
std::string value_key_prefix(std::string_view labels);

// The mutex a lock key belongs to: the key without its last segment, which etcd's concurrency
// mutex sets to the holder's lease in hex (`locks/<labels>/<lease hex>`, `locks/id/<ID>/<hex>`).
std::string_view lock_path(std::string_view lock_key);

// `cilium/state/nodes/v1/<cluster>/`.
std::string node_prefix(std::string_view cluster);
// The node name of `cilium/state/nodes/v1/<cluster>/<name>`; nullopt for another cluster, an
// empty name or one with a '/'.
std::optional<std::string_view> parse_node_key(std::string_view key, std::string_view cluster);

// The fields of a node entry's JSON (Go field names) the duties read: the reaper checks name and
// cluster before it deletes it; the IP GC finds a HostIP's node by its addresses.
struct NodeEntry {
  std::string name;              // "Name"
  std::string cluster;           // "Cluster"
  std::vector<std::string> ips;  // "IPAddresses"[]."IP", every type; malformed ones left out
};
// A JSON object with a non-empty string "Name"; any other value is an error (unknown shape).
[[nodiscard]] Result<NodeEntry> parse_node_value(std::string_view value);

}  // namespace cn::labeler::cluster::kvstore
