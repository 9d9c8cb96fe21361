#include "labeler/services/service_vip_variables.h"

#include <map>

#include "labeler/services/vip_table.h"

namespace cn::labeler {

namespace {

// Errors every other service would meet as well: the pass stops instead of reporting each one.
bool nomad_unreachable(ErrorKind kind) {
  return kind == ErrorKind::transport || kind == ErrorKind::timeout || kind == ErrorKind::tls ||
         kind == ErrorKind::cancelled;
}

std::string vip_var_reason(const Error& error) {
  return std::string(to_string(error.kind)) + ": " + error.message;
}

// Why a variable at the service's path is not ours, or "" when it is.
std::string foreign_reason(const std::map<std::string, std::string>& items,
                           const std::string& service_key, const std::string& path) {
  auto it = items.find("service");
  if (it == items.end()) return "variable " + path + " has no service item: not written by us";
  if (it->second != service_key) {
    return "variable " + path + " belongs to service " + it->second + ", not " + service_key;
  }
  return "";
}

}  // namespace

std::string service_vip_path(std::string_view service_name) {
  std::string path(kServiceVipPrefix);
  path += '/';
  path += service_name;
  return path;
}

std::map<std::string, std::string> service_vip_items(const ServiceVipWant& want) {
  std::map<std::string, std::string> items;
  items["vip"] = ip_text(want.vip);
  items["service"] = vip_service_key(want.nomad_namespace, want.name);
  for (const auto& port : want.ports) {
    items.try_emplace(port.name.empty() ? "port" : "port_" + port.name, std::to_string(port.port));
  }
  return items;
}

std::set<std::pair<std::string, std::string>> owned_services(
    const std::vector<nomad::ServiceRegistration>& registrations, std::string_view node_id) {
  struct First {
    std::string alloc_id;
    std::string node_id;
  };
  std::map<std::pair<std::string, std::string>, First> first;
  for (const auto& r : registrations) {
    auto [it, inserted] =
        first.try_emplace({r.nomad_namespace, r.service_name}, First{r.alloc_id, r.node_id});
    if (!inserted && r.alloc_id < it->second.alloc_id) it->second = First{r.alloc_id, r.node_id};
  }
  std::set<std::pair<std::string, std::string>> out;
  for (const auto& [key, f] : first) {
    if (f.node_id == node_id) out.insert(key);
  }
  return out;
}

ServiceVipVariables::ServiceVipVariables(nomad::NomadApi& nomad, nomad::NomadServicesApi& writes)
    : nomad_(nomad), writes_(writes) {}

Result<const ServiceVipVariables::Seen*> ServiceVipVariables::seen(const Key& key,
                                                                   const Deadline& deadline) {
  if (auto it = seen_.find(key); it != seen_.end()) return &it->second;
  auto read = nomad_.variable(key.first, service_vip_path(key.second), deadline);
  if (!read) {
    if (read.error().kind != ErrorKind::not_found) return std::unexpected(read.error());
    return &(seen_[key] = Seen{});
  }
  return &(seen_[key] = Seen{read->meta.modify_index, std::move(read->items)});
}

Result<ServiceVipSyncReport> ServiceVipVariables::sync(const std::vector<ServiceVipWant>& wanted,
                                                       const Deadline& deadline) {
  ServiceVipSyncReport report;
  std::set<Key> keep;
  for (const auto& want : wanted) {
    const Key key{want.nomad_namespace, want.name};
    keep.insert(key);
    const std::string path = service_vip_path(want.name);
    auto failed = [&](std::string reason, bool foreign = false) {
      report.failures.push_back(
          ServiceVipFailure{want.nomad_namespace, want.name, std::move(reason), foreign});
    };

    auto current = seen(key, deadline);
    if (!current) {
      if (nomad_unreachable(current.error().kind)) return std::unexpected(current.error());
      failed(vip_var_reason(current.error()));
      continue;
    }
    const std::string service_key = vip_service_key(want.nomad_namespace, want.name);
    if ((*current)->modify_index != 0) {
      if (auto why = foreign_reason((*current)->items, service_key, path); !why.empty()) {
        // Read again next time: the variable may be gone once its writer is told.
        seen_.erase(key);
        failed(std::move(why), /*foreign=*/true);
        continue;
      }
    }
    auto items = service_vip_items(want);
    if ((*current)->modify_index != 0 && (*current)->items == items) continue;

    auto wrote =
        writes_.put_variable(want.nomad_namespace, path, items, (*current)->modify_index, deadline);
    if (!wrote) {
      if (nomad_unreachable(wrote.error().kind)) return std::unexpected(wrote.error());
      failed(vip_var_reason(wrote.error()));
      continue;
    }
    if (wrote->written) {
      seen_[key] = Seen{wrote->current.meta.modify_index, std::move(items)};
      ++report.written;
      continue;
    }
    // Someone wrote first: Nomad's copy is the starting point of the next call. A copy without
    // items although it exists means the token may write but not read it: read it afresh then.
    ++report.conflicts;
    if (wrote->current.meta.modify_index != 0 && wrote->current.items.empty()) {
      seen_.erase(key);
    } else {
      seen_[key] = Seen{wrote->current.meta.modify_index, std::move(wrote->current.items)};
    }
  }
  // Services this node no longer owns: their next owner writes them, and should this node own
  // one again, what it remembers may be stale by then.
  std::erase_if(seen_, [&](const auto& kv) { return !keep.contains(kv.first); });
  return report;
}

Status ServiceVipVariables::remove(std::string_view nomad_namespace, std::string_view service_name,
                                   const IpPrefix& vip, const Deadline& deadline) {
  const Key key{std::string(nomad_namespace), std::string(service_name)};
  const std::string path = service_vip_path(service_name);
  const std::string service_key = vip_service_key(nomad_namespace, service_name);
  // Whatever the outcome, what was remembered no longer describes the variable.
  seen_.erase(key);
  auto read = nomad_.variable(key.first, path, deadline);
  if (!read) {
    if (read.error().kind == ErrorKind::not_found) return {};
    return std::unexpected(read.error());
  }
  nomad::Variable current = std::move(*read);
  // A conflict hands back the newer copy; a few rounds settle a writer that is still at it.
  for (int round = 0; round < 3; ++round) {
    auto vip_item = current.items.find("vip");
    if (!foreign_reason(current.items, service_key, path).empty() ||
        vip_item == current.items.end() || vip_item->second != ip_text(vip)) {
      return {};  // not ours, or already about another address: never delete on doubt
    }
    auto deleted = writes_.delete_variable(key.first, path, current.meta.modify_index, deadline);
    if (!deleted) return std::unexpected(deleted.error());
    if (deleted->written || deleted->current.meta.modify_index == 0) return {};
    current = std::move(deleted->current);
  }
  // Rewritten again and again meanwhile: someone keeps it in use, so it is not stale.
  return {};
}

}  // namespace cn::labeler
