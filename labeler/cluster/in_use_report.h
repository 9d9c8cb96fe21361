#pragma once
// What each labeler publishes for the identity GC: the identity IDs its node's endpoints use,
// under a key leased to that labeler, so a report vanishes with the labeler that wrote it.
//   key:   cilium-nomad/<cluster>/in-use/<node>
//   value: {"node":"<node>","identities":[256,300],"ips":["10.200.0.5"],"at":"<RFC 3339>"}
// `ips` (every endpoint's addresses, for the IP GC) came later: a report without it is still
// read, and proves nothing about its node's IPs.
// The GC reads every report each pass and spares the IDs listed. A report it cannot parse is
// skipped, logged and counted (cilium_nomad_in_use_reports_unreadable): its node's identities
// are then kept by their user keys alone, as the operator keeps every identity.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/util/clock.h"
#include "common/util/result.h"

namespace cn::labeler::cluster {

struct InUseReport {
  std::string node;
  std::vector<std::uint64_t> identities;
  std::optional<std::vector<std::string>> ips;  // nullopt: an older labeler's report
  std::string at;
};

// `cilium-nomad/<cluster>/in-use/`
std::string in_use_prefix(std::string_view cluster);
std::string in_use_key(std::string_view cluster, std::string_view node);

std::string in_use_report_json(std::string_view node, const std::vector<std::uint64_t>& identities,
                               WallTime at);
std::string in_use_report_json(std::string_view node, const std::vector<std::uint64_t>& identities,
                               const std::vector<std::string>& ips, WallTime at);
// Strict: a JSON object with a non-empty string "node", an array "identities" of non-negative
// integers (present, possibly empty: a missing list must not read as "nothing in use") and a
// non-empty string "at". Anything else is an error.
[[nodiscard]] Result<InUseReport> parse_in_use_report(std::string_view value);

}  // namespace cn::labeler::cluster
