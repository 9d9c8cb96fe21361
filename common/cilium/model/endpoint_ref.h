#pragma once
// The `{id}` of /v1/endpoint/{id}. Which forms work depends on the agent version:
// cni-attachment-id from 1.15, container-id gone for CNI endpoints in 1.20, ipv4/ipv6 and the
// numeric ID always. Built only through the factories, so an ID never carries text that would
// address a different endpoint or path.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/cni/ifname.h"
#include "common/util/result.h"

namespace cn::cilium {

enum class EndpointIdKind { local, cni_attachment, container_id, ipv4, ipv6 };

class EndpointRef {
 public:
  // `cni-attachment-id:<alloc>:<ifname>`; the ifname must be a Linux interface name.
  [[nodiscard]] static Result<EndpointRef> cni_attachment(std::string_view alloc_id,
                                                          std::string_view ifname);
  // `container-id:<alloc>`: Nomad uses the allocation ID as CNI_CONTAINERID.
  [[nodiscard]] static Result<EndpointRef> container_id(std::string_view alloc_id);
  [[nodiscard]] static Result<EndpointRef> ipv4(std::string_view address);
  [[nodiscard]] static Result<EndpointRef> ipv6(std::string_view address);
  // The agent's endpoint number (cilium-local, the default prefix, so printed bare). The API
  // carries it as an int64 but the agent numbers endpoints 1..65535: anything else is refused,
  // never narrowed (65537 narrowed to 16 bits would address endpoint 1).
  [[nodiscard]] static Result<EndpointRef> local(std::int64_t endpoint_id);

  EndpointIdKind kind() const { return kind_; }
  const std::string& value() const { return value_; }

  // The ID as the agent parses it, e.g. `cni-attachment-id:<alloc>:eth0` or `1734`.
  std::string to_string() const;
  // to_string() percent-encoded for one path segment: everything outside [A-Za-z0-9-._~:]
  // becomes %XX, so a '/' can never split the path.
  std::string to_path_segment() const;

  friend bool operator==(const EndpointRef&, const EndpointRef&) = default;

 private:
  EndpointRef(EndpointIdKind kind, std::string value) : kind_(kind), value_(std::move(value)) {}

  EndpointIdKind kind_;
  std::string value_;
};

inline constexpr std::int64_t kMaxEndpointId = 65535;

// The IDs that may find an allocation's endpoint, in the order the agents answer them:
// cni-attachment-id (1.15+; skipped without an interface name), container-id (gone for CNI
// endpoints in 1.20), then each address (a prefix length is dropped). Forms that cannot be built
// from the input are left out.
std::vector<EndpointRef> endpoint_refs_for(std::string_view alloc_id, std::string_view ifname,
                                           const std::vector<std::string>& addresses);

}  // namespace cn::cilium
