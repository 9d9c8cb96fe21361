#include "labeler/status_server.h"

#include <httplib.h>

namespace cn::labeler {

StatusServer::StatusServer(Metrics& metrics, Readiness readiness)
    : metrics_(metrics), readiness_(std::move(readiness)), server_(std::make_unique<httplib::Server>()) {}

StatusServer::~StatusServer() { stop(); }

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
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);

  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_.render(), "text/plain; version=0.0.4; charset=utf-8");
  });
  server_->Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    auto [ok, reason] = readiness_();
    res.status = ok ? 200 : 503;
    res.set_content(ok ? "ok\n" : "not ready: " + reason + "\n", "text/plain; charset=utf-8");
  });
  if (port == 0) {
    port_ = server_->bind_to_any_port(host.c_str());
    if (port_ < 0) return fail("cannot listen on " + address);
  } else {
    if (!server_->bind_to_port(host.c_str(), port)) return fail("cannot listen on " + address);
    port_ = port;
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  return {};
}

void StatusServer::stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace cn::labeler
