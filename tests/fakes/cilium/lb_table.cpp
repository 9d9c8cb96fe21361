#include "tests/fakes/cilium/lb_table.h"

#include <algorithm>

namespace cn::fakes::cilium {

using nlohmann::json;

std::string LbFrontend::key() const {
  return address + ":" + std::to_string(port) + "/" + protocol + "/" + scope;
}

const LbService* LbTable::service(const std::string& name) const {
  for (const auto& s : services) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::vector<const LbFrontend*> LbTable::frontends_of(const std::string& name) const {
  std::vector<const LbFrontend*> out;
  for (const auto& f : frontends) {
    if (f.service == name) out.push_back(&f);
  }
  return out;
}

std::size_t LbTable::backend_count() const {
  std::size_t n = 0;
  for (const auto& s : services) n += s.backends.size();
  return n;
}

namespace lb_table_impl {

json lb_frontend_spec(const LbFrontend& fe, const LbService* svc) {
  json backends = json::array();
  for (const auto& be : fe.backends) {
    // Every backend reports preferred: true (frontend.go ToModel).
    json b = {{"ip", be.address},  {"port", be.port},     {"protocol", be.protocol},
              {"state", be.state}, {"weight", be.weight}, {"preferred", true}};
    if (!be.node_name.empty()) b["nodeName"] = be.node_name;
    if (!be.zone.empty()) b["zone"] = be.zone;
    backends.push_back(std::move(b));
  }
  const auto slash = fe.service.find('/');
  json flags = {{"type", fe.type},
                {"namespace", fe.service.substr(0, slash)},
                {"name", fe.service.substr(slash + 1)}};
  if (svc) {
    // The deprecated trafficPolicy repeats the external one.
    flags["trafficPolicy"] = svc->ext_traffic_policy;
    flags["extTrafficPolicy"] = svc->ext_traffic_policy;
    flags["intTrafficPolicy"] = svc->int_traffic_policy;
  }
  json spec = {{"id", fe.id},
               {"frontend-address",
                {{"ip", fe.address},
                 {"port", fe.port},
                 // The L4Type as the Service port wrote it: "TCP", not the spec's "tcp".
                 {"protocol", fe.protocol},
                 {"scope", fe.scope}}},
               {"flags", std::move(flags)}};
  if (!backends.empty()) spec["backend-addresses"] = std::move(backends);
  return spec;
}

}  // namespace lb_table_impl

json lb_service_list_model(const LbTable& table) {
  json out = json::array();
  for (const auto& fe : table.frontends) {
    json spec = lb_table_impl::lb_frontend_spec(fe, table.service(fe.service));
    out.push_back({{"spec", spec}, {"status", {{"realized", spec}}}});
  }
  return out;
}

}  // namespace cn::fakes::cilium
