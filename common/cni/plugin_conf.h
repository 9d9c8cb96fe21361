#pragma once
// Our entry in the conflist, as the runtime hands it to us on stdin (with cniVersion, name and,
// on ADD/CHECK/DEL, the previous plugin's result injected).
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/cni/cni_error.h"

namespace cn::cni {

struct PluginConf {
  std::string cni_version;
  std::string name;
  std::string type;
  std::string labeler_socket = "/run/cilium-nomad/labeler.sock";
  std::string state_file = "/run/cilium-nomad/state.json";
  int wait_for_labels_ms = 3000;
  std::string log_file;                   // empty: stderr
  std::vector<std::string> unknown_keys;  // neither ours nor the spec's: likely misspelled
  std::optional<nlohmann::json> prev_result;
  nlohmann::json raw;  // the whole document, for GC's attachment lists
};

// Upper bound on stdin: a netconf is a few KiB; anything near this is not one.
inline constexpr std::size_t kMaxStdinBytes = std::size_t{4} * 1024 * 1024;

// Parses and validates stdin. Errors carry the CNI code to report.
[[nodiscard]] std::expected<PluginConf, CniError> parse_plugin_conf(std::string_view stdin_data);

}  // namespace cn::cni
