#include "common/cni/plugin_conf.h"

#include "common/cni/cni_version.h"
#include "common/cni/netconf_keys.h"
#include "common/util/json_read.h"

namespace cn::cni {
namespace {

std::unexpected<CniError> conf_error(ErrorCode code, std::string msg, std::string details = {}) {
  return std::unexpected(CniError{code, std::move(msg), std::move(details)});
}

}  // namespace

std::expected<PluginConf, CniError> parse_plugin_conf(std::string_view stdin_data) {
  if (stdin_data.size() > kMaxStdinBytes) {
    return conf_error(ErrorCode::kDecodeFailure, "network configuration too large",
                      "stdin holds " + std::to_string(stdin_data.size()) + " bytes; limit is " +
                          std::to_string(kMaxStdinBytes));
  }
  nlohmann::json doc = nlohmann::json::parse(stdin_data, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return conf_error(ErrorCode::kDecodeFailure, "failed to decode network configuration",
                      "stdin is not valid JSON");
  }
  if (!doc.is_object()) {
    return conf_error(ErrorCode::kDecodeFailure, "failed to decode network configuration",
                      "stdin must be a JSON object");
  }

  PluginConf conf;
  // A wrong type is a configuration error, not something to coerce: say which key and why.
  json::JsonReader r(doc, "network configuration");
  for (auto [key, field] : {std::pair{"cniVersion", &conf.cni_version},
                            {"name", &conf.name},
                            {"type", &conf.type},
                            {"labeler-socket", &conf.labeler_socket},
                            {"state-file", &conf.state_file},
                            {"log-file", &conf.log_file}}) {
    r.read(key, *field);
    if (!r.ok()) {
      return conf_error(ErrorCode::kInvalidNetworkConfig, std::string("invalid ") + key, r.error());
    }
  }
  if (conf.cni_version.empty()) {
    return conf_error(ErrorCode::kInvalidNetworkConfig, "missing cniVersion");
  }
  if (!is_supported_version(conf.cni_version)) {
    return conf_error(ErrorCode::kIncompatibleVersion, "incompatible CNI versions",
                      "config is \"" + conf.cni_version +
                          "\", plugin supports 0.3.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0");
  }
  if (conf.labeler_socket.empty() || conf.state_file.empty()) {
    return conf_error(ErrorCode::kInvalidNetworkConfig,
                      "labeler-socket and state-file must not be empty");
  }
  r.read_int("wait-for-labels-ms", conf.wait_for_labels_ms, 0, 600'000);
  if (!r.ok()) {
    return conf_error(ErrorCode::kInvalidNetworkConfig, "invalid wait-for-labels-ms", r.error());
  }
  if (const auto* prev = r.object("prevResult")) conf.prev_result = *prev;
  if (!r.ok()) return conf_error(ErrorCode::kInvalidNetworkConfig, "invalid prevResult", r.error());
  conf.unknown_keys = unknown_netconf_keys(doc);
  conf.raw = std::move(doc);
  return conf;
}

}  // namespace cn::cni
