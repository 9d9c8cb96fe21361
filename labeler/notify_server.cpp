#include "labeler/notify_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "common/notify/unix_line_socket.h"

namespace cn::labeler {
namespace {

// A plugin writes its request right after connecting; anything slower is not our plugin.
constexpr auto kReadBudget = std::chrono::milliseconds{1000};
// Answer "pending" this long before the plugin's own deadline, so it hears why.
constexpr auto kAnswerMargin = std::chrono::milliseconds{50};

}  // namespace

NotifyServer::NotifyServer(Options options, Clock& clock, Metrics& metrics, std::shared_ptr<spdlog::logger> log)
    : options_(std::move(options)), clock_(clock), metrics_(metrics),
      log_(log ? std::move(log) : spdlog::default_logger()) {}

NotifyServer::~NotifyServer() { stop(); }

Status NotifyServer::listen() {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(options_.socket_path).parent_path();
  std::error_code ec;
  if (!dir.empty()) {
    fs::create_directories(dir, ec);
    if (ec) return fail("cannot create " + dir.string() + ": " + ec.message());
    // Root-only: only root can even reach the socket, SO_PEERCRED below is the second lock.
    ::chmod(dir.c_str(), 0700);
  }
  sockaddr_un addr{};
  if (options_.socket_path.size() >= sizeof addr.sun_path) return fail("socket path too long");
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, options_.socket_path.c_str(), options_.socket_path.size() + 1);

  // A stale socket file from a killed labeler is removed; a live one means a second labeler.
  if (fs::exists(options_.socket_path, ec)) {
    int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool live = probe >= 0 && ::connect(probe, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    if (probe >= 0) ::close(probe);
    if (live) return fail("another labeler is listening on " + options_.socket_path);
    ::unlink(options_.socket_path.c_str());
  }
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return fail(std::string("socket: ") + std::strerror(errno));
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    return fail("bind " + options_.socket_path + ": " + std::strerror(errno));
  }
  ::chmod(options_.socket_path.c_str(), 0600);
  if (::listen(listen_fd_, 512) != 0) return fail(std::string("listen: ") + std::strerror(errno));
  if (::pipe2(wake_pipe_, O_CLOEXEC) != 0) return fail("pipe");
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
      std::lock_guard lock(mu_);
      expire_wake_.request_stop();
    }
    expire_thread_ = {};
  }
  std::lock_guard lock(mu_);
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
  while (!stop.stop_requested()) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_pipe_[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) continue;
    if (fds[1].revents) return;
    if (!(fds[0].revents & POLLIN)) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) continue;
    serve_connection(fd);
  }
}

void NotifyServer::serve_connection(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
      std::find(options_.allowed_uids.begin(), options_.allowed_uids.end(), cred.uid) == options_.allowed_uids.end()) {
    metrics_.inc("cilium_nomad_notifications_total", "op=\"unknown\",outcome=\"refused_peer\"");
    log_->warn("notification refused: peer uid={} pid={} is not allowed", cred.uid, cred.pid);
    ::close(fd);
    return;
  }
  auto line = notify::read_line(fd, notify::kMaxFrameBytes, clock_, clock_.now() + kReadBudget);
  if (!line) {
    log_->warn("notification unreadable: pid={} error=\"{}\"", cred.pid, line.error().message);
    metrics_.inc("cilium_nomad_notifications_total", "op=\"unknown\",outcome=\"unreadable\"");
    ::close(fd);
    return;
  }
  auto request = notify::decode_request(*line);
  if (!request) {
    auto version = notify::peek_version(*line);
    if (version && *version != notify::kProtocolVersion) {
      send_and_close(fd, notify::Reply{notify::ReplyStatus::kUnsupportedVersion, 0, 0, {},
                                       "labeler speaks protocol version " + std::to_string(notify::kProtocolVersion)});
    } else {
      ::close(fd);
    }
    log_->warn("notification refused: pid={} error=\"{}\"", cred.pid, request.error().message);
    metrics_.inc("cilium_nomad_notifications_total", "op=\"unknown\",outcome=\"invalid\"");
    return;
  }
  metrics_.inc("cilium_nomad_notifications_total",
               std::string("op=\"") + std::string(notify::to_string(request->op)) + "\",outcome=\"accepted\"");
  if (request->wait_ms > 0) {
    std::lock_guard lock(mu_);
    MonoTime answer_by = clock_.now() + std::chrono::milliseconds{request->wait_ms} - kAnswerMargin;
    bool earliest = std::none_of(waiters_.begin(), waiters_.end(),
                                 [&](const auto& kv) { return kv.second.answer_by <= answer_by; });
    waiters_.emplace(request->alloc_id, Waiter{fd, answer_by});
    if (earliest) expire_wake_.request_stop();
  } else {
    ::close(fd);
  }
  handler_(*request);
}

void NotifyServer::send_and_close(int fd, const notify::Reply& reply) {
  (void)notify::send_all(fd, notify::encode(reply), clock_, clock_.now() + std::chrono::milliseconds{200});
  ::close(fd);
}

void NotifyServer::reply(const std::string& alloc_id, const notify::Reply& r) {
  std::vector<int> fds;
  {
    std::lock_guard lock(mu_);
    auto [begin, end] = waiters_.equal_range(alloc_id);
    for (auto it = begin; it != end; ++it) fds.push_back(it->second.fd);
    waiters_.erase(begin, end);
  }
  for (int fd : fds) send_and_close(fd, r);
}

std::size_t NotifyServer::waiting() const {
  std::lock_guard lock(mu_);
  return waiters_.size();
}

void NotifyServer::expire_loop(std::stop_token stop) {
  while (!stop.stop_requested()) {
    MonoTime next;
    std::stop_token wake;
    {
      std::lock_guard lock(mu_);
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
    std::vector<std::pair<std::string, int>> due;
    {
      std::lock_guard lock(mu_);
      MonoTime now = clock_.now();
      for (auto it = waiters_.begin(); it != waiters_.end();) {
        if (it->second.answer_by <= now) {
          due.emplace_back(it->first, it->second.fd);
          it = waiters_.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (auto& [id, fd] : due) {
      send_and_close(fd, notify::Reply{notify::ReplyStatus::kPending, 0, 0, {},
                                       "not labeled before the plugin's deadline; the labeler keeps trying"});
    }
  }
}

}  // namespace cn::labeler
