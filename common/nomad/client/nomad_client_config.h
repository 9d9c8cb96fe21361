#pragma once
// How the labeler reaches its Nomad agent, read from the same environment variables as Nomad's
// Go api client (api/api.go in hashicorp/nomad) so operators configure both the same way.
#include <chrono>
#include <functional>
#include <string>

#include "common/http/retry.h"
#include "common/util/result.h"

namespace cn::nomad {

struct NomadClientConfig {
  std::string address = "http://127.0.0.1:4646";  // http://, https:// or unix:///path
  std::string token;                              // X-Nomad-Token; never logged
  std::string region;                             // sent as ?region= when set
  std::string ca_cert;
  std::string ca_path;
  std::string client_cert;
  std::string client_key;
  std::string tls_server_name;
  bool skip_verify = false;

  std::chrono::milliseconds connect_timeout{5'000};
  // Per call for the non-blocking reads (capped by the caller's deadline).
  std::chrono::milliseconds request_timeout{30'000};
  // Added to wait + wait/16 (Nomad's jitter) for a blocking query's own timeout.
  std::chrono::milliseconds blocking_margin{5'000};
  http::RetryPolicy retry{.max_attempts = 4,
                          .base_delay = std::chrono::milliseconds{250},
                          .max_delay = std::chrono::milliseconds{5'000},
                          .rate_limited_until_deadline = false};
  std::uint64_t retry_seed = 0;  // 0: random

  using Getenv = std::function<const char*(const char*)>;
  // NOMAD_ADDR (else NOMAD_UNIX_ADDR), NOMAD_TOKEN, NOMAD_REGION, NOMAD_CACERT, NOMAD_CAPATH,
  // NOMAD_CLIENT_CERT, NOMAD_CLIENT_KEY, NOMAD_TLS_SERVER_NAME, NOMAD_SKIP_VERIFY. Unset or empty
  // keeps the default. Fails on an address we cannot use and on a NOMAD_SKIP_VERIFY that is not a
  // Go bool: Go's client silently ignores a bad value there, we refuse to guess about TLS.
  [[nodiscard]] static Result<NomadClientConfig> from_env(const Getenv& getenv);

  // One line for logs: every field, the token shown only as set/unset.
  std::string redacted() const;
};

// Go's strconv.ParseBool: 1 t T TRUE true True / 0 f F FALSE false False.
[[nodiscard]] Result<bool> parse_go_bool(std::string_view text);

}  // namespace cn::nomad
