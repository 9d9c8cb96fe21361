#pragma once
// Cilium's --lb-state-file (1.18+) read as the agent reads it (cilium/cilium
// pkg/loadbalancer/reflectors/file.go): Kubernetes Services and EndpointSlices in JSON or YAML,
// decoded by lb_state_decode.h, turned into frontends and backends by the rules of
// reflectors/conversions.go, pkg/k8s/endpoints.go and writer/writer.go for the emulated release.
#include <string>
#include <string_view>

#include "common/util/result.h"
#include "tests/fakes/cilium/lb_state_decode.h"
#include "tests/fakes/cilium/lb_table.h"

namespace cn::fakes::cilium {

// By suffix; anything but .json, .yaml or .yml is the agent's start-up error.
Result<LbFileFormat> lb_state_file_format(const std::string& path);

// What of the agent's configuration decides how a file is read.
struct LbEmulation {
  int minor = 18;  // 1.<minor>.<patch>
  int patch = 0;
  bool kube_proxy_replacement = false;
  bool ipv4 = true;
  bool ipv6 = false;
  std::string node_name = "fake-node";  // Local traffic policies keep this node's backends
};

// writer.go DefaultSelectBackends: the backends of `svc` that `fe` takes.
std::vector<LbBackend> select_lb_backends(const LbFrontend& fe, const LbService& svc,
                                          const LbEmulation& emulation);

// Cilium 1.18.0 to 1.19.4 keep a backend that two file services share in the one the file no
// longer lists (cilium/cilium#46493).
bool lb_keeps_stale_shared_backends(const LbEmulation& emulation);

// The whole file, or the first error (a decode error, or a frontend two services claim).
// Frontend IDs are left 0 for the caller to assign.
Result<LbTable> parse_lb_state_file(std::string_view text, LbFileFormat format,
                                    const LbEmulation& emulation);

}  // namespace cn::fakes::cilium
