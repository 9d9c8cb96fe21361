#include "labeler/services/services_status.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <set>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/util/atomic_file.h"
#include "common/util/json_read.h"
#include "common/util/read_whole_file.h"
#include "labeler/services/service_catalog.h"

namespace cn::labeler {

std::string_view to_string(ServiceState state) {
  switch (state) {
    case ServiceState::served:
      return "served";
    case ServiceState::left_out:
      return "left-out";
  }
  return "left-out";
}

std::string_view to_string(ServiceBackendState state) {
  switch (state) {
    case ServiceBackendState::ready:
      return "ready";
    case ServiceBackendState::not_ready:
      return "not-ready";
    case ServiceBackendState::left_out:
      return "left-out";
  }
  return "left-out";
}

namespace {

using ServiceKey = std::pair<std::string, std::string>;

// Reasons of one thing from several stages, in the order the stages ran, each once.
void add_reason(std::string& to, const std::string& reason) {
  if (reason.empty() || to.find(reason) != std::string::npos) return;
  if (!to.empty()) to += "; ";
  to += reason;
}

std::vector<ServicePortStatus> status_ports(const std::vector<LbPort>& ports) {
  std::vector<ServicePortStatus> out;
  out.reserve(ports.size());
  for (const auto& p : ports) out.push_back({p.name, p.port, p.protocol});
  std::ranges::sort(out, {}, [](const ServicePortStatus& p) { return std::tie(p.label, p.port); });
  return out;
}

ServiceBackendStatus backend_status(const LbBackend& b) {
  ServiceBackendStatus out;
  out.alloc_id = b.alloc_id;
  out.node = b.node_name;
  out.address = ip_text(b.address);
  out.ports = status_ports(b.ports);
  out.state =
      b.state == BackendState::ready ? ServiceBackendState::ready : ServiceBackendState::not_ready;
  if (out.state == ServiceBackendState::not_ready) out.reason = b.state_reason;
  return out;
}

// One service while the status is assembled: backends by allocation, so every source of a
// backend (candidate, gate, catalog problem) lands on the same record.
struct ServiceDraft {
  ServiceStatus status;
  std::map<std::string, ServiceBackendStatus> backends;
  std::set<std::string> served_backends;  // the allocations the gate let through
  bool served = false;
  bool claim_failed = false;
};

// One problem of the catalog (from_gate false) or of the gate onto its service's draft.
void apply_problem(ServiceDraft& d, const LbProblem& p, bool from_gate) {
  if (p.alloc_id.empty()) {
    // The catalog's "no virtual IP assigned yet" says again what the claim's error says better.
    if (from_gate || !d.claim_failed) add_reason(d.status.reason, p.reason);
    return;
  }
  auto [it, fresh] = d.backends.try_emplace(p.alloc_id);
  auto& b = it->second;
  if (fresh) b.alloc_id = p.alloc_id;
  // A catalog problem of a backend that still became a candidate ("registers two addresses")
  // leaves part of it out, not the backend.
  const bool left_out = fresh || (from_gate && !d.served_backends.contains(p.alloc_id));
  if (!left_out) {
    add_reason(b.note, p.reason);
    return;
  }
  if (b.state != ServiceBackendState::left_out) b.reason.clear();
  b.state = ServiceBackendState::left_out;
  add_reason(b.reason, p.reason);
}

ServiceStatus finish_draft(ServiceDraft& d) {
  d.status.state = d.served ? ServiceState::served : ServiceState::left_out;
  if (d.served) {
    d.status.reason.clear();
  } else if (d.status.reason.empty()) {
    d.status.reason = "not handed to the agent";
  }
  for (auto& [alloc_id, b] : d.backends) {
    // A backend the gate dropped from a served service without saying why is still not served.
    if (d.served && b.state != ServiceBackendState::left_out &&
        !d.served_backends.contains(alloc_id)) {
      b.state = ServiceBackendState::left_out;
      b.reason = "not handed to the agent";
    }
    d.status.backends.push_back(std::move(b));
  }
  return std::move(d.status);
}

Result<LbProtocol> parse_protocol(std::string_view text) {
  for (LbProtocol p : {LbProtocol::tcp, LbProtocol::udp, LbProtocol::sctp}) {
    if (to_string(p) == text) return p;
  }
  return fail("unknown protocol \"" + std::string(text) + "\"");
}

Result<LbApi> parse_lb_api(std::string_view text) {
  for (LbApi api : {LbApi::state_file, LbApi::rest}) {
    if (to_string(api) == text) return api;
  }
  return fail("unknown load-balancer API \"" + std::string(text) + "\"");
}

Result<ServiceState> parse_service_state(std::string_view text) {
  for (ServiceState s : {ServiceState::served, ServiceState::left_out}) {
    if (to_string(s) == text) return s;
  }
  return fail("unknown service state \"" + std::string(text) + "\"");
}

Result<ServiceBackendState> parse_backend_state(std::string_view text) {
  for (ServiceBackendState s : {ServiceBackendState::ready, ServiceBackendState::not_ready,
                                ServiceBackendState::left_out}) {
    if (to_string(s) == text) return s;
  }
  return fail("unknown backend state \"" + std::string(text) + "\"");
}

nlohmann::json ports_json(const std::vector<ServicePortStatus>& ports) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : ports) {
    out.push_back({{"label", p.label}, {"port", p.port}, {"protocol", to_string(p.protocol)}});
  }
  return out;
}

