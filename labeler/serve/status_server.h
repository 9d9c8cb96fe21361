#pragma once
// --metrics-addr: GET /metrics (Prometheus text) and GET /healthz (200 "ok" when ready, else 503
// with the reason). Loopback by default: it tells which workloads run on the node.
// The cilium_nomad_ready gauge is set from the same readiness at every scrape, so the two never
// disagree.
//
// One thread serves every connection with poll(): a slow or hostile client costs a descriptor
// and a few KiB, never a thread, so 200 slowloris connections cannot starve the liveness probe.
// Only GET and HEAD exist; a request body is never read into memory, and every response ends
// with Connection: close, so no connection outlives its one request.
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <thread>
#include <utility>

#include "common/util/result.h"
#include "labeler/serve/metrics.h"

namespace cn::labeler {

struct StatusServerLimits {
  // Request line and headers together: a scraper or a probe sends a few hundred bytes.
  std::size_t max_head_bytes = std::size_t{8} * 1024;
  // Open client connections: each costs a descriptor; past it the oldest one still sending its
  // head is closed, so a fresh probe always gets in.
  std::size_t max_connections = 256;
  // From accept to the end of the head: also the idle limit, a connection serves one request.
  std::chrono::milliseconds head_timeout{10'000};
  // To write the response (and hear it acknowledged) before the connection is closed anyway.
  std::chrono::milliseconds write_timeout{10'000};
};

class StatusServer {
 public:
  using Readiness = std::function<std::pair<bool, std::string>()>;

  StatusServer(Metrics& metrics, Readiness readiness, StatusServerLimits limits = {});
  // Lines /healthz adds after its verdict (the cluster duties' leader); they never change the
  // verdict. Set before start().
  void set_detail(std::function<std::string()> detail) { detail_ = std::move(detail); }
  ~StatusServer();
  StatusServer(const StatusServer&) = delete;
  StatusServer& operator=(const StatusServer&) = delete;

  // `host:port`; port 0 picks a free one (see port()). Fails when the address cannot be bound,
  // naming the system's reason; a port another listener holds is refused (no SO_REUSEPORT), so
  // two labelers never answer /healthz in turn.
  [[nodiscard]] Status start(const std::string& address);
  // Returns once the serving thread has ended, whether or not it had begun to poll.
  void stop();
  int port() const { return port_; }

 private:
  struct Connection;
  void serve();
  // The whole response for a complete head; `head` ends at its blank line.
  std::string respond(const std::string& head);

  Metrics& metrics_;
  Readiness readiness_;
  StatusServerLimits limits_;
  std::function<std::string()> detail_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: stop() wakes poll() through it
  std::thread thread_;
  int port_ = 0;
};

}  // namespace cn::labeler
