#pragma once
// The agent's release, as its GET /v1/healthz reports it. The agent has no version field: the
// `cilium` status's `msg` starts with "<version> (v<version>-<revision>)", optionally followed
// by a reason ("1.17.3 (v1.17.3-4b1f6c2e)    Stale status data"), from getStatus in
// daemon/cmd/status.go (1.16) and pkg/status/status_collector.go (later) of cilium/cilium.
// Until every status probe has run once, newer agents answer "Not all probes executed at least
// once" instead: no version then.
#include <optional>
#include <string>
#include <string_view>

#include "common/util/result.h"

namespace cn::cilium {

struct AgentVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;
  // "1.19.5-rc.1": a pre-release sorts before its release.
  bool prerelease = false;

  bool operator==(const AgentVersion&) const = default;
  // Whether this release includes everything of major.minor.patch (a pre-release of exactly
  // that release does not count: it may predate the change).
  bool at_least(int want_major, int want_minor, int want_patch) const;
};

std::string to_string(const AgentVersion& version);

// "1.17.3 (v1.17.3-4b1f6c2e)..." -> 1.17.3; nullopt when the text does not start with one.
std::optional<AgentVersion> parse_agent_version_text(std::string_view msg);

// Body of GET /v1/healthz (brief or not). nullopt: the agent answered without a version (its
// status not collected yet); an error when the body is not a StatusResponse.
[[nodiscard]] Result<std::optional<AgentVersion>> parse_healthz_version(std::string_view body);

}  // namespace cn::cilium
