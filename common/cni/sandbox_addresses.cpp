#include "common/cni/sandbox_addresses.h"

#include <limits>
#include <set>

#include "common/util/json_read.h"

namespace cn::cni {

namespace {

// An optional string member, as the runtime may leave out or mistype what we only use to
// attribute addresses: anything but a string reads as empty.
std::string lenient_string(const nlohmann::json& object, std::string_view key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return {};
  return it->get<std::string>();
}

}  // namespace

Result<SandboxAddresses> sandbox_addresses(const nlohmann::json& prev_result) {
  SandboxAddresses out;
  std::set<std::uint64_t> sandbox_indexes;
  json::JsonReader r(prev_result, "prevResult");

  if (const auto* interfaces = r.array("interfaces")) {
    for (std::size_t i = 0; i < interfaces->size() && r.ok(); ++i) {
      const auto& iface = (*interfaces)[i];
      if (!iface.is_object()) {
        r.fail(r.at("interfaces", i)
                   .error(std::string("expected an object, got ") + iface.type_name()));
        break;
      }
      if (lenient_string(iface, "sandbox").empty()) continue;
      sandbox_indexes.insert(i);
      if (out.interface_name.empty()) out.interface_name = lenient_string(iface, "name");
    }
  }

  if (const auto* ips = r.array("ips")) {
    for (std::size_t i = 0; i < ips->size() && r.ok(); ++i) {
      json::JsonReader ip((*ips)[i], r.at("ips", i));
      std::string addr;
      // Present, and a string; an empty one is allowed (and yields no address).
      if (!ip.has("address")) ip.fail_at("address", "missing");
      ip.read("address", addr);
      if (!ip.ok()) {
        r.fail(ip.error());
        break;
      }
      // An interface index that is absent, not an integer or out of range is not attributable.
      auto iface = (*ips)[i].find("interface");
      if (iface == (*ips)[i].end()) continue;
      auto index = json::unsigned_in_range(*iface, 0, std::numeric_limits<std::uint64_t>::max());
      if (!index || !sandbox_indexes.contains(*index)) continue;
      if (auto slash = addr.find('/'); slash != std::string::npos) addr.resize(slash);
      if (!addr.empty()) out.ips.push_back(std::move(addr));
    }
  }
  if (!r.ok()) return fail(r.error());
  return out;
}

}  // namespace cn::cni