// The members "ports" of `r`; an error lands on `r`.
std::vector<ServicePortStatus> read_status_ports(json::JsonReader& r) {
  std::vector<ServicePortStatus> out;
  const auto* list = r.array("ports");
  if (list == nullptr || !r.ok()) return out;
  for (std::size_t i = 0; i < list->size(); ++i) {
    json::JsonReader p((*list)[i], r.at("ports", i));
    ServicePortStatus port;
    std::string protocol;
    p.read("label", port.label);
    p.read_int<std::uint32_t>("port", port.port, 0, 65535);
    p.read("protocol", protocol);
    if (!p.ok()) {
      r.fail(p.error());
      return out;
    }
    auto parsed = parse_protocol(protocol);
    if (!parsed) {
      p.fail_at("protocol", parsed.error().message);
      r.fail(p.error());
      return out;
    }
    port.protocol = *parsed;
    out.push_back(std::move(port));
  }
  return out;
}

Result<ServiceBackendStatus> read_backend(const nlohmann::json& value, json::JsonWhere where) {
  json::JsonReader r(value, std::move(where));
  ServiceBackendStatus b;
  std::string state;
  r.read("alloc_id", b.alloc_id);
  r.read("node", b.node);
  r.read("address", b.address);
  b.ports = read_status_ports(r);
  r.read("state", state);
  r.read("reason", b.reason);
  r.read("note", b.note);
  if (!r.ok()) return fail(r.error());
  auto parsed = parse_backend_state(state);
  if (!parsed) {
    r.fail_at("state", parsed.error().message);
    return fail(r.error());
  }
  b.state = *parsed;
  return b;
}

Result<ServiceStatus> read_service(const nlohmann::json& value, json::JsonWhere where) {
  json::JsonReader r(value, std::move(where));
  ServiceStatus s;
  std::string state;
  r.read("namespace", s.nomad_namespace);
  r.read("name", s.name);
  r.read("vip", s.vip);
  r.read("vip_reason", s.vip_reason);
  s.ports = read_status_ports(r);
  if (const auto* modes = r.object("address_modes"); modes != nullptr) {
    json::JsonReader m(*modes, r.at("address_modes"));
    for (const auto& [mode, count] : modes->items()) {
      int n = 0;
      m.read_int(mode, n, 0, std::numeric_limits<int>::max());
      s.address_modes[mode] = n;
    }
    if (!m.ok()) r.fail(m.error());
  }
  r.read("state", state);
  r.read("reason", s.reason);
  const auto* backends = r.array("backends");
  if (!r.ok()) return fail(r.error());
  auto parsed = parse_service_state(state);
  if (!parsed) {
    r.fail_at("state", parsed.error().message);
    return fail(r.error());
  }
  s.state = *parsed;
  if (backends == nullptr) return s;
  for (std::size_t i = 0; i < backends->size(); ++i) {
    auto b = read_backend((*backends)[i], r.at("backends", i));
    if (!b) return std::unexpected(b.error());
    s.backends.push_back(std::move(*b));
  }
  return s;
}

}  // namespace

