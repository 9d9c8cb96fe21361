#include "labeler/services/services_sync.h"

#include <algorithm>

#include "common/util/json_string.h"
#include "labeler/serve/call_recorder.h"

namespace cn::labeler {
namespace {

// Whether `instance` reports exactly these services (its health can be taken over unread).
bool reports_services(const InstanceReport& instance, const std::vector<std::string>& names) {
  return instance.services.size() == names.size() &&
         std::ranges::all_of(names, [&](const auto& n) { return instance.services.contains(n); });
}

}  // namespace

ServicesSync::ServicesSync(nomad::NomadApi& nomad, nomad::NomadServicesApi& services,
                           VipTable& vips, LbWriter& writer, ServicesSyncOptions options)
    : nomad_(nomad),
      services_(services),
      vips_(vips),
      writer_(writer),
      vip_variables_(nomad, services),
      options_(std::move(options)) {}

std::string ServicesSync::report_path(std::string_view node_id) const {
  return options_.reports_prefix + "/" + std::string(node_id);
}

bool ServicesSync::apply_events(const nomad::EventFrame& frame) {
  MutexLock lock(registrations_mu_);
  return registrations_.apply(frame);
}

std::uint64_t ServicesSync::registrations_index() const {
  MutexLock lock(registrations_mu_);
  return registrations_.index();
}

std::vector<nomad::ServiceRegistration> ServicesSync::registrations() const {
  MutexLock lock(registrations_mu_);
  return registrations_.all();
}

Status ServicesSync::relist(const Deadline& deadline) {
  auto listed = services_.service_list(0, std::chrono::seconds{0}, deadline.at, deadline.stop);
  if (!listed) return std::unexpected(listed.error());
  // Nothing in the table moved since every service was read: what the store holds is whole
  // (the events since, if any, changed nothing either). 1,000 services cost one call, not 1,001.
  if (listed_index_ != 0 && listed->index == listed_index_) return {};
  const auto before = registrations();
  std::vector<nomad::ServiceRegistration> now;
  bool whole = true;
  for (const auto& entry : listed->value) {
    auto regs =
        services_.service_registrations(entry.nomad_namespace, entry.service_name, deadline);
    if (regs) {
      now.insert(now.end(), regs->value.begin(), regs->value.end());
      continue;
    }
    // Keep what the last pass read rather than serve the service with no backend.
    whole = false;
    for (const auto& r : before) {
      if (r.nomad_namespace == entry.nomad_namespace && r.service_name == entry.service_name) {
        now.push_back(r);
      }
    }
  }
  {
    MutexLock lock(registrations_mu_);
    registrations_.replace(std::move(now), listed->index);
  }
  listed_index_ = whole ? listed->index : 0;
  return {};
}

Result<const nomad::Allocation*> ServicesSync::own_allocation(const std::string& alloc_id,
                                                              const Deadline& deadline) {
  auto it = own_allocations_.find(alloc_id);
  // Read again while it has no address: Nomad may register a service before the allocation's
  // network status is written.
  if (it != own_allocations_.end() && !it->second.address().empty()) return &it->second;
  auto alloc = nomad_.allocation(alloc_id, deadline);
  if (!alloc) return std::unexpected(alloc.error());
  alloc->job.reset();  // only its ports and addresses are needed, for as long as it lives
  auto [placed, inserted] = own_allocations_.insert_or_assign(alloc_id, std::move(*alloc));
  return &placed->second;
}

Result<bool> ServicesSync::poll_own_checks(const Deadline& deadline) {
  auto written = publish_own_report(registrations(), /*read_all_checks=*/true, deadline);
  remember_seen();
  return written;
}

bool ServicesSync::has_seen(const std::map<std::string, std::uint64_t>& listing) const {
  MutexLock lock(seen_mu_);
  return listing == seen_;
}

void ServicesSync::remember_seen() {
  auto seen = vips_.bucket_indexes();
  for (const auto& [path, report] : reports_) seen[path] = report.first;
  for (const auto& [path, part] : own_parts_) {
    if (part.index != 0) seen[path] = part.index;
  }
  MutexLock lock(seen_mu_);
  seen_ = std::move(seen);
}

Status ServicesSync::publish_vip_variables(
    const std::vector<nomad::ServiceRegistration>& registrations, ServicesPass& pass,
    const Deadline& deadline) {
  const auto owned = owned_services(registrations, options_.node_id);
  std::vector<ServiceVipWant> wanted;
  for (const auto& s : pass.checked.services) {
    if (owned.contains({s.nomad_namespace, s.name})) {
      wanted.push_back({s.nomad_namespace, s.name, s.vip, s.ports});
    }
  }
  auto synced = vip_variables_.sync(wanted, deadline);
  if (!synced) return std::unexpected(synced.error());
  for (const auto& f : synced->failures) {
    pass.variable_problems.push_back({f.nomad_namespace, f.name, {}, f.reason});
  }
  // An address leaves the table for good only here: the one moment it may go to another
  // service, so the variable that names it goes too.
  for (const auto& removed : vips_.take_removed()) {
    const auto slash = removed.service.find('/');
    if (slash == std::string::npos) continue;
    if (auto gone = vip_variables_.remove(removed.service.substr(0, slash),
                                          removed.service.substr(slash + 1), removed.vip, deadline);
        !gone) {
      pass.variable_problems.push_back({removed.service.substr(0, slash),
                                        removed.service.substr(slash + 1),
                                        {},
                                        "variable not removed: " + gone.error().message});
    }
  }
  return {};
}

bool ServicesSync::is_own_report(std::string_view path) const {
  const std::string base = report_path(options_.node_id);
  return path == base || (path.starts_with(base) && path.substr(base.size()).starts_with("/"));
}

Result<bool> ServicesSync::publish_own_report(const std::vector<nomad::ServiceRegistration>& all,
                                              bool read_all_checks, const Deadline& deadline) {
  std::map<std::string, std::vector<std::string>> mine;  // alloc -> its service names
  for (const auto& r : all) {
    if (r.node_id != options_.node_id) continue;
    auto& names = mine[r.alloc_id];
    if (std::ranges::find(names, r.service_name) == names.end()) names.push_back(r.service_name);
  }
  std::erase_if(own_allocations_, [&](const auto& kv) { return !mine.contains(kv.first); });
  NodeReport report;
  for (const auto& [alloc_id, names] : mine) {
    if (auto known = own_instances_.find(alloc_id); !read_all_checks &&
                                                    known != own_instances_.end() &&
                                                    reports_services(known->second, names)) {
      report[alloc_id] = known->second;
      continue;
    }
    auto alloc = own_allocation(alloc_id, deadline);
    if (!alloc) {
      // Gone already: its registrations go with it.
      if (alloc.error().kind == ErrorKind::not_found) continue;
      return std::unexpected(alloc.error());
    }
    if ((*alloc)->is_terminal()) continue;
    auto checks = services_.alloc_checks(alloc_id, deadline);
    // Without its checks an instance is reported not ready rather than left out.
    std::vector<nomad::CheckResult> results;
    if (checks) results = std::move(*checks);
    report[alloc_id] = instance_report(**alloc, names, results);
    if (!checks) {
      for (auto& [name, health] : report[alloc_id].services) {
        health = {BackendState::not_ready, "checks unreadable: " + checks.error().message};
      }
    }
  }
  own_instances_ = std::move(report);
  return write_own_report(deadline);
}

Result<bool> ServicesSync::write_own_report(const Deadline& deadline) {
  // Nomad refuses a variable over 64 KiB: the report is cut into parts by allocation, each well
  // under it (items as Nomad stores them, JSON-encoded), at <node-id>, <node-id>/1, ... (a
  // variable path takes letters, digits, '-', '_', '~' and '/' only: nomad/structs/variables.go
  // in hashicorp/nomad).
  constexpr std::size_t kPartBytes = std::size_t{48} * 1024;
  std::vector<std::map<std::string, std::string>> parts(1);
  std::size_t bytes = 0;
  for (auto& [alloc_id, text] : encode_node_report(own_instances_)) {
    std::string encoded;
    append_json_string(encoded, alloc_id);
    append_json_string(encoded, text);
    if (bytes > 0 && bytes + encoded.size() + 2 > kPartBytes) {
      parts.emplace_back();
      bytes = 0;
    }
    bytes += encoded.size() + 2;
    parts.back().emplace(alloc_id, std::move(text));
  }
  const std::string base = report_path(options_.node_id);
  std::set<std::string> wanted;
  bool written = false;
  report_error_.clear();
  auto write = [&](const std::string& path, const std::map<std::string, std::string>* items) {
    ReportPart& known = own_parts_[path];
    if (known.items && items != nullptr && *known.items == *items) return Status{};
    // An empty report is no variable at all (Nomad stores none without items).
    const bool remove = items == nullptr || items->empty();
    if (remove && known.index == 0 && known.items) return Status{};
    auto wrote =
        remove ? services_.delete_variable(options_.reports_namespace, path, known.index, deadline)
               : services_.put_variable(options_.reports_namespace, path, *items, known.index,
                                        deadline);
    if (!wrote) return Status{std::unexpected(wrote.error())};
    // A conflict: only this node writes these, so it is a restart's first write or a part
    // already gone. Nomad's copy is taken and the write is tried again next time.
    known.index = wrote->current.meta.modify_index;
    known.items = wrote->written && !remove ? *items : wrote->current.items;
    if (wrote->written) written = true;
    return Status{};
  };
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const std::string path = k == 0 ? base : base + "/" + std::to_string(k);
    wanted.insert(path);
    if (auto ok = write(path, &parts[k]); !ok) {
      report_error_ = path + ": " + ok.error().message;
      if (counts_as_unreachable(ok.error())) return std::unexpected(ok.error());
    }
  }
  std::vector<std::string> surplus;
  for (const auto& [path, part] : own_parts_) {
    if (!wanted.contains(path) && !(part.items && part.items->empty() && part.index == 0)) {
      surplus.push_back(path);
    }
  }
  for (const auto& path : surplus) {
    if (auto ok = write(path, nullptr); !ok) {
      report_error_ = path + ": " + ok.error().message;
      if (counts_as_unreachable(ok.error())) return std::unexpected(ok.error());
    }
  }
  return written;
}

