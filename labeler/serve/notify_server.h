#pragma once
// The labeler's end of the plugin protocol (docs/protocol.md): a Unix socket in a root-only
// directory, peers checked with SO_PEERCRED, one request per connection. Requests go to the
// handler; a plugin that asked to wait keeps its connection until the handler's work answers
// through reply(), or until just before its deadline, when it is told "pending".
#include <functional>
#include <map>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/fwd.h>

#include "common/notify/protocol.h"
#include "common/util/clock.h"
#include "common/util/mutex.h"
#include "labeler/serve/metrics.h"

namespace cn::labeler {

class NotifyServer {
 public:
  using Handler = std::function<void(const notify::Request&)>;

  struct Options {
    std::string socket_path;
    // Peers allowed to notify; the plugin runs as root under Nomad. Tests may add their uid.
    std::vector<unsigned> allowed_uids = {0};
  };

  NotifyServer(Options options, Clock& clock, Metrics& metrics,
               std::shared_ptr<spdlog::logger> log);
  ~NotifyServer();

  // Creates the directory (0700) and the socket (0600); fails if another labeler listens there.
  [[nodiscard]] Status listen();
  void start(Handler handler);
  void stop();  // closes the socket file too

  // Answers every plugin waiting on this allocation.
  void reply(const std::string& alloc_id, const notify::Reply& reply) EXCLUDES(mu_);
  // Work on the allocation will be tried again: its plugins keep waiting, and if their deadline
  // comes first, the "pending" they get then says why with `reason`.
  void note_retrying(const std::string& alloc_id, const std::string& reason) EXCLUDES(mu_);
  std::size_t waiting() const EXCLUDES(mu_);

 private:
  struct Waiter {
    int fd;
    MonoTime answer_by;
    std::string last_reason;  // of the last attempt that will be retried; empty: none yet
  };
  // An accepted connection whose request line has not fully arrived.
  struct Reading {
    int fd;
    int pid;
    MonoTime read_by;
    std::string data;
  };
  void accept_loop(std::stop_token stop);
  // Peer check; the connection is closed and false returned for a peer that may not notify.
  bool admit(int fd, int& pid);
  // Reads what `r` has now; true when it is done with (served or closed).
  bool advance(Reading& r);
  void serve_request(int fd, int pid, const std::string& line) EXCLUDES(mu_);
  void expire_loop(std::stop_token stop) EXCLUDES(mu_);
  void send_and_close(int fd, const notify::Reply& reply);

  Options options_;
  Clock& clock_;
  Metrics& metrics_;
  std::shared_ptr<spdlog::logger> log_;
  Handler handler_;
  int listen_fd_ = -1;
  int wake_pipe_[2] = {-1, -1};
  mutable Mutex mu_;
  std::multimap<std::string, Waiter> waiters_ GUARDED_BY(mu_);
  std::stop_source expire_wake_ GUARDED_BY(mu_);
  std::jthread accept_thread_;
  std::jthread expire_thread_;
};

}  // namespace cn::labeler
