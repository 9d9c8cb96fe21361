#include "labeler/services/lb_state_document.h"

#include <nlohmann/json.hpp>

namespace cn::labeler {

namespace {

using Json = nlohmann::ordered_json;

std::string_view family_of(const IpPrefix& address) {
  return address.v6 ? "IPv6" : "IPv4";
}

Json ports_json(const std::vector<LbPort>& ports) {
  Json out = Json::array();
  for (const auto& p : ports) {
    out.push_back({{"name", p.name}, {"protocol", to_string(p.protocol)}, {"port", p.port}});
  }
  return out;
}

Json service_json(const LbService& s) {
  const std::string vip = ip_text(s.vip);
  return {{"metadata",
           {{"name", s.name},
            {"namespace", s.nomad_namespace},
            {"labels", {{kManagedByLabel, kManagedByValue}}}}},
          {"spec",
           {{"type", "ClusterIP"},
            {"clusterIP", vip},
            {"clusterIPs", Json::array({vip})},
            {"ipFamilies", Json::array({family_of(s.vip)})},
            {"ipFamilyPolicy", "SingleStack"},
            {"internalTrafficPolicy", "Cluster"},
            {"sessionAffinity", "None"},
            {"ports", ports_json(s.ports)}}}};
}

// One slice per allocation: a slice's ports apply to all of its addresses, and Nomad hands each
// allocation its own (dynamic) ports.
Json slice_json(const LbService& s, const LbBackend& b) {
  const bool ready = b.state == BackendState::ready;
  Json endpoint = {{"addresses", Json::array({ip_text(b.address)})},
                   // All three written: 1.18.0-1.18.4 read a missing "serving" as "ready".
                   {"conditions", {{"ready", ready}, {"serving", ready}, {"terminating", false}}}};
  if (!b.node_name.empty()) endpoint["nodeName"] = b.node_name;
  return {
      {"metadata",
       {{"name", s.name + "-" + b.alloc_id},
        {"namespace", s.nomad_namespace},
        {"labels", {{"kubernetes.io/service-name", s.name}, {kManagedByLabel, kManagedByValue}}}}},
      {"addressType", family_of(b.address)},
      {"endpoints", Json::array({endpoint})},
      {"ports", ports_json(b.ports)}};
}

}  // namespace

std::string render_lb_state_json(const std::vector<LbService>& services) {
  Json doc = {{"services", Json::array()}, {"endpoints", Json::array()}};
  for (const auto& s : services) {
    doc["services"].push_back(service_json(s));
    for (const auto& b : s.backends) doc["endpoints"].push_back(slice_json(s, b));
  }
  std::string text = doc.dump();
  text += '\n';
  return text;
}

}  // namespace cn::labeler
