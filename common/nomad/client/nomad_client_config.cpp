#include "common/nomad/client/nomad_client_config.h"

#include <array>

namespace cn::nomad {

Result<bool> parse_go_bool(std::string_view text) {
  static constexpr std::array<std::string_view, 6> kTrue{"1", "t", "T", "TRUE", "true", "True"};
  static constexpr std::array<std::string_view, 6> kFalse{"0", "f", "F", "FALSE", "false", "False"};
  for (auto t : kTrue) {
    if (text == t) return true;
  }
  for (auto f : kFalse) {
    if (text == f) return false;
  }
  return fail("invalid boolean \"" + std::string(text.substr(0, 32)) + "\"");
}

Result<NomadClientConfig> NomadClientConfig::from_env(const Getenv& getenv) {
  NomadClientConfig c;
  auto read = [&](const char* name, std::string& into) {
    const char* v = getenv(name);
    if (v != nullptr && *v != '\0') into = v;
  };
  // Nomad >= 1.10.3 sets NOMAD_UNIX_ADDR (the task API socket) for tasks with a workload
  // identity in their environment: enough on its own, unless NOMAD_ADDR says otherwise.
  read("NOMAD_UNIX_ADDR", c.address);
  read("NOMAD_ADDR", c.address);
  read("NOMAD_TOKEN", c.token);
  read("NOMAD_REGION", c.region);
  read("NOMAD_CACERT", c.ca_cert);
  read("NOMAD_CAPATH", c.ca_path);
  read("NOMAD_CLIENT_CERT", c.client_cert);
  read("NOMAD_CLIENT_KEY", c.client_key);
  read("NOMAD_TLS_SERVER_NAME", c.tls_server_name);
  std::string skip;
  read("NOMAD_SKIP_VERIFY", skip);
  if (!skip.empty()) {
    auto b = parse_go_bool(skip);
    if (!b) return fail("NOMAD_SKIP_VERIFY: " + b.error().message);
    c.skip_verify = *b;
  }
  return c;
}

std::string NomadClientConfig::redacted() const {
  auto q = [](const std::string& s) { return s.empty() ? std::string("\"\"") : "\"" + s + "\""; };
  std::string out = "address=" + q(address);
  out += " token=" + std::string(token.empty() ? "unset" : "set");
  out += " region=" + q(region);
  out += " ca_cert=" + q(ca_cert);
  out += " ca_path=" + q(ca_path);
  out += " client_cert=" + q(client_cert);
  out += " client_key=" + q(client_key);
  out += " tls_server_name=" + q(tls_server_name);
  out += " skip_verify=" + std::string(skip_verify ? "true" : "false");
  out += " connect_timeout_ms=" + std::to_string(connect_timeout.count());
  out += " request_timeout_ms=" + std::to_string(request_timeout.count());
  return out;
}

}  // namespace cn::nomad
