#include "labeler/serve/notify_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include <spdlog/spdlog.h>

#include "common/notify/unix_line_socket.h"
#include "labeler/serve/request_reader.h"

namespace cn::labeler {
namespace {

// A plugin writes its request right after connecting; anything slower is not our plugin.
constexpr auto kReadBudget = std::chrono::milliseconds{1000};
// Connections read at once; each costs a descriptor until its line or its budget ends.
constexpr std::size_t kMaxReading = 256;
// Answer "pending" this long before the plugin's own deadline, so it hears why.
constexpr auto kAnswerMargin = std::chrono::milliseconds{50};

// The socket's directory: created root-only (0700) when missing, so that only root can reach the
// socket at all (SO_PEERCRED is the second lock). An existing directory keeps its mode: with
// `--socket /run/x.sock` it is /run, not ours to change. It must not let anyone but its owner,
// who must be us, replace the socket file with their own.
Status prepare_socket_directory(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::vector<fs::path> created;
  for (fs::path p = dir; !p.empty() && p != p.root_path(); p = p.parent_path()) {
    std::error_code ec;
    auto st = fs::symlink_status(p, ec);
    if (fs::exists(st)) break;
    created.insert(created.begin(), p);  // outermost first
  }
  for (const auto& missing : created) {
    if (::mkdir(missing.c_str(), 0700) != 0 && errno != EEXIST) {
      return fail("cannot create notification socket directory " + missing.string() + " (" +
                  errno_text(errno) + ")");
    }
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    return fail("cannot create notification socket directory " + dir.string() + " (" +
                errno_text(errno) + ")");
  }
  if (!S_ISDIR(st.st_mode)) {
    // What mkdir(2) answers for a path taken by something else.
    return fail("notification socket directory " + dir.string() + " is not a directory (" +
                errno_text(EEXIST) + ")");
  }
  if (st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return fail("notification socket directory " + dir.string() + " (owner uid " +
                std::to_string(st.st_uid) + ", mode " + mode +
                ") lets others replace the socket: use a directory only this user can write, "
                "such as /run/cilium-nomad");
  }
  return {};
}

}  // namespace

NotifyServer::NotifyServer(Options options, Clock& clock, Metrics& metrics,
                           std::shared_ptr<spdlog::logger> log)
    : options_(std::move(options)),
      clock_(clock),
      metrics_(metrics),
      log_(log ? std::move(log) : spdlog::default_logger()) {}

NotifyServer::~NotifyServer() {
  stop();
}

Status NotifyServer::listen() {
  namespace fs = std::filesystem;
  const std::string& path = options_.socket_path;
  fs::path dir = fs::path(path).parent_path();
  std::error_code ec;
  if (!dir.empty()) {
    if (auto ok = prepare_socket_directory(dir); !ok) return ok;
  }
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) {
    return fail("notification socket path " + path + " is longer than " +
                std::to_string(sizeof addr.sun_path - 1) + " bytes (" + errno_text(ENAMETOOLONG) +
                ")");
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);

