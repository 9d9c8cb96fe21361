#include "labeler/status_server.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include <httplib.h>

namespace cn::labeler {

// httplib's own stop() does nothing until the listener thread has marked itself running, so a
// stop() that comes first leaves that thread blocked in accept() for good, and joining it hangs
// shutdown. Closing the listening socket ourselves works in every order: a listener not yet
// started finds no socket and returns at once, one in accept() is woken by the shutdown.
class StatusServer::Listener final : public httplib::Server {
 public:
  void close_listener() {
    auto sock = svr_sock_.exchange(INVALID_SOCKET);
    if (sock == INVALID_SOCKET) return;
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
  }
};

StatusServer::StatusServer(Metrics& metrics, Readiness readiness)
    : metrics_(metrics), readiness_(std::move(readiness)), server_(std::make_unique<Listener>()) {}

StatusServer::~StatusServer() {
  stop();
}

Status StatusServer::start(const std::string& address) {
  auto colon = address.rfind(':');
  if (colon == std::string::npos) return fail("--metrics-addr must be HOST:PORT, got " + address);
  std::string host = address.substr(0, colon);
  int port = 0;
  try {
    port = std::stoi(address.substr(colon + 1));
  } catch (...) {
    return fail("--metrics-addr has no valid port: " + address);
  }
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);

  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    metrics_.ready().Set(readiness_().first ? 1 : 0);
    res.set_content(metrics_.render(), "text/plain; version=0.0.4; charset=utf-8");
  });
  server_->Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    auto [ok, reason] = readiness_();
    res.status = ok ? 200 : 503;
    std::string body = ok ? "ok\n" : "not ready: " + reason + "\n";
    if (detail_) body += detail_();
    res.set_content(body, "text/plain; charset=utf-8");
  });
  // httplib reports only success or failure; the bind's errno is still set when it returns.
  errno = 0;
  if (port == 0) {
    port_ = server_->bind_to_any_port(host);
  } else {
    port_ = server_->bind_to_port(host, port) ? port : -1;
  }
  if (port_ < 0) {
    const int err = errno;
    return fail("metrics address " + address + " is not available (" +
                (err != 0 ? errno_text(err) : std::string("host not resolvable")) + ")");
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  return {};
}

void StatusServer::stop() {
  // Keep-alive connections end too: httplib serves them only while the listening socket is set.
  if (server_) server_->close_listener();
  if (thread_.joinable()) thread_.join();
}

}  // namespace cn::labeler
