// fake-cilium-agent: the fake Cilium agent as a standalone process (demo, manual testing).
// Serves until SIGINT/SIGTERM. See tests/fakes/README.md.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "tests/fakes/cilium/cilium_labels.h"
#include "tests/fakes/cilium/fake_cilium_agent.h"

int main(int argc, char** argv) {
  CLI::App app{"Fake Cilium agent (endpoint API on a unix socket, plus /_fake/ control API)"};
  cn::fakes::FakeCiliumAgentConfig cfg;
  cfg.socket_path = "/var/run/cilium/cilium.sock";
  std::string version = "1.17";
  long long identity_delay_ms = 50;
  long long regeneration_step_ms = 10;
  long long grace_ms = 5000;
  std::string rate_limits = "off";
  std::vector<std::string> rate_limit_specs;
  std::string labels;
  std::string ready_file;
  app.add_option("--socket", cfg.socket_path, "Unix socket to serve on")->capture_default_str();
  app.add_option("--version", version, "Emulated agent: 1.15, 1.16, 1.17 or 1.20")
      ->capture_default_str();
  app.add_option("--identity-delay-ms", identity_delay_ms, "Label change -> identity applied")
      ->capture_default_str();
  app.add_option("--regeneration-step-ms", regeneration_step_ms, "Each regeneration state step")
      ->capture_default_str();
  app.add_option("--grace-period-ms", grace_ms, "identity-change-grace-period (Cilium: 5000)")
      ->capture_default_str();
  app.add_option("--rate-limits", rate_limits, "off, or default (Cilium's per-group limits)")
      ->capture_default_str();
  app.add_option("--api-rate-limit", rate_limit_specs,
                 "Override, e.g. endpoint-patch=rate-limit:2/s,rate-burst:4,max-wait-duration:15s "
                 "(repeatable)");
  app.add_option("--labels", labels,
                 "Agent --labels patterns, e.g. \"nomad:.* k8s:app\" (allow-list mode)");
  app.add_option("--seed", cfg.seed, "Seed for endpoint IDs and identity numbers")
      ->capture_default_str();
  app.add_option("--ipv4-range", cfg.ipv4_alloc_range, "Pod CIDR reported by GET /v1/config")
      ->capture_default_str();
  app.add_option("--ipv4-router-ip", cfg.ipv4_router_ip, "cilium_host IP (CNI gateway)")
      ->capture_default_str();
  app.add_option("--health-ip", cfg.health_ipv4, "IPv4 of the health endpoint")
      ->capture_default_str();
  app.add_option("--ready-file", ready_file, "Written once the socket accepts connections");
  app.add_option("--static-cnp-path", cfg.static_cnp_path,
                 "Directory of CiliumNetworkPolicy YAML files to watch (1.16+); an "
                 "untranslatable file makes the agent exit 1");
  app.add_option("--cluster-name", cfg.cluster_name,
                 "Cluster name (healthz cluster.self; peer selectors of directory policies on "
                 "1.19+)")
      ->capture_default_str();
  // The agent's own flag names; defaults are upstream's (pkg/defaults/defaults.go).
  app.add_option("--enable-node-selector-labels", cfg.options.enable_node_selector_labels,
                 "fromNodes/toNodes rules allowed")
      ->capture_default_str();
  app.add_option("--enable-l7-proxy", cfg.options.enable_l7_proxy, "L7 rules allowed")
      ->capture_default_str();
  app.add_option("--enable-icmp-rules", cfg.options.enable_icmp_rules, "ICMP rules allowed")
      ->capture_default_str();
  app.add_option("--enable-host-firewall", cfg.options.enable_host_firewall,
                 "Host policies enforced")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  const auto v = cn::fakes::parse_cilium_version(version);
  if (!v) {
    std::cerr << "unsupported --version " << version << " (1.15, 1.16, 1.17, 1.20)\n";
    return 2;
  }
  cfg.version = *v;
  cfg.identity_delay = std::chrono::milliseconds(identity_delay_ms);
  cfg.regeneration_step = std::chrono::milliseconds(regeneration_step_ms);
  cfg.identity_grace_period = std::chrono::milliseconds(grace_ms);
  if (rate_limits != "off" && rate_limits != "default") {
    std::cerr << "--rate-limits must be off or default\n";
    return 2;
  }
  cfg.rate_limits = rate_limits == "default" || !rate_limit_specs.empty();
  for (const auto& spec : rate_limit_specs) {
    auto parsed = cn::fakes::cilium::parse_api_rate_limit(
        spec, cn::fakes::cilium_default_rate_limits(cfg.version));
    if (!parsed) {
      std::cerr << "--api-rate-limit: " << parsed.error().message << "\n";
      return 2;
    }
    cfg.rate_limit_overrides[parsed->first] = parsed->second;
  }
  cfg.label_patterns = cn::fakes::cilium::LabelFilter::split_patterns(labels);
  if (!cfg.static_cnp_path.empty() && cfg.version == cn::fakes::CiliumVersion::v1_15) {
    std::cerr << "unknown flag: --static-cnp-path (Cilium 1.15 has no static policy directory)\n";
    return 2;
  }
  cfg.on_log = [](const std::string& line) { std::cerr << line << std::endl; };
  // logging.Fatal: the agent's process ends with status 1. _Exit: no destructor may run while
  // the watcher and connection threads still use the agent.
  cfg.on_fatal = [](const std::string&) {
    std::cerr.flush();
    std::_Exit(1);
  };

  // Block the stop signals before any thread starts so that only sigwait() sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  try {
    cn::fakes::FakeCiliumAgent agent(cfg);
    agent.start();
    std::cerr << "fake-cilium-agent " << version << " listening on " << cfg.socket_path
              << std::endl;
    if (!ready_file.empty()) std::ofstream(ready_file) << cfg.socket_path << "\n";
    int sig = 0;
    sigwait(&stop_signals, &sig);
    agent.stop();
  } catch (const std::exception& e) {
    std::cerr << "fake-cilium-agent: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
