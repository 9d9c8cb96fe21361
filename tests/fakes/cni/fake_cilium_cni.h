#pragma once
// fake-cilium-cni: plays cilium-cni at the head of a conflist (cni.md section 5). The veth and IP
// work is delegated to the reference `ptp` plugin (with our `ipam`, normally host-local); the
// endpoint is created on the (fake) Cilium agent exactly as cilium-cni does it: PUT
// /v1/endpoint/cilium-local:0 without labels and with sync-build-endpoint, so it starts as
// reserved:init / identity 5. The printed result is cilium-cni shaped.
//
// Netconf keys of our own: "socket" (agent unix socket; default $CILIUM_SOCK or
// /var/run/cilium/cilium.sock), "ipam" (or "delegate-ipam"; passed to ptp; default host-local
// over the agent's alloc-range), "agent-timeout-ms" (default 10000).
#include <map>
#include <string>

namespace cn::fakes::cni_fake {

struct PluginOutput {
  int exit_code = 0;
  std::string out;  // what the runtime parses (result or error JSON)
  std::string err;  // logs
};

PluginOutput run(const std::map<std::string, std::string>& env, const std::string& stdin_text);

}  // namespace cn::fakes::cni_fake
