#pragma once
// --metrics-addr: GET /metrics (Prometheus text) and GET /healthz (200 "ok" when ready, else 503
// with the reason). Loopback by default: it tells which workloads run on the node.
// The cilium_nomad_ready gauge is set from the same readiness at every scrape, so the two never
// disagree.
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "common/util/result.h"
#include "labeler/metrics.h"

namespace cn::labeler {

class StatusServer {
 public:
  using Readiness = std::function<std::pair<bool, std::string>()>;

  StatusServer(Metrics& metrics, Readiness readiness);
  // Lines /healthz adds after its verdict (the cluster duties' leader); they never change the
  // verdict. Set before start().
  void set_detail(std::function<std::string()> detail) { detail_ = std::move(detail); }
  ~StatusServer();

  // `host:port`; port 0 picks a free one (see port()). Fails when the address cannot be bound,
  // naming the system's reason.
  Status start(const std::string& address);
  // Returns once the listener thread has ended, whether or not it had begun to accept.
  void stop();
  int port() const { return port_; }

 private:
  class Listener;  // httplib::Server that can be closed before it starts listening
  Metrics& metrics_;
  Readiness readiness_;
  std::function<std::string()> detail_;
  std::unique_ptr<Listener> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace cn::labeler
