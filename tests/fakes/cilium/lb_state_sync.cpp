#include "tests/fakes/cilium/lb_state_sync.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace cn::fakes::cilium {

LbStateSync::LbStateSync(LbStateSyncOptions options, Clock& clock)
    : options_(std::move(options)), scheduler_(clock) {
  const auto slash = options_.path.rfind('/');
  // A relative path is watched in the working directory, whatever directory it names, so
  // changes to "sub/state.json" are never seen (path.IsAbs in file.go).
  if (!options_.path.starts_with("/")) {
    dir_ = ".";
  } else {
    dir_ = options_.path.substr(0, slash == 0 ? 1 : slash);
  }
  base_ = slash == std::string::npos ? options_.path : options_.path.substr(slash + 1);
}

LbStateSync::~LbStateSync() {
  stop();
}

void LbStateSync::log(const std::string& line) {
  if (options_.log) options_.log(line);
}

Status LbStateSync::start() {
  auto format = lb_state_file_format(options_.path);
  if (!format) return std::unexpected(format.error());
  format_ = *format;
  // A failure ends the job (upstream retries it with backoff, the fake does not).
  auto ok = watch_.init();
  if (ok) ok = watch_.add(dir_);
  if (!ok) {
    log("level=error msg=\"Job failed\" module=agent.controlplane.loadbalancer-reflectors."
        "file-reflector job=sync error=\"" +
        std::string(std::strerror(ok.error().sys_errno)) + "\" file=" + options_.path);
    return {};
  }
  sync();
  watch_.start([this](const inotify_event& ev) { return on_event(ev); });
  return {};
}

void LbStateSync::stop() {
  watch_.stop();
  scheduler_.clear();
}

LbTable LbStateSync::snapshot() const {
  std::lock_guard lock(mu_);
  return table_;
}

std::uint64_t LbStateSync::events() const {
  std::lock_guard lock(mu_);
  return events_;
}

std::uint64_t LbStateSync::reads() const {
  std::lock_guard lock(mu_);
  return reads_;
}

bool LbStateSync::wait_idle(std::chrono::milliseconds real_timeout) {
  return scheduler_.wait_idle(real_timeout);
}

void LbStateSync::sync() {
  const std::string module =
      " module=agent.controlplane.loadbalancer-reflectors.file-reflector file=" + options_.path;
  std::ifstream in(options_.path, std::ios::binary);
  Result<LbTable> table = fail("");
  if (!in) {
    std::string reason = std::strerror(errno);
    // Go's syscall error texts are lower case.
    if (!reason.empty()) reason[0] = static_cast<char>(std::tolower(reason[0]));
    table = fail("failed to read file: open " + options_.path + ": " + reason);
  } else {
    std::ostringstream ss;
    ss << in.rdbuf();
    table = parse_lb_state_file(ss.str(), format_, options_.emulation);
  }
  std::unique_lock lock(mu_);
  ++reads_;
  if (!table) {
    lock.unlock();
    log("level=error msg=\"Failed to synchronize\"" + module + " error=\"" + table.error().message +
        "\"");
    return;
  }
  carry_stale_backends(*table);
  // Frontend IDs stay with a frontend across reads, like the agent's ID allocator.
  std::map<std::string, std::uint32_t> ids;
  for (auto& fe : table->frontends) {
    auto it = ids_.find(fe.key());
    fe.id = it != ids_.end() ? it->second : next_id_++;
    ids[fe.key()] = fe.id;
  }
  ids_ = std::move(ids);
  table_ = std::move(*table);
  const std::string counts = " serviceCount=" + std::to_string(table_.service_entries) +
                             " frontendCount=" + std::to_string(table_.derived_frontends) +
                             " backendCount=" + std::to_string(table_.slice_count);
  lock.unlock();
  log("level=info msg=\"Synchronized from local state\"" + module + counts);
}

void LbStateSync::carry_stale_backends(LbTable& table) {
  if (!lb_keeps_stale_shared_backends(options_.emulation)) return;
  // writer.go DeleteBackendsBySource up to 1.19.4: each backend loses only its first instance
  // of the file's source (a `break`), so one shared by several services keeps the others.
  for (auto it = instances_.begin(); it != instances_.end();) {
    if (!it->second.empty()) it->second.erase(it->second.begin());
    it = it->second.empty() ? instances_.erase(it) : std::next(it);
  }
  for (const auto& svc : table.services) {
    for (const auto& be : svc.backends) {
      instances_[be.address + "|" + std::to_string(be.port) + "|" + be.protocol][svc.name] = be;
    }
  }
  for (auto& svc : table.services) {
    svc.backends.clear();
    for (const auto& [key, holders] : instances_) {
      if (auto h = holders.find(svc.name); h != holders.end()) svc.backends.push_back(h->second);
    }
  }
  for (auto& fe : table.frontends) {
    if (const LbService* svc = table.service(fe.service)) {
      fe.backends = select_lb_backends(fe, *svc, options_.emulation);
    }
  }
}

bool LbStateSync::on_event(const inotify_event& ev) {
  if (ev.len == 0 || base_ != ev.name) return true;
  // "To clear out the local state an empty file is expected": a removal changes nothing.
  if (ev.mask & IN_DELETE) return true;
  std::uint64_t generation;
  {
    std::lock_guard lock(mu_);
    generation = ++generation_;
  }
  scheduler_.after(options_.interval, [this, generation] {
    {
      std::lock_guard lock(mu_);
      if (generation != generation_) return;
    }
    sync();
  });
  // Counted once the timer is set, so a test that saw the event can advance the clock.
  std::lock_guard lock(mu_);
  ++events_;
  return true;
}

}  // namespace cn::fakes::cilium
