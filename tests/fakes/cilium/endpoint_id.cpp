#include "tests/fakes/cilium/endpoint_id.h"
#include "tests/fakes/http/status_error.h"

#include <map>
#include <optional>

namespace cn::fakes::cilium {

std::optional<std::uint64_t> parse_go_uint(std::string_view s, int bits) {
  if (s.empty()) return std::nullopt;
  int base = 10;
  const bool underscores_ok = s.size() > 1 && s[0] == '0';  // Go: only with a base prefix
  if (underscores_ok) {
    const char b = static_cast<char>(s[1] | 0x20);
    if (b == 'x' || b == 'o' || b == 'b') {
      base = b == 'x' ? 16 : b == 'o' ? 8 : 2;
      s.remove_prefix(2);
      if (s.empty()) return std::nullopt;
    } else {
      base = 8;
    }
  }
  const std::uint64_t max = bits >= 64 ? ~0ULL : ((1ULL << bits) - 1);
  std::uint64_t v = 0;
  char prev = 0;
  for (const char c : s) {
    prev = c;
    if (c == '_') {
      if (!underscores_ok) return std::nullopt;
      continue;
    }
    int d = 99;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'z')
      d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'Z')
      d = c - 'A' + 10;
    if (d >= base) return std::nullopt;
    const auto ud = static_cast<std::uint64_t>(d);
    const auto ub = static_cast<std::uint64_t>(base);
    if (v > (max - ud) / ub) return std::nullopt;
    v = v * ub + ud;
  }
  if (prev == '_' || s.find("__") != std::string_view::npos) return std::nullopt;
  return v;
}

Result<EndpointRef> parse_endpoint_ref(std::string_view raw, bool legacy_prefixes) {
  static const std::map<std::string, IdPrefix, std::less<>> kPrefixes = {
      {"cilium-local", IdPrefix::cilium_local},
      {"cilium-global", IdPrefix::cilium_global},
      {"cni-attachment-id", IdPrefix::cni_attachment_id},
      {"cep-name", IdPrefix::cep_name},
      {"container-id", IdPrefix::container_id},
      {"container-name", IdPrefix::container_name},
      {"pod-name", IdPrefix::pod_name},
      {"docker-endpoint", IdPrefix::docker_endpoint},
      {"ipv4", IdPrefix::ipv4},
      {"ipv6", IdPrefix::ipv6},
  };
  EndpointRef ref;
  const std::size_t colon = raw.find(':');
  if (colon == std::string_view::npos) {
    ref.value = std::string(raw);
  } else {
    const std::string_view prefix = raw.substr(0, colon);
    const auto it = kPrefixes.find(prefix);
    const bool legacy =
        it != kPrefixes.end() &&
        (it->second == IdPrefix::container_id || it->second == IdPrefix::container_name ||
         it->second == IdPrefix::pod_name || it->second == IdPrefix::docker_endpoint);
    if (it == kPrefixes.end() || (legacy && !legacy_prefixes)) {
      return http_fail("unknown endpoint ID prefix \"" + std::string(prefix) + "\"", 400);
    }
    ref.prefix = it->second;
    ref.value = std::string(raw.substr(colon + 1));
  }
  switch (ref.prefix) {
    case IdPrefix::cilium_local: {
      const auto n = parse_go_uint(ref.value, 16);
      if (!n) {
        return http_fail("strconv.ParseUint: parsing \"" + ref.value + "\": invalid syntax", 400);
      }
      ref.local_id = static_cast<std::uint16_t>(*n);
      break;
    }
    case IdPrefix::cilium_global:
      return http_fail("Unsupported endpoint ID prefix cilium-global", 400);
    default:
      if (ref.value.empty()) return http_fail("empty endpoint ID value", 400);
      break;
  }
  return ref;
}

}  // namespace cn::fakes::cilium
