// CNI input: netconf + prevResult (stdin) and CNI_ARGS, as the plugin parses them before any I/O.
// Input: CNI_ARGS text, a NUL byte, then stdin.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/cni/cni_args.h"
#include "common/cni/plugin_conf.h"
#include "common/cni/sandbox_addresses.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto nul = input.find('\0');
  std::string_view args = nul == std::string_view::npos ? std::string_view{} : input.substr(0, nul);
  std::string_view stdin_data = nul == std::string_view::npos ? input : input.substr(nul + 1);

  auto parsed = cn::cni::parse_cni_args(args);
  for (const auto& [k, v] : parsed) {
    if (k.empty() || k.find(';') != std::string::npos) std::abort();  // keys never empty or split
    (void)v;
  }
  (void)cn::cni::nomad_workload_from_args(parsed);

  auto conf = cn::cni::parse_plugin_conf(stdin_data);
  if (!conf) {
    // Every refusal is a well-formed CNI error.
    (void)conf.error().to_json("1.0.0");
    return 0;
  }
  if (conf->wait_for_labels_ms < 0 || conf->wait_for_labels_ms > 600000) std::abort();
  if (conf->prev_result) {
    auto addrs = cn::cni::sandbox_addresses(*conf->prev_result);
    if (addrs) {
      for (const auto& ip : addrs->ips) {
        if (ip.empty() || ip.find('/') != std::string::npos) std::abort();  // prefix stripped
      }
    }
  }
  return 0;
}
