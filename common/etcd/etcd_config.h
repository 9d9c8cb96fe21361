#pragma once
// The etcd client configuration file the Cilium agent reads (--kvstore-opt etcd.config=FILE), so
// the labeler talks to the same etcd with the same credentials. The agent hands the file to
// etcd's client/v3/yaml.NewConfig (YAML or JSON); Cilium 1.16 then falls back to the legacy
// `ca-file` in its own newConfig wrapper (cilium/cilium pkg/kvstore/etcd.go), a fallback 1.17
// dropped (cilium commit f101330bbb). What the agent does with each key, and what we do:
//   endpoints                list of URLs; required (the agent fails without endpoints too).
//   insecure-transport       true: no TLS configuration at all (cert, key and CAs ignored).
//   trusted-ca-file          CAs that verify the server; empty: the system store.
//   ca-file                  1.16 uses it when trusted-ca-file is empty and insecure-transport is
//                            off; 1.17+ ignores it (system CAs). We follow 1.16, which a file
//                            written for a newer agent only meets when it still carries the key,
//                            and say so (legacy_ca_file) for the caller to warn about.
//   cert-file, key-file      client certificate; the yaml loader uses them only as a pair and
//                            silently ignores one alone; we refuse one alone instead, since a
//                            half-configured mTLS setup is an operator mistake, not a choice.
//                            curl reads both files for each new connection, so a rotated
//                            certificate is picked up as the agent's reloader picks it up.
//   insecure-skip-tls-verify accept any server certificate.
//   username, password       etcd auth: the client authenticates and sends the token.
// Other keys of etcd's client Config (dial-timeout, auto-sync-interval, ...) are ignored, as the
// yaml loader ignores keys it does not know.
//
// The endpoint's scheme decides TLS, as in etcd's client (client/v3 internal/endpoint):
// http:// is plain even when TLS files are set, https:// is TLS (with the system CAs when the
// file names none), and a bare host:port is TLS unless insecure-transport is set, because the
// yaml loader always builds a TLS configuration then. etcd's client takes the scheme of the first
// endpoint for all of them and Cilium shuffles the list, so an agent with mixed schemes works or
// not depending on the shuffle: such a file is refused here.
#include <string>
#include <string_view>
#include <vector>

#include "common/http/http_client.h"
#include "common/util/result.h"

namespace cn::etcd {

struct EtcdConfig {
  std::string source;                  // the file it came from, for messages
  std::vector<std::string> endpoints;  // as written in the file
  std::string trusted_ca_file;         // after the ca-file fallback
  bool legacy_ca_file = false;         // trusted_ca_file came from ca-file
  std::string cert_file;
  std::string key_file;
  bool insecure_transport = false;
  bool insecure_skip_tls_verify = false;
  std::string username;
  std::string password;  // never logged nor put in a message
};

// `where` names the text in errors (the file path).
[[nodiscard]] Result<EtcdConfig> parse_etcd_config(std::string_view text, std::string_view where);
[[nodiscard]] Result<EtcdConfig> load_etcd_config(const std::string& path);

// One endpoint as the HTTP layer needs it: its base URL with the scheme settled (see above) and
// the TLS options for it (empty for http://).
struct EtcdEndpoint {
  std::string url;  // "https://10.0.0.5:2379"
  http::TlsOptions tls;
};
[[nodiscard]] Result<EtcdEndpoint> resolve_endpoint(const EtcdConfig& config,
                                                    std::string_view endpoint);

}  // namespace cn::etcd
