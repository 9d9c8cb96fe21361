#pragma once
// The `{id}` of /v1/endpoint/{id}. Which forms work depends on the agent version:
// cni-attachment-id from 1.15, container-id gone for CNI endpoints in 1.20, ipv4/ipv6 and the
// numeric ID always. Built only through the factories, so an ID never carries text that would
// address a different endpoint or path.
#include <cstdint>
#include <string>
#include <string_view>

#include "common/util/result.h"

namespace cn::cilium {

enum class EndpointIdKind { local, cni_attachment, container_id, ipv4, ipv6 };

class EndpointRef {
 public:
  // `cni-attachment-id:<alloc>:<ifname>`; the ifname must be a Linux interface name.
  static Result<EndpointRef> cni_attachment(std::string_view alloc_id, std::string_view ifname);
  // `container-id:<alloc>`: Nomad uses the allocation ID as CNI_CONTAINERID.
  static Result<EndpointRef> container_id(std::string_view alloc_id);
  static Result<EndpointRef> ipv4(std::string_view address);
  static Result<EndpointRef> ipv6(std::string_view address);
  // The agent's endpoint number (cilium-local, the default prefix, so printed bare).
  static EndpointRef local(std::uint16_t endpoint_id);

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

// Linux rules (dev_valid_name): 1..15 bytes, not "." or "..", no '/', ':', whitespace or
// control bytes.
bool is_valid_ifname(std::string_view ifname);

}  // namespace cn::cilium
