#include "labeler/services/services_flags.h"

#include <map>

#include "labeler/commands/cli_checks.h"

namespace cn::labeler {

void add_services_options(CLI::App* cmd, ServicesFlags& flags) {
  auto& s = flags.settings;
  const char* group = "Nomad services on Cilium's load balancer (docs/services.md)";
  cmd->add_option("--lb-state-file", s.lb_state_file,
                  "The file the local agent's --lb-state-file reads (.json), written by the "
                  "labeler (empty: the feature is off unless --lb-api rest)")
      ->group(group);
  cmd->add_option("--service-vip-range", s.vip_range,
                  "Where service VIPs come from: one IPv4 or IPv6 CIDR, the same on every node, "
                  "clear of the pod CIDRs and the nodes' addresses")
      ->group(group);
  const std::map<std::string, LbApiChoice> apis = {{"auto", LbApiChoice::automatic},
                                                   {"state-file", LbApiChoice::state_file},
                                                   {"rest", LbApiChoice::rest}};
  cmd->add_option("--lb-api", s.api,
                  "How services reach the agent: state-file (1.18+), rest (PUT /v1/service, "
                  "1.16 and 1.17) or auto (ask the agent)")
      ->transform(cli::one_of(apis))
      ->default_str("auto")
      ->group(group);
  cmd->add_option("--service-check-interval", flags.check_interval,
                  "How often this node's instances' Nomad checks are read from its own client")
      ->capture_default_str()
      ->check(cli::go_duration())
      ->group(group);
  cmd->add_option("--service-vip-grace", flags.vip_grace,
                  "How long a deleted service's VIP stays reserved before another service may "
                  "take it")
      ->capture_default_str()
      ->check(cli::go_duration())
      ->group(group);
}

Result<ServicesSettings> services_settings(const ServicesFlags& flags) {
  ServicesSettings s = flags.settings;
  std::chrono::milliseconds d{0};
  if (auto ok = cli::read_duration("--service-check-interval", flags.check_interval,
                                   std::chrono::seconds{1}, d);
      !ok) {
    return std::unexpected(ok.error());
  }
  s.check_interval = std::chrono::duration_cast<std::chrono::seconds>(d);
  if (auto ok =
          cli::read_duration("--service-vip-grace", flags.vip_grace, std::chrono::minutes{1}, d);
      !ok) {
    return std::unexpected(ok.error());
  }
  s.vip_grace = std::chrono::duration_cast<std::chrono::seconds>(d);
  if (!s.enabled()) {
    if (!s.vip_range.empty()) {
      return fail("--service-vip-range needs --lb-state-file (or --lb-api rest)");
    }
    return s;
  }
  if (s.vip_range.empty()) {
    return fail("--lb-state-file needs --service-vip-range, the CIDR service VIPs come from");
  }
  if (!s.lb_state_file.empty() && !s.lb_state_file.ends_with(".json")) {
    // The agent picks the format by suffix; the labeler writes JSON only.
    return fail("--lb-state-file " + s.lb_state_file + ": must end in .json");
  }
  if (s.api == LbApiChoice::rest && !s.lb_state_file.empty()) {
    return fail("--lb-api rest writes no file: drop --lb-state-file");
  }
  return s;
}

}  // namespace cn::labeler