ServicesStatus build_services_status(const ServicesPass& pass, const ServicesStatusSource& source) {
  ServicesStatus out;
  out.lb_api = source.lb_api;
  out.lb_target = source.lb_target;
  for (const auto& range : source.vip_ranges) out.vip_ranges.push_back(prefix_text(range));

  std::map<ServiceKey, ServiceDraft> drafts;
  auto draft = [&drafts](const std::string& ns, const std::string& name) -> ServiceDraft& {
    auto [it, fresh] = drafts.try_emplace({ns, name});
    if (fresh) {
      it->second.status.nomad_namespace = ns;
      it->second.status.name = name;
    }
    return it->second;
  };

  for (const auto& d : pass.catalog.described) {
    auto& modes = draft(d.nomad_namespace, d.name).status.address_modes;
    for (const auto& [mode, n] : d.modes) modes[std::string(to_string(mode))] += n;
  }
  for (const auto& p : pass.claim_problems) {
    auto& d = draft(p.nomad_namespace, p.name);
    d.claim_failed = true;
    add_reason(d.status.vip_reason, p.reason);
    add_reason(d.status.reason, "no virtual IP: " + p.reason);
  }
  for (const auto& svc : pass.catalog.services) {
    auto& d = draft(svc.nomad_namespace, svc.name);
    d.status.vip = ip_text(svc.vip);
    d.status.ports = status_ports(svc.ports);
    // Until the gate says otherwise, a backend of a candidate is not served either: the
    // candidate's service may be left out whole.
    for (const auto& b : svc.backends) d.backends[b.alloc_id] = backend_status(b);
  }
  for (const auto& svc : pass.checked.services) {
    auto& d = draft(svc.nomad_namespace, svc.name);
    d.served = true;
    for (const auto& b : svc.backends) {
      d.served_backends.insert(b.alloc_id);
      d.backends[b.alloc_id] = backend_status(b);
    }
  }
  // The catalog's problems first, then the gate's: the order the stages ran.
  for (const auto& p : pass.catalog.problems) {
    apply_problem(draft(p.nomad_namespace, p.name), p, /*from_gate=*/false);
  }
  for (const auto& p : pass.checked.problems) {
    apply_problem(draft(p.nomad_namespace, p.name), p, /*from_gate=*/true);
  }
  out.services.reserve(drafts.size());
  for (auto& [key, d] : drafts) out.services.push_back(finish_draft(d));
  return out;
}

ServicesStatus failed_services_status(const std::optional<ServicesStatus>& last,
                                      const ServicesStatusSource& source, std::string error) {
  ServicesStatus out = last.value_or(ServicesStatus{});
  out.updated_unix_ms = 0;
  out.lb_api = source.lb_api;
  out.lb_target = source.lb_target;
  out.vip_ranges.clear();
  for (const auto& range : source.vip_ranges) out.vip_ranges.push_back(prefix_text(range));
  out.last_pass_ok = false;
  out.last_pass_error = std::move(error);
  return out;
}

bool same_services_status(const ServicesStatus& a, const ServicesStatus& b) {
  // Every member but updated_unix_ms: a new member must be added here too.
  return a.lb_api == b.lb_api && a.lb_target == b.lb_target && a.vip_ranges == b.vip_ranges &&
         a.last_pass_ok == b.last_pass_ok && a.last_pass_error == b.last_pass_error &&
         a.services == b.services;
}