  // A stale socket file from a killed labeler is removed; a live one means a second labeler.
  // The probe connects and closes without a word; the live labeler takes it for no request.
  if (fs::exists(path, ec)) {
    int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool live =
        probe >= 0 && ::connect(probe, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    if (probe >= 0) ::close(probe);
    if (live) {
      return fail("another labeler is listening on notification socket " + path + " (" +
                  errno_text(EADDRINUSE) + ")");
    }
    ::unlink(path.c_str());
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return fail(std::string("cannot create notification socket (") + errno_text(errno) + ")");
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    ::close(fd);  // not ours to unlink: the path was not bound by us
    return fail("cannot bind notification socket " + path + " (" + errno_text(err) + ")");
  }
  listen_fd_ = fd;  // from here on stop() removes the socket file
  ::chmod(path.c_str(), 0600);
  if (::listen(listen_fd_, 512) != 0) {
    return fail("cannot listen on notification socket " + path + " (" + errno_text(errno) + ")");
  }
  if (::pipe2(wake_pipe_, O_CLOEXEC) != 0)
    return fail(std::string("pipe (") + errno_text(errno) + ")");
  return {};
}

void NotifyServer::start(Handler handler) {
  handler_ = std::move(handler);
  accept_thread_ = std::jthread([this](std::stop_token st) { accept_loop(st); });
  expire_thread_ = std::jthread([this](std::stop_token st) { expire_loop(st); });
}

void NotifyServer::stop() {
  if (wake_pipe_[1] >= 0) {
    char c = 'x';
    (void)!::write(wake_pipe_[1], &c, 1);
  }
  accept_thread_ = {};
  if (expire_thread_.joinable()) {
    expire_thread_.request_stop();
    {
      MutexLock lock(mu_);
      expire_wake_.request_stop();
    }
    expire_thread_ = {};
  }
  MutexLock lock(mu_);
  for (auto& [id, w] : waiters_) {
    (void)id;
    ::close(w.fd);  // the plugin sees EOF and fails open
  }
  waiters_.clear();
  if (listen_fd_ >= 0) {
    ::close(listen_fd_);
    listen_fd_ = -1;
    ::unlink(options_.socket_path.c_str());
  }
  for (int& fd : wake_pipe_) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
}

void NotifyServer::accept_loop(std::stop_token stop) {
  std::vector<Reading> reading;
  std::vector<pollfd> fds;
  while (!stop.stop_requested()) {
    fds.clear();
    fds.push_back({wake_pipe_[0], POLLIN, 0});
    // At the cap, new connections wait in the listen backlog instead of costing descriptors.
    fds.push_back({reading.size() < kMaxReading ? listen_fd_ : -1, POLLIN, 0});
    int timeout_ms = -1;
    if (!reading.empty()) {
      MonoTime first =
          std::min_element(reading.begin(), reading.end(), [](const auto& a, const auto& b) {
            return a.read_by < b.read_by;
          })->read_by;
      auto left = std::chrono::ceil<std::chrono::milliseconds>(first - clock_.now()).count();
      timeout_ms = static_cast<int>(std::clamp<long long>(left, 0, kReadBudget.count()));
    }
    for (const auto& r : reading) fds.push_back({r.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), timeout_ms) < 0) continue;
    if (fds[0].revents) break;

    for (std::size_t i = reading.size(); i-- > 0;) {
      if (fds[i + 2].revents == 0) continue;
      if (advance(reading[i])) reading.erase(reading.begin() + static_cast<std::ptrdiff_t>(i));
    }
    const MonoTime now = clock_.now();
    std::erase_if(reading, [&](const Reading& r) {
      if (r.read_by > now) return false;
      log_->warn("notification unreadable: pid={} error=\"no request line within {} ms\"", r.pid,
                 kReadBudget.count());
      metrics_.notifications(std::nullopt, NotifyOutcome::unreadable).Increment();
      ::close(r.fd);
      return true;
    });
    if (fds[1].revents & POLLIN) {
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      int pid = 0;
      if (fd >= 0 && admit(fd, pid)) {
        Reading r{fd, pid, clock_.now() + kReadBudget, {}};
        // A plugin writes right after connecting, so its line is usually there already.
        if (!advance(r)) reading.push_back(std::move(r));
      }
    }
  }
  for (const auto& r : reading) ::close(r.fd);
}

bool NotifyServer::admit(int fd, int& pid) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
      std::find(options_.allowed_uids.begin(), options_.allowed_uids.end(), cred.uid) ==
          options_.allowed_uids.end()) {
    metrics_.notifications(std::nullopt, NotifyOutcome::refused_peer).Increment();
    log_->warn("notification refused: uid={} pid={} reason=\"peer uid not allowed\"", cred.uid,
               cred.pid);
    ::close(fd);
    return false;
  }
  pid = cred.pid;
  return true;
}

bool NotifyServer::advance(Reading& r) {
  std::string error;
  switch (read_available(r.fd, r.data, notify::kMaxFrameBytes, error)) {
    case ReadProgress::kMore:
      return false;
    case ReadProgress::kLine:
      serve_request(r.fd, r.pid, r.data);
      return true;
    case ReadProgress::kClosedEmpty:
      // What a second labeler's listen() does to find out whether this one is alive.
      log_->debug("connection closed without a request (liveness probe): pid={}", r.pid);
      ::close(r.fd);
      return true;
    case ReadProgress::kClosed:
      error = "connection closed before a full line";
      break;
    case ReadProgress::kTooLong:
      error = "line longer than " + std::to_string(notify::kMaxFrameBytes);
      break;
    case ReadProgress::kFailed:
      break;
  }
  log_->warn("notification unreadable: pid={} error=\"{}\"", r.pid, error);
  metrics_.notifications(std::nullopt, NotifyOutcome::unreadable).Increment();
  ::close(r.fd);
  return true;
}

