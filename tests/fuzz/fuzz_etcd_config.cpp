// The agent's etcd configuration file (common/etcd/etcd_config.h): whatever an operator or a
// tool wrote, parsing never crashes or throws; a refusal is `invalid` and names the file; what
// is accepted has endpoints that all resolve and a client certificate only as a pair.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/etcd/etcd_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = cn::etcd::parse_etcd_config(text, "/fuzz/etcd.yaml");
  if (!config) {
    if (config.error().kind != cn::ErrorKind::invalid) std::abort();
    if (!config.error().message.starts_with("/fuzz/etcd.yaml: ")) std::abort();
    return 0;
  }
  if (config->endpoints.empty()) std::abort();
  if (config->cert_file.empty() != config->key_file.empty()) std::abort();
  for (const auto& endpoint : config->endpoints) {
    auto resolved = cn::etcd::resolve_endpoint(*config, endpoint);
    if (!resolved) std::abort();
    const bool https = resolved->url.starts_with("https://");
    if (!https && !resolved->url.starts_with("http://")) std::abort();
    // Plain endpoints never carry TLS files.
    if (!https && !resolved->tls.ca_file.empty()) std::abort();
  }
  return 0;
}
