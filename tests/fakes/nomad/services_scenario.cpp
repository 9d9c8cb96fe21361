// Native service registrations as the Nomad client writes them (Upsert, DeleteByID) and the
// deletions the servers do inside other transactions, per emulated version
// (nomad/state/state_store_service_registration.go, nomad/state/events.go).
#include <algorithm>
#include <cctype>

#include "tests/fakes/http/status_error.h"
#include "tests/fakes/nomad/encoder.h"
#include "tests/fakes/nomad/fake_nomad.h"

namespace cn::fakes {

namespace {

bool is_port_number(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

const PortSpec* find_port(const GroupSpec& g, const std::string& label) {
  for (const auto& p : g.ports) {
    if (p.label == label) return &p;
  }
  return nullptr;
}

const char* default_output(const std::string& status) {
  if (status == "pending") return "nomad: waiting to run";
  if (status == "success") return "nomad: http ok";
  return "nomad: connection refused";
}

}  // namespace

Event FakeNomad::service_event_locked(const ServiceRegistration& reg,
                                      const std::string& type) const {
  Event e;
  e.topic = "Service";
  e.type = type;
  e.key = reg.id;
  e.namespace_ = reg.namespace_;
  e.filter_keys = std::vector<std::string>{reg.job_id, reg.service_name};
  e.payload = nlohmann::json{{"Service", encode_service_registration(reg)}};
  return e;
}

Result<std::vector<std::string>> FakeNomad::register_services(const std::string& alloc_id,
                                                              RegisterServicesOptions options) {
  Lock lock(mu_);
  auto it = allocs_.find(alloc_id);
  if (it == allocs_.end()) return http_fail("alloc not found", 404);
  const Alloc& a = it->second;
  const GroupSpec* group = a.job ? a.job->group(a.task_group) : nullptr;
  if (!group) return http_fail("alloc has no task group", 400);
  std::string node_dc = cfg_.datacenter;
  if (auto n = nodes_.find(a.node_id); n != nodes_.end()) node_dc = n->second.datacenter;

  std::vector<ServiceRegistration> wanted;
  std::vector<CheckResult> new_checks;
  for (const auto& svc : group->services) {
    if (svc.provider != "nomad" || svc.task != options.task) continue;
    ServiceRegistration r;
    r.id = service_registration_id(a.id, svc.task, a.task_group, svc.name, svc.port_label);
    r.service_name = svc.name;
    r.namespace_ = a.namespace_;
    r.node_id = a.node_id;
    r.datacenter = node_dc;
    r.job_id = a.job_id;
    r.alloc_id = a.id;
    r.task = svc.task;
    r.tags = options.canary && !svc.canary_tags.empty() ? svc.canary_tags : svc.tags;
    // client/serviceregistration/address.go GetAddress; a task inside a group netns has no
    // driver network, so "auto" is "host" (docker advertises no address there).
    const PortSpec* port = find_port(*group, svc.port_label);
    auto host_port = a.port_values.find(svc.port_label);
    if (svc.address_mode == "auto" || svc.address_mode == "host") {
      if (is_port_number(svc.port_label)) {
        r.port = std::stoi(svc.port_label);
        r.address = svc.address_mode == "host" ? "" : a.host_ip;
      } else {
        r.address = a.host_ip;
        r.port = host_port != a.port_values.end() ? host_port->second : 0;
        if (!svc.port_label.empty() && !port) {
          return http_fail("invalid port \"" + svc.port_label + "\": port label not found", 400);
        }
      }
    } else if (svc.address_mode == "alloc") {
      if (!svc.task.empty()) {
        return http_fail("service address_mode alloc is only allowed in group services", 400);
      }
      r.address = !options.alloc_address.empty() ? options.alloc_address
                  : a.network_status             ? a.network_status->address
                                                 : "";
      if (r.address.empty()) {
        return http_fail("cannot use address_mode=\"alloc\": no allocation network status reported",
                         400);
      }
      if (is_port_number(svc.port_label)) {
        r.port = std::stoi(svc.port_label);
      } else if (port) {
        int value = host_port != a.port_values.end() ? host_port->second : 0;
        // A dynamic port's to = -1 maps to its own value (nomad/structs/network.go).
        r.port = port->to > 0 ? port->to : value;
      }
    } else {
      return http_fail("address_mode " + svc.address_mode + " is not modelled by the fake", 400);
    }
    // ServiceRegistration.Validate, before the Upsert reaches Raft: nothing is written.
    if (r.address == "0.0.0.0" || r.address == "::" || r.address == "[::]") {
      return http_fail("invalid service registration address", 400);
    }
    for (const auto& c : svc.checks) {
      CheckResult res;
      res.check = c.name;
      res.group = a.name;
      res.service = svc.name;
      res.task = svc.task;
      res.mode = c.readiness ? "readiness" : "healthiness";
      res.id =
          check_id(a.id, a.task_group, svc.name, c.name, version_at_least(cfg_.version, 2, 0, 5));
      res.timestamp =
          std::chrono::duration_cast<std::chrono::seconds>(clock_.wall_now().time_since_epoch())
              .count();
      new_checks.push_back(res);
    }
    wanted.push_back(std::move(r));
  }

  // nsd.go UpdateWorkload: the new set is upserted first, then what disappeared is deleted.
  std::vector<std::string> ids;
  std::vector<ServiceRegistration> changed;
  for (const auto& r : wanted) {
    ids.push_back(r.id);
    auto cur = services_.rows().find({r.namespace_, r.id});
    if (cur == services_.rows().end() || !cur->second.same_content(r)) changed.push_back(r);
  }
  if (!wanted.empty()) {
    // The Upsert goes through Raft even when nothing changes: the Raft index moves, the
    // table index and the event stream do not.
    std::uint64_t idx = bump_locked();
    std::vector<Event> events;
    for (auto& r : changed) {
      services_.upsert(r, idx);
      events.push_back(
          service_event_locked(services_.rows().at({r.namespace_, r.id}), "ServiceRegistration"));
    }
    commit_locked(idx, std::move(events));
  }
  for (const auto& old : services_.of_alloc(alloc_id)) {
    if (old.task != options.task || std::find(ids.begin(), ids.end(), old.id) != ids.end()) {
      continue;
    }
    std::uint64_t idx = bump_locked();
    auto gone = services_.remove(old.namespace_, old.id, idx);
    commit_locked(idx, {service_event_locked(*gone, "ServiceDeregistration")});
  }
  auto& results = checks_[alloc_id];
  for (auto& c : new_checks) results.try_emplace(c.id, c);
  return ids;
}

Status FakeNomad::deregister_services(const std::string& alloc_id,
                                      std::optional<std::string> task) {
  Lock lock(mu_);
  if (!allocs_.contains(alloc_id)) return http_fail("alloc not found", 404);
  for (const auto& r : services_.of_alloc(alloc_id)) {
    if (task && r.task != *task) continue;
    std::uint64_t idx = bump_locked();
    auto gone = services_.remove(r.namespace_, r.id, idx);
    commit_locked(idx, {service_event_locked(*gone, "ServiceDeregistration")});
  }
  // checks_hook.go PreKill purges the alloc's results.
  if (!task) checks_.erase(alloc_id);
  return {};
}

Status FakeNomad::delete_service_registration(const std::string& ns, const std::string& id) {
  Lock lock(mu_);
  // DeleteByID applies through Raft first; the miss is the state store's answer to it.
  std::uint64_t idx = bump_locked();
  if (!services_.rows().contains({ns, id})) return http_fail("service registration not found", 404);
  auto gone = services_.remove(ns, id, idx);
  commit_locked(idx, {service_event_locked(*gone, "ServiceDeregistration")});
  return {};
}

std::vector<Event> FakeNomad::delete_alloc_services_locked(const std::string& alloc_id,
                                                           std::uint64_t index,
                                                           const std::string& type) {
  std::vector<Event> events;
  for (const auto& r : services_.of_alloc(alloc_id)) {
    auto gone = services_.remove(r.namespace_, r.id, index);
    if (!type.empty()) events.push_back(service_event_locked(*gone, type));
  }
  return events;
}

// GH-20590 (1.8.0): the servers delete the registrations of allocs whose client status is
// terminal (complete, failed or lost: Allocation.ClientTerminalStatus) in the same transaction
// (nomad/state/state_store_service_registration.go deregisterServicesForTerminalAllocs).
std::vector<Event> FakeNomad::services_on_client_terminal_locked(const Alloc& a,
                                                                 std::uint64_t index) {
  if (!version_at_least(cfg_.version, 1, 8, 0)) return {};
  if (a.client_status != "complete" && a.client_status != "failed" && a.client_status != "lost") {
    return {};
  }
  return delete_alloc_services_locked(a.id, index, "AllocationUpdated");
}

// GH-20590 (1.8.0): alloc GC deletes the registrations too, in a transaction without a
// message type, hence no event.
void FakeNomad::services_on_gc_locked(const std::string& alloc_id, std::uint64_t index) {
  checks_.erase(alloc_id);
  if (!version_at_least(cfg_.version, 1, 8, 0)) return;
  delete_alloc_services_locked(alloc_id, index, "");
}

std::vector<Event> FakeNomad::services_on_node_down_locked(const std::string& node_id,
                                                           std::uint64_t index) {
  if (!version_at_least(cfg_.version, 1, 8, 0) || version_at_least(cfg_.version, 1, 10, 4)) {
    return {};
  }
  std::vector<Event> events;
  for (const auto& [id, a] : allocs_) {
    if (a.node_id != node_id) continue;
    auto more = delete_alloc_services_locked(id, index, "NodeStreamEvent");
    events.insert(events.end(), more.begin(), more.end());
  }
  return events;
}

// Up to 1.7.x nomad/node_endpoint.go deletes the node's registrations in a Raft entry of its
// own after the node update.
void FakeNomad::services_after_node_down_locked(const std::string& node_id) {
  if (version_at_least(cfg_.version, 1, 8, 0)) return;
  bool any = std::any_of(services_.rows().begin(), services_.rows().end(),
                         [&](const auto& kv) { return kv.second.node_id == node_id; });
  if (!any) return;
  std::uint64_t idx = bump_locked();
  std::vector<Event> events;
  for (const auto& [id, a] : allocs_) {
    if (a.node_id != node_id) continue;
    auto more = delete_alloc_services_locked(id, idx, "ServiceDeregistration");
    events.insert(events.end(), more.begin(), more.end());
  }
  commit_locked(idx, std::move(events));
}

Status FakeNomad::mark_alloc_lost(const std::string& alloc_id) {
  Lock lock(mu_);
  auto it = allocs_.find(alloc_id);
  if (it == allocs_.end()) return http_fail("alloc not found", 404);
  std::uint64_t idx = bump_locked();
  Alloc& a = it->second;
  a.desired_status = "stop";
  a.desired_description = "alloc is lost since its node is down";
  apply_client_status_locked(a, "lost", "");
  a.modify_index = a.alloc_modify_index = idx;
  a.modify_time = unix_nanos(clock_.wall_now());
  allocs_index_ = idx;
  std::vector<Event> events = {alloc_event_locked(a, "PlanResult")};
  // GH-26424 (1.10.4): plan apply deletes the registrations of allocs it marks lost.
  if (version_at_least(cfg_.version, 1, 10, 4)) {
    auto more = delete_alloc_services_locked(alloc_id, idx, "PlanResult");
    events.insert(events.end(), more.begin(), more.end());
  }
  commit_locked(idx, std::move(events));
  return {};
}

Status FakeNomad::update_alloc_in_place(const std::string& alloc_id) {
  Lock lock(mu_);
  auto it = allocs_.find(alloc_id);
  if (it == allocs_.end()) return http_fail("alloc not found", 404);
  Alloc& a = it->second;
  auto job = jobs_.find(job_key(a.namespace_, a.job_id));
  if (job == jobs_.end()) return http_fail("job not found", 404);
  std::uint64_t idx = bump_locked();
  a.job = job->second;
  a.modify_index = a.alloc_modify_index = idx;
  a.modify_time = unix_nanos(clock_.wall_now());
  allocs_index_ = idx;
  commit_locked(idx, {alloc_event_locked(a, "PlanResult")});
  return {};
}

Status FakeNomad::set_check_status(const std::string& alloc_id, const std::string& check,
                                   const std::string& status, int status_code, std::string output) {
  if (status != "pending" && status != "success" && status != "failure") {
    return http_fail("invalid check status " + status, 400);
  }
  Lock lock(mu_);
  auto it = checks_.find(alloc_id);
  if (it == checks_.end()) return http_fail("alloc has no check results", 404);
  for (auto& [id, c] : it->second) {
    if (c.check != check) continue;
    c.status = status;
    c.status_code = status_code;
    c.output = output.empty() ? default_output(status) : std::move(output);
    c.timestamp =
        std::chrono::duration_cast<std::chrono::seconds>(clock_.wall_now().time_since_epoch())
            .count();
    return {};
  }
  return http_fail("check not found: " + check, 404);
}

std::vector<ServiceRegistration> FakeNomad::service_registrations() const {
  Lock lock(mu_);
  std::vector<ServiceRegistration> out;
  for (const auto& [key, r] : services_.rows()) out.push_back(r);
  return out;
}

std::uint64_t FakeNomad::service_registrations_index() const {
  Lock lock(mu_);
  return services_.index();
}

std::map<std::string, CheckResult> FakeNomad::check_results(const std::string& alloc_id) const {
  Lock lock(mu_);
  auto it = checks_.find(alloc_id);
  return it == checks_.end() ? std::map<std::string, CheckResult>{} : it->second;
}

}  // namespace cn::fakes
