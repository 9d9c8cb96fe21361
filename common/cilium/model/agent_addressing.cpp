#include "common/cilium/model/agent_addressing.h"

#include <optional>
#include <string>

#include "common/util/json_fields.h"
#include "common/util/json_read.h"

namespace cn::cilium {
namespace {

const json::Fields& addressing_fields() {
  static const json::Fields fields = [] {
    const json::Fields family{{"enabled", {}}, {"alloc-range", {}}};
    return json::Fields{{"status", {{"addressing", {{"ipv4", family}, {"ipv6", family}}}}}};
  }();
  return fields;
}

}  // namespace

Result<std::vector<IpPrefix>> parse_agent_alloc_ranges(std::string_view config_body) {
  auto doc = json::parse_json_text(config_body, "DaemonConfiguration", addressing_fields());
  if (!doc) return std::unexpected(doc.error());
  std::vector<IpPrefix> ranges;
  std::optional<Error> bad;
  json::JsonReader r(*doc, "DaemonConfiguration");
  r.with_object("status", [&](json::JsonReader& status) {
    status.with_object("addressing", [&](json::JsonReader& addressing) {
      for (const char* family : {"ipv4", "ipv6"}) {
        addressing.with_object(family, [&](json::JsonReader& f) {
          bool enabled = false;
          std::string range;
          f.read("enabled", enabled);
          f.read("alloc-range", range);
          if (!enabled || range.empty()) return;
          if (auto prefix = parse_ip_prefix(range)) {
            ranges.push_back(*prefix);
          } else {
            bad = Error{
                ErrorKind::invalid,
                std::string("addressing.") + family + ".alloc-range is not a CIDR: " + range, 0, 0};
          }
        });
      }
    });
  });
  if (!r.ok()) return fail(r.error());
  if (bad) return std::unexpected(*bad);
  return ranges;
}

}  // namespace cn::cilium
