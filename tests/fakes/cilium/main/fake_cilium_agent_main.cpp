// fake-cilium-agent: the fake Cilium agent as a standalone process (demo, manual testing).
// Serves until SIGINT/SIGTERM. See tests/fakes/README.md.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>

#include "tests/fakes/cilium/cilium_labels.h"
#include "tests/fakes/cilium/fake_cilium_agent.h"

namespace {

// Go's time.ParseDuration for the forms flags take ("1s", "10ms", "1m30s"); nullopt otherwise.
std::optional<std::chrono::milliseconds> parse_go_duration(const std::string& text) {
  if (text == "0") return std::chrono::milliseconds(0);
  double total_ns = 0;
  std::size_t i = 0;
  if (text.empty()) return std::nullopt;
  while (i < text.size()) {
    std::size_t j = i;
    while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '.'))
      ++j;
    if (j == i) return std::nullopt;
    const double value = std::stod(text.substr(i, j - i));
    std::size_t k = j;
    while (k < text.size() && !std::isdigit(static_cast<unsigned char>(text[k]))) ++k;
    const std::string unit = text.substr(j, k - j);
    double scale = 0;
    if (unit == "ns")
      scale = 1;
    else if (unit == "us" || unit == "\u00b5s")
      scale = 1e3;
    else if (unit == "ms")
      scale = 1e6;
    else if (unit == "s")
      scale = 1e9;
    else if (unit == "m")
      scale = 60e9;
    else if (unit == "h")
      scale = 3600e9;
    else
      return std::nullopt;
    total_ns += value * scale;
    i = k;
  }
  return std::chrono::milliseconds(static_cast<long long>(total_ns / 1e6));
}

// strconv.ParseBool, which 1.19+ uses for --kube-proxy-replacement.
std::optional<bool> parse_go_bool(const std::string& s) {
  if (s == "1" || s == "t" || s == "T" || s == "TRUE" || s == "true" || s == "True") return true;
  if (s == "0" || s == "f" || s == "F" || s == "FALSE" || s == "false" || s == "False")
    return false;
  return std::nullopt;
}

}  // namespace

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
  std::string lb_interval = "1s";
  std::string kpr = "false";
  app.add_option("--socket", cfg.socket_path, "Unix socket to serve on")->capture_default_str();
  app.add_option("--version", version,
                 "Emulated agent: 1.15, 1.16, 1.17, 1.18[.N], 1.19[.N] or 1.20")
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
  app.add_option("--lb-state-file", cfg.lb_state_file,
                 "Load-balancer state file (.json, .yaml or .yml; 1.18+)");
  app.add_option("--lb-state-file-interval", lb_interval,
                 "Quiet time after the last file event before it is read (Go duration)")
      ->capture_default_str();
  app.add_option("--kube-proxy-replacement", kpr,
                 "true or false: NodePort frontends (and 1.18's LoadBalancer/ExternalIPs)")
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

  const auto release = cn::fakes::parse_cilium_release(version);
  if (!release) {
    std::cerr << "unsupported --version " << version
              << " (1.15, 1.16, 1.17, 1.18[.N], 1.19[.N], 1.20)\n";
    return 2;
  }
  cfg.version = release->version;
  cfg.version_patch = release->patch;
  const auto interval = parse_go_duration(lb_interval);
  if (!interval) {
    std::cerr << "invalid argument \"" << lb_interval
              << "\" for \"--lb-state-file-interval\" flag: time: invalid duration\n";
    return 2;
  }
  cfg.lb_state_file_interval = *interval;
  // A string option until 1.18 (only "true" and "false" are valid there), a bool from 1.19.
  const auto kpr_value =
      cfg.version >= cn::fakes::CiliumVersion::v1_19
          ? parse_go_bool(kpr)
          : (kpr == "true" || kpr == "false" ? std::optional(kpr == "true") : std::nullopt);
  if (!kpr_value) {
    std::cerr << "invalid --kube-proxy-replacement=" << kpr << "\n";
    return 2;
  }
  cfg.kube_proxy_replacement = *kpr_value;
  if (const char* node = std::getenv("K8S_NODE_NAME"); node && *node) cfg.node_name = node;
  if (!cfg.lb_state_file.empty() && cfg.version < cn::fakes::CiliumVersion::v1_18) {
    std::cerr << "unknown flag: --lb-state-file (Cilium " << version << " has none)\n";
    return 2;
  }
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
