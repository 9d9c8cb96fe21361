#pragma once
// --metrics-addr: GET /metrics (Prometheus text) and GET /healthz (200 "ok" once ready, else 503
// with the reason). Loopback by default: it tells which workloads run on the node.
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "common/util/result.h"
#include "labeler/metrics.h"

namespace httplib {
class Server;
}

namespace cn::labeler {

class StatusServer {
 public:
  using Readiness = std::function<std::pair<bool, std::string>()>;

  StatusServer(Metrics& metrics, Readiness readiness);
  ~StatusServer();

  // `host:port`; port 0 picks a free one (see port()).
  Status start(const std::string& address);
  void stop();
  int port() const { return port_; }

 private:
  Metrics& metrics_;
  Readiness readiness_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace cn::labeler
