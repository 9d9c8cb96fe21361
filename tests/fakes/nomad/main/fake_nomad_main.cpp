// fake-nomad: the FakeNomad fake as a process, for the demo and benchmarks. Scenario and faults
// are driven through /_fake/ (see tests/fakes/nomad/spec_json.h and tests/fakes/README.md).
#include <csignal>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>

#include <CLI/CLI.hpp>

#include "tests/fakes/nomad/fake_nomad.h"

namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) {
  g_stop = 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fake-nomad: a fake Nomad HTTP API on 127.0.0.1 for tests, demo and benchmarks"};
  cn::fakes::FakeNomadConfig cfg;
  std::vector<std::string> tokens;
  int heartbeat_ms = 30'000;
  int publish_delay_ms = 0;
  int buffer = 100;
  std::string transport = "raw";
  std::string port_file, scenario_file;
  bool denied_as_eof = false;
  app.add_option("--port", cfg.port, "TCP port on 127.0.0.1 (0: pick one)");
  app.add_option("--node-id", cfg.node_id, "the agent's own node ID");
  app.add_option("--node-name", cfg.node_name, "the agent's own node name");
  app.add_option("--node-ip", cfg.node_ip, "the node's host IP");
  app.add_option("--acl-token", tokens, "management token secret (repeatable; enables ACLs)");
  std::vector<std::string> variable_rules;
  app.add_option("--acl-variables-token", variable_rules,
                 "SECRET=NAMESPACE:PATH_GLOB:CAP[,CAP...] - a token with that variables rule "
                 "(repeatable, rules of one secret add up; enables ACLs)");
  std::vector<std::string> policy_tokens;
  app.add_option("--acl-policy-token", policy_tokens,
                 "SECRET=FILE - a client token holding the ACL policy in FILE (HCL, as for "
                 "`nomad acl policy apply`; repeatable; enables ACLs)");
  app.add_option("--heartbeat-ms", heartbeat_ms, "event stream heartbeat interval");
  app.add_option("--stream-transport", transport, "raw (>= 1.11.3) or chunked (<= 1.11.1)")
      ->check(CLI::IsMember({"raw", "chunked"}));
  app.add_flag("--stream-denied-eof", denied_as_eof,
               "a denied stream is 200 + EOF (>= 1.11.2) instead of 403");
  app.add_option("--publish-delay-ms", publish_delay_ms, "client->server sync delay");
  app.add_option("--event-buffer", buffer, "event buffer size in Raft indexes");
  app.add_option("--port-file", port_file, "write the chosen port to this file");
  app.add_option("--scenario", scenario_file, "JSON scenario to preload");
  CLI11_PARSE(app, argc, argv);

  cfg.heartbeat = std::chrono::milliseconds{heartbeat_ms};
  cfg.publish_delay = std::chrono::milliseconds{publish_delay_ms};
  cfg.event_buffer_size = static_cast<std::size_t>(buffer);
  cfg.stream_transport = transport == "chunked" ? cn::fakes::StreamTransport::kChunked
                                                : cn::fakes::StreamTransport::kRaw;
  cfg.stream_denied_as_eof = denied_as_eof;
  for (const auto& t : tokens) cfg.tokens.push_back(cn::fakes::TokenSpec{t, true, {}, true, true});
  std::map<std::string, cn::fakes::TokenSpec> variable_tokens;
  for (const auto& spec : variable_rules) {
    // SECRET=NS:PATH:CAPS; the path may not hold ':' (Nomad's path regex forbids it anyway).
    auto eq = spec.find('=');
    auto c1 = spec.find(':', eq == std::string::npos ? 0 : eq);
    auto c2 = c1 == std::string::npos ? c1 : spec.find(':', c1 + 1);
    if (eq == std::string::npos || c1 == std::string::npos || c2 == std::string::npos) {
      std::cerr << "fake-nomad: --acl-variables-token wants SECRET=NS:PATH:CAPS, got " << spec
                << "\n";
      return 2;
    }
    cn::fakes::VariablePathRule rule;
    rule.namespace_ = spec.substr(eq + 1, c1 - eq - 1);
    rule.path = spec.substr(c1 + 1, c2 - c1 - 1);
    std::string caps = spec.substr(c2 + 1);
    for (std::size_t start = 0; start <= caps.size();) {
      auto comma = caps.find(',', start);
      std::string cap = caps.substr(start, comma == std::string::npos ? comma : comma - start);
      if (!cap.empty()) rule.capabilities.push_back(cap);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    auto& token = variable_tokens[spec.substr(0, eq)];
    token.secret = spec.substr(0, eq);
    token.management = false;
    token.namespaces.clear();
    token.variables.push_back(std::move(rule));
  }
  for (auto& [secret, token] : variable_tokens) cfg.tokens.push_back(std::move(token));
  for (const auto& spec : policy_tokens) {
    auto eq = spec.find('=');
    std::ifstream in(eq == std::string::npos ? std::string() : spec.substr(eq + 1));
    std::string hcl((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (eq == std::string::npos || !in) {
      std::cerr << "fake-nomad: --acl-policy-token wants SECRET=FILE (a readable file), got "
                << spec << "\n";
      return 2;
    }
    auto token = cn::fakes::token_with_policy(spec.substr(0, eq), hcl);
    if (!token) {
      std::cerr << "fake-nomad: " << spec.substr(eq + 1) << ": " << token.error().message << "\n";
      return 2;
    }
    cfg.tokens.push_back(std::move(*token));
  }
  cfg.acl_enabled = !tokens.empty() || !variable_tokens.empty() || !policy_tokens.empty();

  cn::fakes::FakeNomad fake(cfg);
  if (!scenario_file.empty()) {
    std::ifstream in(scenario_file);
    auto doc = nlohmann::json::parse(in, nullptr, false);
    if (!in || doc.is_discarded()) {
      std::cerr << "fake-nomad: cannot read scenario " << scenario_file << "\n";
      return 2;
    }
    if (auto st = fake.load_scenario(doc); !st) {
      std::cerr << "fake-nomad: scenario: " << st.error().message << "\n";
      return 2;
    }
  }
  // A client hanging up mid-stream must not kill the fake with SIGPIPE.
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGPIPE, SIG_IGN);
  if (auto st = fake.start(); !st) {
    std::cerr << st.error().message << "\n";
    return 1;
  }
  if (!port_file.empty()) {
    // Write then rename, so a reader never sees a half-written port.
    std::string tmp = port_file + ".tmp";
    {
      std::ofstream out(tmp);
      out << fake.port() << "\n";
    }
    std::rename(tmp.c_str(), port_file.c_str());
  }
  std::cout << "fake-nomad listening on 127.0.0.1:" << fake.port() << std::endl;
  while (!g_stop) {
    struct timespec ts {
      0, 100'000'000
    };
    nanosleep(&ts, nullptr);
  }
  fake.stop();
  return 0;
}
