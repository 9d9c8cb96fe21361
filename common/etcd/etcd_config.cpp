#include "common/etcd/etcd_config.h"

#include <cerrno>
#include <exception>
#include <fstream>
#include <optional>
#include <sstream>

#include <yaml-cpp/yaml.h>

namespace cn::etcd {
namespace {

std::unexpected<Error> refuse(std::string_view where, std::string_view key, std::string_view why) {
  std::string message(where);
  message += ": ";
  if (!key.empty()) {
    message += key;
    message += ": ";
  }
  message += why;
  return fail(ErrorKind::invalid, std::move(message));
}

// Reads a scalar string key; false (and `error` set) when present with another shape. Values are
// never quoted back: the password is one of them.
bool read_string(const YAML::Node& root, const char* key, std::string& out, std::string& error) {
  const YAML::Node node = root[key];
  if (!node || node.IsNull()) return true;
  if (!node.IsScalar()) {
    error = std::string(key) + ": must be a string";
    return false;
  }
  out = node.Scalar();
  return true;
}

bool read_bool(const YAML::Node& root, const char* key, bool& out, std::string& error) {
  const YAML::Node node = root[key];
  if (!node || node.IsNull()) return true;
  if (!node.IsScalar() || !YAML::convert<bool>::decode(node, out)) {
    error = std::string(key) + ": must be true or false";
    return false;
  }
  return true;
}

bool read_endpoints(const YAML::Node& root, std::vector<std::string>& out, std::string& error) {
  const YAML::Node node = root["endpoints"];
  if (!node || node.IsNull()) {
    error = "endpoints: missing (a list of etcd URLs)";
    return false;
  }
  if (!node.IsSequence()) {
    error = "endpoints: must be a list of etcd URLs";
    return false;
  }
  for (const auto& item : node) {
    if (!item.IsScalar() || item.Scalar().empty()) {
      error = "endpoints: every entry must be a non-empty URL";
      return false;
    }
    out.push_back(item.Scalar());
  }
  if (out.empty()) {
    error = "endpoints: the list is empty";
    return false;
  }
  return true;
}

Result<EtcdConfig> read_document(const YAML::Node& root, std::string_view where) {
  if (!root.IsMap()) return refuse(where, "", "not a YAML mapping of etcd client settings");
  EtcdConfig config;
  config.source = std::string(where);
  std::string legacy_ca;
  std::string error;
  const bool read =
      read_endpoints(root, config.endpoints, error) &&
      read_string(root, "trusted-ca-file", config.trusted_ca_file, error) &&
      read_string(root, "ca-file", legacy_ca, error) &&
      read_string(root, "cert-file", config.cert_file, error) &&
      read_string(root, "key-file", config.key_file, error) &&
      read_bool(root, "insecure-transport", config.insecure_transport, error) &&
      read_bool(root, "insecure-skip-tls-verify", config.insecure_skip_tls_verify, error) &&
      read_string(root, "username", config.username, error) &&
      read_string(root, "password", config.password, error);
  if (!read) return refuse(where, "", error);
  if (config.trusted_ca_file.empty() && !config.insecure_transport && !legacy_ca.empty()) {
    config.trusted_ca_file = legacy_ca;
    config.legacy_ca_file = true;
  }
  if (config.cert_file.empty() != config.key_file.empty()) {
    return config.cert_file.empty()
               ? refuse(where, "key-file",
                        "set without cert-file (a client certificate needs both)")
               : refuse(where, "cert-file",
                        "set without key-file (a client certificate needs both)");
  }
  if (config.username.empty() && !config.password.empty()) {
    return refuse(where, "password", "set without username");
  }
  std::optional<bool> tls;
  for (const auto& endpoint : config.endpoints) {
    auto resolved = resolve_endpoint(config, endpoint);
    if (!resolved) return std::unexpected(resolved.error());
    const bool https = resolved->url.starts_with("https://");
    if (tls && *tls != https) {
      return refuse(where, "endpoints",
                    "mixes plain and TLS endpoints; etcd's client uses the first endpoint's "
                    "scheme for all and Cilium shuffles them");
    }
    tls = https;
  }
  return config;
}

}  // namespace

Result<EtcdConfig> parse_etcd_config(std::string_view text, std::string_view where) {
  try {
    return read_document(YAML::Load(std::string(text)), where);
  } catch (const YAML::Exception& e) {
    // yaml-cpp's message names the position and the grammar rule, never the text around it.
    return refuse(where, "",
                  "not valid YAML: " + e.msg + " at line " + std::to_string(e.mark.line + 1) +
                      ", column " + std::to_string(e.mark.column + 1));
  } catch (const std::exception& e) {
    return refuse(where, "", std::string("not readable as YAML: ") + e.what());
  }
}

Result<EtcdConfig> load_etcd_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    return fail_errno("etcd configuration " + path + ": cannot open: " + errno_text(err), err);
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return fail(ErrorKind::io, "etcd configuration " + path + ": read failed");
  return parse_etcd_config(text.str(), path);
}

Result<EtcdEndpoint> resolve_endpoint(const EtcdConfig& config, std::string_view endpoint) {
  EtcdEndpoint out;
  bool tls = false;
  if (endpoint.starts_with("https://")) {
    out.url = std::string(endpoint);
    tls = true;
  } else if (endpoint.starts_with("http://")) {
    out.url = std::string(endpoint);
  } else if (endpoint.find("://") != std::string_view::npos) {
    return refuse(config.source, "endpoints",
                  "\"" + std::string(endpoint) + "\": only http://, https:// or host:port");
  } else {
    tls = !config.insecure_transport;
    out.url = (tls ? "https://" : "http://") + std::string(endpoint);
  }
  while (out.url.ends_with('/')) out.url.pop_back();
  auto target = http::HttpTarget::url(out.url);
  if (!target) {
    return refuse(config.source, "endpoints",
                  "\"" + std::string(endpoint) + "\": " + target.error().message);
  }
  if (!target->path_prefix().empty()) {
    return refuse(config.source, "endpoints",
                  "\"" + std::string(endpoint) + "\": an etcd endpoint has no path");
  }
  if (tls && !config.insecure_transport) {
    out.tls.ca_file = config.trusted_ca_file;
    out.tls.client_cert = config.cert_file;
    out.tls.client_key = config.key_file;
    out.tls.skip_verify = config.insecure_skip_tls_verify;
  }
  return out;
}

}  // namespace cn::etcd
