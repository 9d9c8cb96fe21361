#include "tests/fakes/http/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <list>
#include <system_error>

#include "tests/fakes/http/http_wire.h"

namespace cn::fakes {

bool CaseInsensitiveLess::operator()(const std::string& a, const std::string& b) const {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) <
           std::tolower(static_cast<unsigned char>(y));
  });
}

std::optional<std::string> HttpRequest::query_value(const std::string& key) const {
  const auto it = query.find(key);
  if (it == query.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> HttpRequest::header(const std::string& key) const {
  const auto it = headers.find(key);
  if (it == headers.end()) return std::nullopt;
  return it->second;
}

bool StreamWriter::wait_stopping(std::chrono::milliseconds d) {
  // Fallback for writers that cannot watch a socket: bounded slices, never one long sleep.
  const auto deadline = std::chrono::steady_clock::now() + d;
  while (!stopping()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    std::this_thread::sleep_for(
        std::min<std::chrono::nanoseconds>(deadline - now, std::chrono::milliseconds(10)));
  }
  return true;
}

namespace {

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

class FdStreamWriter final : public StreamWriter {
 public:
  FdStreamWriter(int fd, int stop_fd, const std::atomic<bool>& server_stopping, bool chunked)
      : fd_(fd), stop_fd_(stop_fd), server_stopping_(server_stopping), chunked_(chunked) {}

  bool write(const std::string& data) override {
    if (failed_ || server_stopping_.load()) return false;
    if (data.empty()) return true;  // an empty chunk would end a chunked body
    std::string frame;
    if (chunked_) {
      char size[20];
      const auto res = std::to_chars(size, size + sizeof size, data.size(), 16);
      frame.assign(size, res.ptr);
      frame += "\r\n";
      frame += data;
      frame += "\r\n";
    }
    if (!wire::send_all(fd_, chunked_ ? std::string_view(frame) : std::string_view(data),
                        stop_fd_)) {
      failed_ = true;
    }
    return !failed_;
  }

  bool stopping() const override {
    return failed_ || server_stopping_.load() ||
           wire::wait_hangup_or_cancel(fd_, stop_fd_, std::chrono::milliseconds(0));
  }

  bool wait_stopping(std::chrono::milliseconds d) override {
    if (failed_ || server_stopping_.load()) return true;
    return wire::wait_hangup_or_cancel(fd_, stop_fd_, d) || server_stopping_.load();
  }

  bool failed() const { return failed_; }

 private:
  int fd_;
  int stop_fd_;
  const std::atomic<bool>& server_stopping_;
  bool chunked_;
  bool failed_ = false;
};

std::string response_head(const HttpResponse& resp, bool close, const std::string* length) {
  std::string out = "HTTP/1.1 " + std::to_string(resp.status) + " ";
  out += resp.reason.empty() ? std::string(wire::reason_phrase(resp.status)) : resp.reason;
  out += "\r\n";
  bool has_content_type = false;
  for (const auto& [name, value] : resp.headers) {
    // The server owns framing; a handler's stray framing header would corrupt the stream.
    if (wire::iequals(name, "Content-Length") || wire::iequals(name, "Transfer-Encoding") ||
        wire::iequals(name, "Connection")) {
      continue;
    }
    if (wire::iequals(name, "Content-Type")) has_content_type = true;
    out += name + ": " + value + "\r\n";
  }
  if (!has_content_type && (resp.stream || !resp.body.empty())) {
    out += "Content-Type: application/json\r\n";
  }
  if (length) out += "Content-Length: " + *length + "\r\n";
  if (resp.stream && resp.chunked) out += "Transfer-Encoding: chunked\r\n";
  if (close) out += "Connection: close\r\n";
  out += "\r\n";
  return out;
}

class ServerImpl final : public HttpServer {
 public:
  ServerImpl(int listen_fd, std::string unix_path, int port, Handler handler,
             HttpServerLimits limits)
      : listen_fd_(listen_fd),
        unix_path_(std::move(unix_path)),
        port_(port),
        handler_(std::move(handler)),
        limits_(limits) {
    stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (stop_fd_ < 0) {
      ::close(listen_fd_);
      throw_errno("eventfd");
    }
  }

  ~ServerImpl() override {
    stop();
    ::close(stop_fd_);
  }

  void start() override {
    std::lock_guard lock(lifecycle_mu_);
    if (started_ || stopped_) return;
    started_ = true;
    accept_thread_ = std::thread([this] { accept_loop(); });
  }

  void stop() override {
    std::lock_guard lock(lifecycle_mu_);
    if (stopped_) return;
    stopped_ = true;
    stopping_.store(true);
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto w = ::write(stop_fd_, &one, sizeof one);
    if (accept_thread_.joinable()) accept_thread_.join();
    ::close(listen_fd_);
    if (!unix_path_.empty()) ::unlink(unix_path_.c_str());
    std::list<Connection> conns;
    {
      std::lock_guard conn_lock(conn_mu_);
      conns.swap(connections_);
    }
    // Wakes reads that do not poll the stop fd (none today, but cheap insurance).
    for (auto& c : conns) ::shutdown(c.fd, SHUT_RDWR);
    for (auto& c : conns) {
      if (c.thread.joinable()) c.thread.join();
      ::close(c.fd);
    }
  }

  int port() const override { return port_; }

  std::vector<LoggedRequest> request_log() const override {
    std::lock_guard lock(log_mu_);
    return log_;
  }

  void clear_request_log() override {
    std::lock_guard lock(log_mu_);
    log_.clear();
  }

  int open_connections() const override {
    std::lock_guard lock(conn_mu_);
    return static_cast<int>(std::count_if(connections_.begin(), connections_.end(),
                                          [](const Connection& c) { return !c.finished->load(); }));
  }

  int accepted_connections() const override { return accepted_.load(); }

 private:
  struct Connection {
    int fd = -1;
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> finished = std::make_shared<std::atomic<bool>>(false);
  };

  void accept_loop() {
    for (;;) {
      pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
      const int rc = ::poll(fds, 2, -1);
      if (rc < 0 && errno == EINTR) continue;
      if (rc < 0 || (fds[1].revents & POLLIN)) return;
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE) {
          reap();  // finished connections may still hold descriptors
          continue;
        }
        return;
      }
      accepted_.fetch_add(1);
      reap();
      std::lock_guard lock(conn_mu_);
      Connection& c = connections_.emplace_back();
      c.fd = fd;
      auto finished = c.finished;
      c.thread = std::thread([this, fd, finished] {
        serve_connection(fd);
        // FIN now so the client sees the close; the descriptor is closed when reaped.
        ::shutdown(fd, SHUT_RDWR);
        finished->store(true);
      });
    }
  }

  void reap() {
    std::list<Connection> done;
    {
      std::lock_guard lock(conn_mu_);
      for (auto it = connections_.begin(); it != connections_.end();) {
        if (it->finished->load()) {
          done.splice(done.end(), connections_, it++);
        } else {
          ++it;
        }
      }
    }
    for (auto& c : done) {
      c.thread.join();
      ::close(c.fd);
    }
  }

  void log(LoggedRequest entry) {
    std::lock_guard lock(log_mu_);
    log_.push_back(std::move(entry));
  }

  void send_error(int fd, int status, const std::string& message) {
    HttpResponse resp;
    resp.status = status;
    resp.headers.emplace_back("Content-Type", "text/plain");
    resp.body = message + "\n";
    const std::string length = std::to_string(resp.body.size());
    wire::send_all(fd, response_head(resp, true, &length) + resp.body, stop_fd_);
  }

  void serve_connection(int fd) {
    wire::SocketReader reader(fd, stop_fd_);
    while (!stopping_.load()) {
      std::string head;
      const wire::ReadStatus hs = reader.read_until("\r\n\r\n", limits_.max_header_bytes, head);
      if (hs == wire::ReadStatus::too_large) {
        send_error(fd, 431, "request head too large");
        return;
      }
      if (hs != wire::ReadStatus::ok) return;  // peer closed between requests, or stop

      HttpRequest req;
      std::string version;
      if (const auto err = wire::parse_request_head(head, req, version)) {
        send_error(fd, 400, *err);
        log({std::chrono::steady_clock::now(), std::chrono::steady_clock::now(), req.method,
             req.target, 400, req.path});
        return;
      }
      if (const auto expect = req.header("Expect");
          expect && wire::iequals(*expect, "100-continue")) {
        // libcurl waits up to a second for this before sending a large body.
        if (!wire::send_all(fd, "HTTP/1.1 100 Continue\r\n\r\n", stop_fd_)) return;
      }

      const auto te = req.header("Transfer-Encoding");
      const auto cl = req.header("Content-Length");
      wire::ReadStatus bs = wire::ReadStatus::ok;
      if (te) {
        if (!wire::iequals(wire::trim(*te), "chunked") || cl) {
          send_error(fd, 400, "unsupported transfer encoding");
          return;
        }
        bs = reader.read_chunked(limits_.max_body_bytes, req.body);
      } else if (cl) {
        std::size_t length = 0;
        const auto [end, ec] = std::from_chars(cl->data(), cl->data() + cl->size(), length);
        if (cl->empty() || ec != std::errc{} || end != cl->data() + cl->size()) {
          send_error(fd, 400, "bad Content-Length");
          return;
        }
        if (length > limits_.max_body_bytes) {
          send_error(fd, 413, "request body too large");
          return;
        }
        bs = reader.read_exact(length, req.body);
      }
      if (bs == wire::ReadStatus::too_large) {
        send_error(fd, 413, "request body too large");
        return;
      }
      if (bs == wire::ReadStatus::malformed) {
        send_error(fd, 400, "malformed body");
        return;
      }
      if (bs != wire::ReadStatus::ok) return;

      const auto conn_header = req.header("Connection");
      bool keep_alive = version == "HTTP/1.1";
      if (conn_header && wire::iequals(wire::trim(*conn_header), "close")) keep_alive = false;
      if (conn_header && wire::iequals(wire::trim(*conn_header), "keep-alive")) keep_alive = true;

      LoggedRequest entry{
          std::chrono::steady_clock::now(), {}, req.method, req.target, 0, req.path};
      HttpResponse resp;
      try {
        resp = handler_(req);
      } catch (const std::exception& e) {
        resp = HttpResponse{};
        resp.status = 500;
        resp.headers.emplace_back("Content-Type", "text/plain");
        resp.body = std::string("handler threw: ") + e.what();
      }

      if (resp.drop_without_response) {
        entry.answered = std::chrono::steady_clock::now();
        log(entry);
        return;
      }
      if (resp.stall) {
        entry.answered = std::chrono::steady_clock::now();
        log(entry);
        wire::wait_hangup_or_cancel(fd, stop_fd_, std::chrono::milliseconds(-1));
        return;
      }

      const bool close = !keep_alive || resp.close_connection || (resp.stream && !resp.chunked);
      entry.status = resp.status;
      if (resp.stream) {
        // Logged before the bytes go out, so a client that saw the answer also sees the entry.
        entry.answered = std::chrono::steady_clock::now();
        log(entry);
        if (!wire::send_all(fd, response_head(resp, close, nullptr), stop_fd_)) return;
        FdStreamWriter writer(fd, stop_fd_, stopping_, resp.chunked);
        try {
          resp.stream(writer);
        } catch (const std::exception&) {
          return;  // the body is already half-sent; closing is the only honest signal
        }
        if (!resp.chunked || writer.failed()) return;
        if (!wire::send_all(fd, "0\r\n\r\n", stop_fd_)) return;
      } else {
        const std::string length = std::to_string(resp.body.size());
        entry.answered = std::chrono::steady_clock::now();
        log(entry);
        if (!wire::send_all(fd, response_head(resp, close, &length) + resp.body, stop_fd_)) return;
      }
      if (close) return;
    }
  }

  int listen_fd_;
  int stop_fd_ = -1;
  std::string unix_path_;
  int port_;
  Handler handler_;
  HttpServerLimits limits_;

  std::mutex lifecycle_mu_;
  bool started_ = false;
  bool stopped_ = false;
  std::atomic<bool> stopping_{false};
  std::thread accept_thread_;

  mutable std::mutex conn_mu_;
  std::list<Connection> connections_;
  std::atomic<int> accepted_{0};

  mutable std::mutex log_mu_;
  std::vector<LoggedRequest> log_;
};

}  // namespace

std::unique_ptr<HttpServer> HttpServer::unix_socket(const std::string& path, Handler handler,
                                                    HttpServerLimits limits) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path) {
    throw std::system_error(ENAMETOOLONG, std::generic_category(), "unix socket path: " + path);
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) ::unlink(path.c_str());

  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw_errno("socket");
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(fd, 128) != 0) {
    const int err = errno;
    ::close(fd);
    throw std::system_error(err, std::generic_category(), "bind/listen " + path);
  }
  return std::make_unique<ServerImpl>(fd, path, 0, std::move(handler), limits);
}

std::unique_ptr<HttpServer> HttpServer::tcp(const std::string& host, int port, Handler handler,
                                            HttpServerLimits limits) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    throw std::system_error(EINVAL, std::generic_category(), "not an IPv4 address: " + host);
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw_errno("socket");
  const int yes = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(fd, 128) != 0) {
    const int err = errno;
    ::close(fd);
    throw std::system_error(err, std::generic_category(),
                            "bind/listen " + host + ":" + std::to_string(port));
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return std::make_unique<ServerImpl>(fd, std::string(), ntohs(addr.sin_port), std::move(handler),
                                      limits);
}

}  // namespace cn::fakes