void NotifyServer::serve_request(int fd, int pid, const std::string& line) {
  auto request = notify::decode_request(line);
  if (!request) {
    auto version = notify::peek_version(line);
    if (version && *version != notify::kProtocolVersion) {
      send_and_close(fd, notify::Reply{notify::ReplyStatus::kUnsupportedVersion,
                                       0,
                                       0,
                                       {},
                                       "labeler speaks protocol version " +
                                           std::to_string(notify::kProtocolVersion)});
    } else {
      ::close(fd);
    }
    log_->warn("notification refused: pid={} error=\"{}\"", pid, request.error().message);
    metrics_.notifications(std::nullopt, NotifyOutcome::invalid).Increment();
    return;
  }
  metrics_.notifications(request->op, NotifyOutcome::accepted).Increment();
  if (request->wait_ms > 0) {
    MutexLock lock(mu_);
    MonoTime answer_by = clock_.now() + std::chrono::milliseconds{request->wait_ms} - kAnswerMargin;
    bool earliest = std::none_of(waiters_.begin(), waiters_.end(),
                                 [&](const auto& kv) { return kv.second.answer_by <= answer_by; });
    waiters_.emplace(request->alloc_id, Waiter{fd, answer_by, {}});
    if (earliest) expire_wake_.request_stop();
  } else {
    ::close(fd);
  }
  handler_(*request);
}

void NotifyServer::send_and_close(int fd, const notify::Reply& reply) {
  (void)notify::send_all(fd, notify::encode(reply), clock_,
                         clock_.now() + std::chrono::milliseconds{200});
  ::close(fd);
}

void NotifyServer::reply(const std::string& alloc_id, const notify::Reply& r) {
  std::vector<int> fds;
  {
    MutexLock lock(mu_);
    auto [begin, end] = waiters_.equal_range(alloc_id);
    for (auto it = begin; it != end; ++it) fds.push_back(it->second.fd);
    waiters_.erase(begin, end);
  }
  for (int fd : fds) send_and_close(fd, r);
}

void NotifyServer::note_retrying(const std::string& alloc_id, const std::string& reason) {
  MutexLock lock(mu_);
  auto [begin, end] = waiters_.equal_range(alloc_id);
  for (auto it = begin; it != end; ++it) it->second.last_reason = reason;
}

std::size_t NotifyServer::waiting() const {
  MutexLock lock(mu_);
  return waiters_.size();
}

void NotifyServer::expire_loop(std::stop_token stop) {
  while (!stop.stop_requested()) {
    MonoTime next;
    std::stop_token wake;
    {
      MutexLock lock(mu_);
      // Checked under the lock stop() takes to wake this loop: otherwise a stop landing between
      // the loop condition and here would have its wake-up mistaken for a new waiter's and
      // discarded below, and the loop would sleep its hour while stop() waits to join it.
      if (stop.stop_requested()) return;
      if (expire_wake_.stop_requested()) expire_wake_ = std::stop_source{};
      wake = expire_wake_.get_token();
      next = clock_.now() + std::chrono::hours{1};
      for (const auto& [id, w] : waiters_) next = std::min(next, w.answer_by);
    }
    clock_.sleep_until(next, wake);
    if (stop.stop_requested()) return;
    std::vector<Waiter> due;
    {
      MutexLock lock(mu_);
      MonoTime now = clock_.now();
      for (auto it = waiters_.begin(); it != waiters_.end();) {
        if (it->second.answer_by <= now) {
          due.push_back(std::move(it->second));
          it = waiters_.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (auto& w : due) {
      std::string message = "not labeled before the plugin's deadline; the labeler keeps trying";
      if (!w.last_reason.empty()) message += " (last attempt: " + w.last_reason + ")";
      send_and_close(w.fd, notify::Reply{notify::ReplyStatus::kPending, 0, 0, {}, message});
    }
  }
}

}  // namespace cn::labeler
