#include "labeler/commands/services_command.h"

#include <cerrno>

#include "common/util/join.h"
#include "labeler/commands/text_table.h"
#include "labeler/services/services_status.h"

namespace cn::labeler {

namespace {

std::string dash_if_empty(const std::string& s) {
  return s.empty() ? "-" : s;
}

// "http:8080/TCP grpc:9090/TCP"; a service's one unlabelled port: "8080/TCP". The narrow view
// leaves out TCP, the protocol of every Nomad service, for room.
std::string ports_cell(const std::vector<ServicePortStatus>& ports, bool wide) {
  std::vector<std::string> items;
  items.reserve(ports.size());
  for (const auto& p : ports) {
    std::string item = (p.label.empty() ? "" : p.label + ":") + std::to_string(p.port);
    if (wide || p.protocol != LbProtocol::tcp) item += "/" + std::string(to_string(p.protocol));
    items.push_back(std::move(item));
  }
  return dash_if_empty(join(items, " "));
}

// The first 8 characters, the short ID `nomad alloc status` takes.
std::string short_alloc_id(const std::string& alloc_id) {
  constexpr std::size_t kShortId = 8;
  return alloc_id.substr(0, kShortId);
}

// The usual case, one mode for every instance, is one word; a mix counts each.
std::string modes_cell(const std::map<std::string, int>& modes) {
  if (modes.size() == 1) return modes.begin()->first;
  std::vector<std::string> items;
  items.reserve(modes.size());
  for (const auto& [mode, n] : modes) items.push_back(mode + " " + std::to_string(n));
  return dash_if_empty(join(items, ", "));
}

struct BackendCounts {
  std::size_t ready = 0;
  std::size_t not_ready = 0;
  std::size_t left_out = 0;
};

BackendCounts count_backends(const ServiceStatus& s) {
  BackendCounts c;
  for (const auto& b : s.backends) {
    switch (b.state) {
      case ServiceBackendState::ready:
        ++c.ready;
        break;
      case ServiceBackendState::not_ready:
        ++c.not_ready;
        break;
      case ServiceBackendState::left_out:
        ++c.left_out;
        break;
    }
  }
  return c;
}

std::string service_state_cell(const ServiceStatus& s, const BackendCounts& c) {
  if (s.state == ServiceState::left_out) return "left out: " + s.reason;
  if (c.left_out == 0) return "served";
  return "served, " + std::to_string(c.left_out) + " backend" + (c.left_out == 1 ? "" : "s") +
         " left out";
}

std::string backend_state_cell(const ServiceBackendStatus& b) {
  std::string out =
      b.state == ServiceBackendState::left_out ? "left out" : std::string(to_string(b.state));
  if (!b.reason.empty()) out += ": " + b.reason;
  if (!b.note.empty()) out += " (" + b.note + ")";
  return out;
}

std::string lb_line(const ServicesStatus& status) {
  if (status.lb_api == LbApi::state_file)
    return "agent fed through its state file " + dash_if_empty(status.lb_target) + "\n";
  return "agent fed through its REST API" +
         (status.lb_target.empty() || status.lb_target == "rest" ? std::string()
                                                                 : " at " + status.lb_target) +
         "\n";
}

}  // namespace

Result<std::string> render_services(const std::string& status_file, ServicesView view,
                                    Clock& clock) {
  auto status = read_services_status(status_file);
  if (!status) {
    Error error = status.error();
    if (error.sys_errno == ENOENT) {
      error.message = "no services status file " + status_file +
                      ": the services feature is off on this node, or the labeler has not ended "
                      "its first services pass yet";
    }
    return std::unexpected(std::move(error));
  }
  if (view == ServicesView::json) return services_status_json(*status);

  const bool wide = view == ServicesView::wide;
  std::vector<std::vector<std::string>> rows = {
      {"SERVICE", "VIP", "PORTS", "MODE", "BACKENDS", "STATE"}};
  // In the default view only the backends taking no connections: those a person looks for, few
  // even among thousands of services.
  std::vector<std::vector<std::string>> backend_rows;
  if (wide) {
    backend_rows.push_back({"SERVICE", "ALLOCATION", "ADDRESS", "PORTS", "NODE", "STATE"});
  } else {
    backend_rows.push_back({"SERVICE", "ALLOC", "ADDRESS", "STATE"});
  }
  std::size_t served = 0;
  BackendCounts total;
  for (const auto& s : status->services) {
    const auto c = count_backends(s);
    total.ready += c.ready;
    total.not_ready += c.not_ready;
    total.left_out += c.left_out;
    if (s.state == ServiceState::served) ++served;
    const std::string id = s.nomad_namespace + "/" + s.name;
    rows.push_back({id, dash_if_empty(s.vip), ports_cell(s.ports, wide),
                    modes_cell(s.address_modes),
                    std::to_string(c.ready) + "/" + std::to_string(s.backends.size()),
                    service_state_cell(s, c)});
    for (const auto& b : s.backends) {
      if (wide) {
        backend_rows.push_back({id, b.alloc_id, dash_if_empty(b.address), ports_cell(b.ports, true),
                                dash_if_empty(b.node), backend_state_cell(b)});
      } else if (b.state != ServiceBackendState::ready || !b.note.empty()) {
        backend_rows.push_back(
            {id, short_alloc_id(b.alloc_id), dash_if_empty(b.address), backend_state_cell(b)});
      }
    }
  }
  std::string out;
  if (!status->services.empty()) {
    out += wide ? render_table(rows) : render_table(std::move(rows), kServicesTableWidth);
  }
  if (backend_rows.size() > 1) {
    out += wide ? "\nbackends:\n" : "\nbackends not ready or left out:\n";
    out += wide ? render_table(backend_rows)
                : render_table(std::move(backend_rows), kServicesTableWidth);
    out += "\n";
  }
  const std::size_t n = status->services.size();
  out += std::to_string(n) + " service" + (n == 1 ? "" : "s") + ": " + std::to_string(served) +
         " served, " + std::to_string(n - served) +
         " left out; backends: " + std::to_string(total.ready) + " ready, " +
         std::to_string(total.not_ready) + " not ready, " + std::to_string(total.left_out) +
         " left out\n";
  out += "VIP range: " + dash_if_empty(join(status->vip_ranges, ", ")) + "\n";
  out += lb_line(*status);
  if (!status->last_pass_ok) {
    out += "last pass failed: " + status->last_pass_error +
           " (the agent keeps serving what the last good pass gave it)\n";
  }
  if (status->updated_unix_ms) {
    const auto updated = WallTime{std::chrono::milliseconds{status->updated_unix_ms}};
    const auto age = std::chrono::duration_cast<std::chrono::seconds>(clock.wall_now() - updated);
    out += "updated " + rfc3339(updated) + " (" + std::to_string(age.count()) + " s ago)\n";
  }
  if (!wide) out += "--wide: every backend and whole cells; --json: for machines\n";
  return out;
}

}  // namespace cn::labeler
