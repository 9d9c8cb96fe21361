#include "tests/reliability/support/in_process_labeler.h"

#include <unistd.h>

#include <stdexcept>

#include "common/notify/notify_client.h"

namespace cn::reliability {

labeler::DaemonConfig InProcessLabeler::config_for(const FakeNode& node) {
  labeler::DaemonConfig config;
  config.socket_path = node.labeler_socket();
  config.state_file = node.state_file();
  config.node_id = node.node_id();
  config.resync_interval = std::chrono::seconds{0};
  config.watch = labeler::WatchMode::kNone;
  config.metrics_addr = "";
  config.allowed_uids = {0, static_cast<unsigned>(::getuid())};
  return config;
}

InProcessLabeler::InProcessLabeler(FakeNode& node, labeler::DaemonConfig config, Clock& clock,
                                   nomad::NomadClientConfig nomad_config)
    : node_(node), clock_(clock) {
  nomad_config.address = node.nomad().address();
  auto nomad = nomad::CurlNomadClient::create(nomad_config, clock, logs_.logger());
  if (!nomad) throw std::runtime_error(nomad.error().message);
  nomad_ = std::move(*nomad);
  cilium::CiliumClientConfig cc;
  cc.socket_path = node.cilium_socket();
  cilium_ = std::make_unique<cilium::CurlCiliumClient>(cc, clock, logs_.logger());
  daemon_ = std::make_unique<labeler::LabelerDaemon>(std::move(config), *nomad_, *cilium_, clock,
                                                     logs_.logger());
}

InProcessLabeler::~InProcessLabeler() {
  stop();
}

Status InProcessLabeler::start() {
  return daemon_->start(stop_.get_token());
}

void InProcessLabeler::stop() {
  stop_.request_stop();
  if (daemon_) daemon_->stop();
}

Result<std::optional<notify::Reply>> InProcessLabeler::notify_add(const std::string& alloc,
                                                                  const std::string& ip,
                                                                  int wait_ms,
                                                                  cni::NomadWorkload hint) {
  notify::Request r;
  r.op = notify::Op::kAdd;
  r.alloc_id = alloc;
  r.ifname = "eth0";
  r.netns = "/var/run/netns/x";
  r.ips = {ip};
  // Nomad >= 1.9.4 sets NOMAD_ALLOC_ID whenever it sets the other fields.
  if (hint.has_identity() && hint.alloc_id.empty()) hint.alloc_id = alloc;
  r.nomad = std::move(hint);
  r.wait_ms = wait_ms;
  // The plugin's own deadline is real time: it is a separate process with its own clock.
  auto& real = system_clock();
  return notify::send_request(node_.labeler_socket(), r, real,
                              real.now() + std::chrono::milliseconds{std::max(wait_ms, 1000)});
}

}  // namespace cn::reliability