std::string services_status_json(const ServicesStatus& status) {
  nlohmann::json services = nlohmann::json::array();
  for (const auto& s : status.services) {
    nlohmann::json backends = nlohmann::json::array();
    for (const auto& b : s.backends) {
      nlohmann::json backend = {{"alloc_id", b.alloc_id},      {"node", b.node},
                                {"address", b.address},        {"ports", ports_json(b.ports)},
                                {"state", to_string(b.state)}, {"reason", b.reason}};
      if (!b.note.empty()) backend["note"] = b.note;
      backends.push_back(std::move(backend));
    }
    nlohmann::json modes = nlohmann::json::object();
    for (const auto& [mode, n] : s.address_modes) modes[mode] = n;
    services.push_back({{"namespace", s.nomad_namespace},
                        {"name", s.name},
                        {"vip", s.vip},
                        {"vip_reason", s.vip_reason},
                        {"ports", ports_json(s.ports)},
                        {"address_modes", std::move(modes)},
                        {"state", to_string(s.state)},
                        {"reason", s.reason},
                        {"backends", std::move(backends)}});
  }
  nlohmann::json doc = {
      {"version", kServicesStatusVersion},         {"updated_unix_ms", status.updated_unix_ms},
      {"lb_api", to_string(status.lb_api)},        {"lb_target", status.lb_target},
      {"vip_ranges", status.vip_ranges},           {"last_pass_ok", status.last_pass_ok},
      {"last_pass_error", status.last_pass_error}, {"services", std::move(services)}};
  return doc.dump(2) + "\n";
}

Result<ServicesStatus> parse_services_status(std::string_view text) {
  auto doc = json::parse_json_text(text, "services status");
  if (!doc) return std::unexpected(doc.error());
  json::JsonReader r(*doc, "services status");
  std::int64_t version = 0;
  r.read("version", version);
  if (!r.ok()) return fail(r.error());
  if (version == 0) return fail("services status: no version: not a services status file");
  if (version != kServicesStatusVersion) {
    return fail("services status: version " + std::to_string(version) +
                ", this labeler reads version " + std::to_string(kServicesStatusVersion) +
                " (written by a newer labeler?)");
  }
  ServicesStatus status;
  std::int64_t updated = 0;
  std::string api;
  r.read("updated_unix_ms", updated);
  r.read_required("lb_api", api);
  r.read("lb_target", status.lb_target);
  r.read("vip_ranges", status.vip_ranges);
  r.read("last_pass_ok", status.last_pass_ok);
  r.read("last_pass_error", status.last_pass_error);
  const auto* services = r.array("services");
  if (!r.ok()) return fail(r.error());
  status.updated_unix_ms = updated;
  auto parsed_api = parse_lb_api(api);
  if (!parsed_api) {
    r.fail_at("lb_api", parsed_api.error().message);
    return fail(r.error());
  }
  status.lb_api = *parsed_api;
  if (services == nullptr) return status;
  status.services.reserve(services->size());
  for (std::size_t i = 0; i < services->size(); ++i) {
    auto s = read_service((*services)[i], r.at("services", i));
    if (!s) return std::unexpected(s.error());
    status.services.push_back(std::move(*s));
  }
  return status;
}

Result<ServicesStatus> read_services_status(const std::string& path) {
  // Our own file: about 300 bytes a backend, so this holds far more than a cluster's services.
  constexpr std::size_t kMaxStatusBytes = std::size_t{256} << 20;
  auto text = read_whole_file(path, kMaxStatusBytes);
  if (!text) return std::unexpected(text.error());
  auto status = parse_services_status(*text);
  if (!status) return std::unexpected(with_context(path + ": ", status.error()));
  return status;
}

std::string services_status_path(std::string_view state_file) {
  auto parent = std::filesystem::path(state_file).parent_path();
  return (parent.empty() ? std::filesystem::path(".") : parent).append("services-status.json");
}

Result<bool> ServicesStatusFile::publish(ServicesStatus status, WallTime now) {
  if (last_written_ && same_services_status(*last_written_, status)) return false;
  status.updated_unix_ms = unix_millis(now);
  if (auto written = replace_file_atomically(path_, services_status_json(status), 0644); !written) {
    return std::unexpected(written.error());
  }
  last_written_ = std::move(status);
  return true;
}

}  // namespace cn::labeler
