#include "tests/support/stub_labeler.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

#include "common/notify/unix_line_socket.h"

namespace cn::testing {

StubLabeler::StubLabeler(std::string socket_path, Mode mode)
    : path_(std::move(socket_path)), mode_(mode) {
  ::unlink(path_.c_str());
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 256) != 0 || ::pipe(stop_pipe_) != 0) {
    throw std::runtime_error("stub labeler: cannot listen on " + path_);
  }
  thread_ = std::thread([this] { serve(); });
}

StubLabeler::~StubLabeler() {
  char c = 'x';
  (void)!::write(stop_pipe_[1], &c, 1);
  thread_.join();
  for (int fd : held_) ::close(fd);
  ::close(listen_fd_);
  ::close(stop_pipe_[0]);
  ::close(stop_pipe_[1]);
  ::unlink(path_.c_str());
}

std::vector<notify::Request> StubLabeler::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

bool StubLabeler::wait_for_requests(std::size_t n, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return requests_.size() >= n; });
}

void StubLabeler::serve() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) continue;
    if (fds[1].revents) return;
    if (fds[0].revents) {
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) handle(fd);
    }
  }
}

void StubLabeler::handle(int fd) {
  auto& clock = system_clock();
  auto line =
      notify::read_line(fd, notify::kMaxFrameBytes, clock, clock.now() + std::chrono::seconds{5});
  std::optional<notify::Request> req;
  if (line) {
    if (auto decoded = notify::decode_request(*line)) req = *decoded;
  }
  if (req && mode_ == Mode::kConfirm && req->wait_ms > 0) {
    notify::Reply reply{
        notify::ReplyStatus::kLabeled,
        1734,
        48213,
        {"k8s:io.cilium.k8s.policy.cluster=default", "k8s:io.kubernetes.pod.namespace=default",
         "nomad:nomad.group=app", "nomad:nomad.job=web", "nomad:nomad.namespace=default"},
        ""};
    (void)notify::send_all(fd, notify::encode(reply), clock, clock.now() + std::chrono::seconds{5});
  }
  {
    std::lock_guard lock(mu_);
    if (req) requests_.push_back(*req);
    if (mode_ == Mode::kSilent) held_.push_back(fd);
  }
  cv_.notify_all();
  if (mode_ != Mode::kSilent) ::close(fd);
}

}  // namespace cn::testing
