#include "tests/fakes/http/http_server.h"

#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <fcntl.h>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <list>
#include <system_error>

#include "tests/fakes/http/http_wire.h"
#include "tests/fakes/http/server_connection.h"

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

// Headers httplib adds to every parsed request; a Go server has no such thing.
bool is_httplib_pseudo_header(const std::string& name) {
  return name == "REMOTE_ADDR" || name == "REMOTE_PORT" || name == "LOCAL_ADDR" ||
         name == "LOCAL_PORT";
}

// A handler's body writes go through httplib's DataSink, which frames chunks.
class SinkStreamWriter final : public StreamWriter {
 public:
  SinkStreamWriter(httplib::DataSink& sink, const ServerConnection& conn,
                   const std::atomic<bool>& server_stopping)
      : sink_(sink), conn_(conn), server_stopping_(server_stopping) {}

  bool write(const std::string& data) override {
    if (failed_ || server_stopping_.load()) return false;
    if (data.empty()) return true;  // an empty chunk would end a chunked body
    if (!sink_.write(data.data(), data.size())) failed_ = true;
    return !failed_;
  }

  bool stopping() const override {
    return failed_ || server_stopping_.load() ||
           conn_.wait_hangup_or_stop(std::chrono::milliseconds(0));
  }

  bool wait_stopping(std::chrono::milliseconds d) override {
    if (failed_ || server_stopping_.load()) return true;
    return conn_.wait_hangup_or_stop(d) || server_stopping_.load();
  }

  bool failed() const { return failed_; }

 private:
  httplib::DataSink& sink_;
  const ServerConnection& conn_;
  const std::atomic<bool>& server_stopping_;
  bool failed_ = false;
};

// One thread per connection, as Go's net/http: long polls, streams and stalls must not wait for
// a free worker (httplib's default pool has max(8, cores - 1) threads). Only httplib's listen
// thread calls enqueue() and shutdown().
class ThreadPerConnection final : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> fn) override {
    reap();
    auto done = std::make_shared<std::atomic<bool>>(false);
    workers_.push_back({std::thread([fn = std::move(fn), done] {
                          fn();
                          done->store(true);
                        }),
                        done});
  }

  void shutdown() override {
    for (auto& w : workers_) w.thread.join();
    workers_.clear();
  }

 private:
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };

  void reap() {
    for (auto it = workers_.begin(); it != workers_.end();) {
      if (it->done->load()) {
        it->thread.join();
        it = workers_.erase(it);
      } else {
        ++it;
      }
    }
  }

  std::list<Worker> workers_;
};