Status ServicesSync::read_reports(const Deadline& deadline) {
  auto listed = nomad_.variables(options_.reports_namespace, options_.reports_prefix + "/", 0,
                                 std::chrono::seconds{0}, deadline.at, deadline.stop);
  if (!listed) return std::unexpected(listed.error());
  std::set<std::string> present;
  for (const auto& meta : listed->value) {
    if (is_own_report(meta.path)) {
      // Ours from before a restart, or written by the last pass: served from own_instances_.
      ReportPart& part = own_parts_[meta.path];
      if (part.index != meta.modify_index) part = {meta.modify_index, std::nullopt};
      continue;
    }
    present.insert(meta.path);
    auto it = reports_.find(meta.path);
    if (it != reports_.end() && it->second.first == meta.modify_index) continue;
    auto var = nomad_.variable(options_.reports_namespace, meta.path, deadline);
    if (!var) {
      if (var.error().kind == ErrorKind::not_found) continue;
      return std::unexpected(var.error());
    }
    reports_[meta.path] = {var->meta.modify_index, decode_node_report(var->items)};
  }
  std::erase_if(reports_, [&](const auto& kv) { return !present.contains(kv.first); });
  return {};
}

Result<ServicesPass> ServicesSync::run_once(const Deadline& deadline, bool relist_all) {
  if (relist_all) {
    if (auto listed = relist(deadline); !listed) return std::unexpected(listed.error());
  }
  auto current = registrations();
  // A full pass (start, resync) reads every check; the others leave that to the poll.
  if (auto published = publish_own_report(current, /*read_all_checks=*/relist_all, deadline);
      !published) {
    return std::unexpected(published.error());
  }
  if (auto read = read_reports(deadline); !read) return std::unexpected(read.error());
  if (auto refreshed = vips_.refresh(deadline); !refreshed) {
    return std::unexpected(refreshed.error());
  }

  ServicesPass pass;
  CatalogInput input;
  input.registrations = std::move(current);
  add_node_report(own_instances_, input);
  for (const auto& [path, report] : reports_) add_node_report(report.second, input);

  std::set<std::string> live;
  // One scan of the table for every service that already holds its VIP (nearly all of them in
  // a steady state); only the others claim, which scans and may write.
  const auto held = vips_.assignments();
  for (const auto& id : service_ids(input.registrations)) {
    const std::string key = vip_service_key(id.first, id.second);
    live.insert(key);
    if (auto it = held.find(key); it != held.end()) {
      input.vips[key] = it->second;
      continue;
    }
    auto vip = vips_.claim(id.first, id.second, deadline);
    if (!vip) {
      pass.claim_problems.push_back({id.first, id.second, {}, vip.error().message});
      continue;
    }
    input.vips[key] = *vip;
  }
  if (auto released = vips_.release_absent(live, deadline); !released) {
    return std::unexpected(released.error());
  }

  pass.catalog = build_catalog(input);
  pass.checked = check_lb_services(pass.catalog.services, options_.check);
  auto wrote = writer_.apply(pass.checked.services, deadline);
  if (!wrote) return std::unexpected(wrote.error());
  pass.lb_written = *wrote;
  // After the agent has what it serves: the variables only tell jobs where to connect.
  if (auto published = publish_vip_variables(input.registrations, pass, deadline); !published) {
    return std::unexpected(published.error());
  }
  pass.report_error = report_error_;
  remember_seen();
  return pass;
}

}  // namespace cn::labeler
