#pragma once
// The agents' ipcache entries in etcd (pkg/ipcache/kvstore.go, IPIdentitySynchronizer.Upsert;
// the value is identity.IPIdentityPair, pkg/identity/identity.go):
//   key:   cilium/state/ip/v1/<address space>/<ip>, the address space always "default"
//          (ipcache.AddressSpace, never set to anything else by an agent)
//   value: {"IP":"10.1.0.5","Mask":null,"HostIP":"192.168.0.10","ID":256,"Key":0,
//           "Metadata":"","K8sNamespace":"...","K8sPodName":"...",...}, Go's encoding of
//          net.IP being its text form.
// Written on the agent's session lease. Facts and commits: docs/cluster-duties.md.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/util/result.h"

namespace cn::labeler::cluster::kvstore {

inline constexpr std::string_view kIpDefaultPrefix = "cilium/state/ip/v1/default/";

// The IP of `cilium/state/ip/v1/default/<ip>`; nullopt for another shape (a CIDR key has a '/').
std::optional<std::string_view> parse_ip_key(std::string_view key);
std::string ip_key(std::string_view ip);

struct IpEntry {
  std::string ip;        // "IP"
  std::string host_ip;   // "HostIP"; empty when null or absent (older agents)
  std::uint64_t id = 0;  // "ID"
};
// A JSON object with a non-empty string "IP" and a non-negative integer "ID"; "HostIP" a string,
// null or absent. Anything else is an error (unknown shape).
[[nodiscard]] Result<IpEntry> parse_ip_value(std::string_view value);

}  // namespace cn::labeler::cluster::kvstore
