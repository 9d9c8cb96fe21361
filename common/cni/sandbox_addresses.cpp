#include "common/cni/sandbox_addresses.h"

#include <set>

namespace cn::cni {

Result<SandboxAddresses> sandbox_addresses(const nlohmann::json& prev_result) {
  SandboxAddresses out;
  std::set<long long> sandbox_indexes;

  if (auto it = prev_result.find("interfaces"); it != prev_result.end() && !it->is_null()) {
    if (!it->is_array()) return fail("prevResult.interfaces must be an array");
    for (std::size_t i = 0; i < it->size(); ++i) {
      const auto& iface = (*it)[i];
      if (!iface.is_object()) return fail("prevResult.interfaces[] must be objects");
      auto sandbox = iface.find("sandbox");
      if (sandbox == iface.end() || !sandbox->is_string() || sandbox->get<std::string>().empty()) {
        continue;
      }
      sandbox_indexes.insert(static_cast<long long>(i));
      if (out.interface_name.empty()) {
        if (auto name = iface.find("name"); name != iface.end() && name->is_string()) {
          out.interface_name = name->get<std::string>();
        }
      }
    }
  }

  if (auto it = prev_result.find("ips"); it != prev_result.end() && !it->is_null()) {
    if (!it->is_array()) return fail("prevResult.ips must be an array");
    for (const auto& ip : *it) {
      if (!ip.is_object()) return fail("prevResult.ips[] must be objects");
      auto address = ip.find("address");
      if (address == ip.end() || !address->is_string()) {
        return fail("prevResult.ips[].address must be a string");
      }
      auto iface = ip.find("interface");
      if (iface == ip.end() || !iface->is_number_integer()) continue;  // not attributable
      if (!sandbox_indexes.contains(iface->get<long long>())) continue;
      std::string addr = address->get<std::string>();
      if (auto slash = addr.find('/'); slash != std::string::npos) addr.resize(slash);
      if (!addr.empty()) out.ips.push_back(std::move(addr));
    }
  }
  return out;
}

}  // namespace cn::cni