class ServerImpl final : public HttpServer, private httplib::Server {
 public:
  ServerImpl(std::string unix_path, HttpServer::Handler handler, HttpServerLimits limits)
      : unix_path_(std::move(unix_path)), handler_(std::move(handler)), limits_(limits) {
    stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (stop_fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
    new_task_queue = [] { return new ThreadPerConnection(); };
    // As Go's listeners: SO_REUSEADDR (a port in TIME_WAIT can be bound again), but not the
    // SO_REUSEPORT of httplib's default options, which would let a second fake bind a busy port.
    set_socket_options([](int sock) {
      const int yes = 1;
      ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
      // And TCP_NODELAY, which Go's net package sets on every TCP connection: without it a
      // response written in two parts waits out the client's delayed ACK, 40 ms per request on
      // a kept-alive connection (bench/policy_bench.cpp measured it). Accepted sockets inherit
      // it from the listener; on a unix socket the call fails and changes nothing.
      ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    });
    set_pre_routing_handler([this](const httplib::Request&, httplib::Response& res) {
      serve(*current_, res);
      return HandlerResponse::Handled;
    });
    // Go sends no Keep-Alive header; httplib's advertises limits this server does not apply.
    set_post_routing_handler(
        [](const httplib::Request&, httplib::Response& res) { res.headers.erase("Keep-Alive"); });
  }

  ~ServerImpl() override {
    stop();
    ::close(stop_fd_);
  }

  // Binds now so that a client may connect as soon as the factory returns.
  void bind_unix() {
    set_address_family(AF_UNIX);
    errno = 0;
    if (!bind_to_port(unix_path_, 80)) {
      throw std::system_error(errno ? errno : EADDRINUSE, std::generic_category(),
                              "bind/listen " + unix_path_);
    }
    bound_ = true;
    widen_backlog();
  }

  void bind_tcp(const std::string& host, int port) {
    errno = 0;
    if (port == 0) {
      port_ = bind_to_any_port(host);
    } else {
      port_ = bind_to_port(host, port) ? port : -1;
    }
    if (port_ <= 0) {
      throw std::system_error(errno ? errno : EADDRINUSE, std::generic_category(),
                              "bind/listen " + host + ":" + std::to_string(port));
    }
    widen_backlog();
  }

  void start() override {
    std::lock_guard lock(lifecycle_mu_);
    if (started_ || stopped_) return;
    started_ = true;
    listen_thread_ = std::thread([this] { listen_after_bind(); });
  }

  void stop() override {
    std::lock_guard lock(lifecycle_mu_);
    if (stopped_) return;
    stopped_ = true;
    stopping_.store(true);
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto w = ::write(stop_fd_, &one, sizeof one);
    // httplib's own stop() does nothing until its listen loop has set is_running(), so a stop
    // right after start() would be lost; closing the listener ourselves works at any point.
    const int sock = svr_sock_.exchange(INVALID_SOCKET);
    if (sock != INVALID_SOCKET) {
      ::shutdown(sock, SHUT_RDWR);
      ::close(sock);
    }
    if (listen_thread_.joinable()) listen_thread_.join();  // joins every connection thread
    if (bound_ && !unix_path_.empty()) ::unlink(unix_path_.c_str());
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

  int open_connections() const override { return open_.load(); }
  int accepted_connections() const override { return accepted_.load(); }

 private:
  // Overrides httplib's per-connection loop (a private virtual of httplib::Server) so that every
  // read and write goes through ServerConnection.
  bool process_and_close_socket(int sock) override {
    ::fcntl(sock, F_SETFD, FD_CLOEXEC);  // httplib accepts without SOCK_CLOEXEC
    accepted_.fetch_add(1);
    open_.fetch_add(1);
    {
      ServerConnection conn(sock, stop_fd_, limits_);
      current_ = &conn;
      while (!stopping_.load() && conn.wait_next_request()) {
        conn.begin_request();
        bool closed = false;
        const bool ok = process_request(conn, false, closed, [this, &conn](httplib::Request& r) {
          conn.end_head();
          take_head(r);
        });
        if (!conn.dispatched() && conn.status_written() != 0) {
          // httplib (or the head limit) refused the request before any handler saw it.
          log_refused(conn);
          break;
        }
        if (!ok || closed || conn.must_close()) break;
      }
      current_ = nullptr;
    }
    // FIN now so that the client sees the close even if a child process inherited the socket.
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
    open_.fetch_sub(1);
    return true;
  }

  // httplib's setup_request hook: the head is parsed, the body not yet read.
  void take_head(httplib::Request& r) {
    pending_ = HttpRequest{};
    pending_.method = r.method;
    pending_.target = r.target;
    for (const auto& [name, value] : r.headers) {
      if (is_httplib_pseudo_header(name)) continue;
      auto [it, inserted] = pending_.headers.emplace(name, value);
      if (!inserted) it->second += ", " + value;  // repeated headers fold into a list
    }
    // Go servers neither compress nor serve ranges for these APIs; without the headers httplib
    // does neither.
    r.headers.erase("Accept-Encoding");
    r.ranges.clear();
  }

  void log(LoggedRequest entry) {
    std::lock_guard lock(log_mu_);
    log_.push_back(std::move(entry));
  }

  void log_refused(const ServerConnection& conn) {
    HttpRequest req;
    const std::string line = conn.request_line();
    const std::size_t sp1 = line.find(' ');
    req.method = line.substr(0, sp1);
    if (sp1 != std::string::npos) {
      const std::size_t sp2 = line.find(' ', sp1 + 1);
      req.target = line.substr(sp1 + 1, sp2 == std::string::npos ? sp2 : sp2 - sp1 - 1);
      wire::parse_target(req);
    }
    const auto now = std::chrono::steady_clock::now();
    log({now, now, req.method, req.target, conn.status_written(), req.path});
  }

  static void plain_error(httplib::Response& res, int status, const std::string& message) {
    res.status = status;
    res.set_header("Connection", "close");
    res.set_content(message + "\n", "text/plain");
  }

  // The one route: everything httplib parsed goes to the fake's handler.
  void serve(ServerConnection& conn, httplib::Response& res) {
    conn.mark_dispatched();
    HttpRequest req = std::move(pending_);
    const auto received = std::chrono::steady_clock::now();
    if (const auto err = wire::parse_target(req)) {
      conn.close_after_response();
      log({received, received, req.method, req.target, 400, req.path});
      return plain_error(res, 400, *err);
    }
    if (const auto err = conn.read_body(req, req.body)) {
      if (err->status == 0) {
        res.status = 500;  // never sent: the peer is gone or the server stops
        return conn.drop();
      }
      conn.close_after_response();
      return plain_error(res, err->status, err->message);
    }

    req.client_gone = [&conn] { return conn.wait_hangup_or_stop(std::chrono::milliseconds(0)); };
    LoggedRequest entry{received, {}, req.method, req.target, 0, req.path};
    HttpResponse resp;
    try {
      resp = handler_(req);
    } catch (const std::exception& e) {
      resp = HttpResponse{};
      resp.status = 500;
      resp.headers.emplace_back("Content-Type", "text/plain");
      resp.body = std::string("handler threw: ") + e.what();
    }

    if (resp.drop_without_response || resp.stall) {
      entry.answered = std::chrono::steady_clock::now();
      log(entry);
      res.status = 500;  // never sent
      return resp.stall ? conn.stall() : conn.drop();
    }

    res.status = resp.status;
    std::string content_type;
    for (const auto& [name, value] : resp.headers) {
      // The server owns framing; a handler's stray framing header would corrupt the stream.
      if (wire::iequals(name, "Content-Length") || wire::iequals(name, "Transfer-Encoding") ||
          wire::iequals(name, "Connection")) {
        continue;
      }
      if (wire::iequals(name, "Content-Type")) {
        content_type = value;
        continue;
      }
      res.headers.emplace(name, value);
    }
    if (content_type.empty() && (resp.stream || !resp.body.empty())) {
      content_type = "application/json";
    }
    // A stream without chunks ends when the connection closes (Nomad >= 1.11.3's event stream).
    const bool close = resp.close_connection || (resp.stream && !resp.chunked);
    if (close) {
      res.set_header("Connection", "close");
      conn.close_after_response();
    }
    entry.status = resp.status;
    // Logged before the bytes go out, so a client that saw the answer also sees the entry.
    entry.answered = std::chrono::steady_clock::now();
    log(entry);

    if (!resp.stream) {
      if (!content_type.empty()) res.set_header("Content-Type", content_type);
      res.body = std::move(resp.body);
      return;
    }
    auto provider = [this, &conn, stream = std::move(resp.stream)](std::size_t,
                                                                   httplib::DataSink& sink) {
      SinkStreamWriter writer(sink, conn, stopping_);
      try {
        stream(writer);
      } catch (const std::exception&) {
        return false;  // the body is already half-sent; closing is the only honest signal
      }
      if (writer.failed()) return false;
      sink.done();
      return true;
    };
    if (resp.chunked) {
      res.set_chunked_content_provider(content_type, std::move(provider));
    } else {
      res.set_content_provider(content_type, std::move(provider));
    }
  }

  // httplib listens with a backlog of 5; a burst of parallel clients would see refusals that a
  // Go server (backlog SOMAXCONN) never gives. listen() again only changes the backlog.
  void widen_backlog() { ::listen(svr_sock_, 128); }

  std::string unix_path_;
  bool bound_ = false;  // the socket file at unix_path_ is ours to remove
  int port_ = 0;
  HttpServer::Handler handler_;
  HttpServerLimits limits_;
  int stop_fd_ = -1;

  // Per connection thread: the connection being served and the head httplib just parsed.
  static thread_local ServerConnection* current_;
  static thread_local HttpRequest pending_;

  std::mutex lifecycle_mu_;
  bool started_ = false;
  bool stopped_ = false;
  std::atomic<bool> stopping_{false};
  std::thread listen_thread_;

  std::atomic<int> accepted_{0};
  std::atomic<int> open_{0};

  mutable std::mutex log_mu_;
  std::vector<LoggedRequest> log_;
};

thread_local ServerConnection* ServerImpl::current_ = nullptr;
thread_local HttpRequest ServerImpl::pending_;

}  // namespace

std::unique_ptr<HttpServer> HttpServer::unix_socket(const std::string& path, Handler handler,
                                                    HttpServerLimits limits) {
  if (path.empty() || path.size() >= sizeof(sockaddr_un::sun_path)) {
    throw std::system_error(ENAMETOOLONG, std::generic_category(), "unix socket path: " + path);
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) ::unlink(path.c_str());
  auto server = std::make_unique<ServerImpl>(path, std::move(handler), limits);
  server->bind_unix();
  return server;
}

std::unique_ptr<HttpServer> HttpServer::tcp(const std::string& host, int port, Handler handler,
                                            HttpServerLimits limits) {
  auto server = std::make_unique<ServerImpl>(std::string(), std::move(handler), limits);
  server->bind_tcp(host, port);
  return server;
}

}  // namespace cn::fakes
