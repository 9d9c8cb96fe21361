#pragma once
// The labeler daemon inside the test process, wired to a FakeNode through the real curl
// clients, on a clock the test chooses (a ManualClock runs outages and backoff in simulated
// time). For faults whose outcome shows in the daemon's logs and metrics, or whose timing
// would be too slow in real time; the crash tests run the real binary instead.
#include <memory>
#include <optional>
#include <stop_token>
#include <string>

#include "common/cilium/client/curl_cilium_client.h"
#include "common/nomad/client/curl_nomad_client.h"
#include "common/notify/protocol.h"
#include "labeler/daemon/labeler_daemon.h"
#include "tests/reliability/support/fake_node.h"
#include "tests/reliability/support/log_capture.h"

namespace cn::reliability {

class InProcessLabeler {
 public:
  // The defaults of a test daemon: no watch, no periodic resync, no metrics listener, and this
  // process's uid allowed on the notify socket (tests may run unprivileged).
  static labeler::DaemonConfig config_for(const FakeNode& node);

  InProcessLabeler(FakeNode& node, labeler::DaemonConfig config, Clock& clock = system_clock(),
                   nomad::NomadClientConfig nomad_config = {});
  ~InProcessLabeler();
  InProcessLabeler(const InProcessLabeler&) = delete;
  InProcessLabeler& operator=(const InProcessLabeler&) = delete;

  // LabelerDaemon::start: listens, waits for both APIs, first reconcile.
  Status start();
  void stop();
  labeler::LabelerDaemon& daemon() { return *daemon_; }
  std::string logs() const { return logs_.text(); }

  // What the plugin sends after recording the allocation. wait_ms 0: fire and forget.
  Result<std::optional<notify::Reply>> notify_add(const std::string& alloc, const std::string& ip,
                                                  int wait_ms, cni::NomadWorkload hint = {});

 private:
  FakeNode& node_;
  Clock& clock_;
  LogCapture logs_;
  std::unique_ptr<nomad::CurlNomadClient> nomad_;
  std::unique_ptr<cilium::CurlCiliumClient> cilium_;
  std::unique_ptr<labeler::LabelerDaemon> daemon_;
  std::stop_source stop_;
};

}  // namespace cn::reliability
