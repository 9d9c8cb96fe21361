#pragma once
// The `{id}` path parameter: `[prefix:]value`, the prefix ending at the FIRST ':' (fact sheet
// section 3). Parse errors carry the text the agent puts in its 400 JSON-string body.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/util/result.h"

namespace cn::fakes::cilium {

enum class IdPrefix {
  cilium_local,
  cilium_global,
  cni_attachment_id,
  cep_name,
  container_id,
  container_name,
  pod_name,
  docker_endpoint,
  ipv4,
  ipv6,
};

struct EndpointRef {
  IdPrefix prefix = IdPrefix::cilium_local;
  std::string value;
  std::uint16_t local_id = 0;  // cilium_local only
};

// `legacy_prefixes`: container-id:, container-name:, pod-name: and docker-endpoint: are known.
// The newest agent's pkg/endpoint/id/id.go (`Parse`, emulated 1.20) dropped all four, so there
// they are unknown prefixes (400), not lookups that miss (404).
Result<EndpointRef> parse_endpoint_ref(std::string_view raw, bool legacy_prefixes = true);
// Go strconv.ParseUint(s, 0, bits): 0x/0o/0b prefixes, a leading 0 means octal, '_' separators
// only after a base prefix.
std::optional<std::uint64_t> parse_go_uint(std::string_view s, int bits);

}  // namespace cn::fakes::cilium
