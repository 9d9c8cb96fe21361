#include "tests/fakes/cilium/lb_state_sync.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

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
  inotify_fd_ = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  // fsnotify's mask for Add(); a failure ends the job (upstream retries it with backoff, the
  // fake does not).
  const std::uint32_t mask = IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_ATTRIB | IN_MODIFY |
                             IN_MOVE_SELF | IN_DELETE | IN_DELETE_SELF;
  if (inotify_fd_ < 0 || wake_fd_ < 0 || inotify_add_watch(inotify_fd_, dir_.c_str(), mask) < 0) {
    log("level=error msg=\"Job failed\" module=agent.controlplane.loadbalancer-reflectors."
        "file-reflector job=sync error=\"" +
        std::string(std::strerror(errno)) + "\" file=" + options_.path);
    return {};
  }
  sync();
  thread_ = std::jthread([this](std::stop_token st) { run(st); });
  return {};
}

void LbStateSync::stop() {
  if (thread_.joinable()) {
    thread_.request_stop();
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = write(wake_fd_, &one, sizeof one);
    thread_.join();
  }
  scheduler_.clear();
  if (inotify_fd_ >= 0) close(inotify_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
  inotify_fd_ = wake_fd_ = -1;
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

void LbStateSync::run(std::stop_token stop) {
  alignas(inotify_event) char buf[64 * 1024];
  while (!stop.stop_requested()) {
    pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0 || stop.stop_requested()) return;
    const ssize_t n = read(inotify_fd_, buf, sizeof buf);
    if (n <= 0) continue;
    for (ssize_t off = 0; off < n;) {
      const auto* ev = reinterpret_cast<const inotify_event*>(buf + off);
      off += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
      if (ev->len == 0 || base_ != ev->name) continue;
      // "To clear out the local state an empty file is expected": a removal changes nothing.
      if (ev->mask & IN_DELETE) continue;
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
    }
  }
}

}  // namespace cn::fakes::cilium
