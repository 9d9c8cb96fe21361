// cilium-nomad-labeler: thin CLI over the labeler library.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "common/cilium/client/curl_cilium_client.h"
#include "common/etcd/curl_etcd_client.h"
#include "common/etcd/etcd_config.h"
#include "common/labels/label_policy.h"
#include "common/nomad/client/curl_nomad_client.h"
#include "common/util/go_duration.h"
#include "labeler/cluster/cluster_duties.h"
#include "labeler/cluster/cluster_flags.h"
#include "labeler/commands/cli_checks.h"
#include "labeler/commands/cli_errors.h"
#include "labeler/commands/cluster_status_command.h"
#include "labeler/commands/explain/explain.h"
#include "labeler/commands/policy_status_command.h"
#include "labeler/commands/policy_validate_command.h"
#include "labeler/commands/services_command.h"
#include "labeler/commands/state_command.h"
#include "labeler/daemon/labeler_daemon.h"
#include "labeler/daemon/logging.h"
#include "labeler/daemon/node_lock.h"
#include "labeler/daemon/signal_watcher.h"
#include "labeler/policy/policy_audit.h"
#include "labeler/policy/policy_status.h"
#include "labeler/serve/readiness.h"
#include "labeler/serve/status_server.h"
#include "labeler/services/services_flags.h"
#include "labeler/services/services_status.h"

namespace {

using namespace cn;
namespace cli = cn::labeler::cli;

// How `run` and `explain` reach the agent and Nomad.
struct ConnectionFlags {
  std::string cilium_socket;
  std::string nomad_addr;
};

// What labels `run` derives; `explain` takes the same flags so that it derives the same ones.
struct LabelFlags {
  std::string meta_labels;
  bool k8s_compat_labels = true;
  std::string cluster_name = "default";
};

void add_connection_options(CLI::App* cmd, ConnectionFlags& flags) {
  cmd->add_option("--cilium-socket", flags.cilium_socket,
                  "Cilium agent API socket (env CILIUM_SOCK; default /var/run/cilium/cilium.sock)");
  cmd->add_option("--nomad-addr", flags.nomad_addr,
                  "Nomad address: http://, https:// or unix:// (env NOMAD_ADDR; default "
                  "http://127.0.0.1:4646)")
      ->check(CLI::Validator(
          [](const std::string& address) -> std::string {
            if (address.empty()) return {};  // the environment's, or the default
            auto target = nomad::nomad_target(address);
            return target ? std::string() : address + ": " + target.error().message;
          },
          "ADDRESS"));
}

void add_label_options(CLI::App* cmd, LabelFlags& flags) {
  cmd->add_option("--meta-labels", flags.meta_labels,
                  "Comma-separated job/group meta keys that become labels (one list: given twice, "
                  "the later list replaces the earlier one)")
      ->check(cli::meta_label_keys());
  cmd->add_option("--k8s-compat-labels", flags.k8s_compat_labels,
                  "Also label endpoints k8s:io.kubernetes.pod.namespace=<namespace> and "
                  "k8s:io.cilium.k8s.policy.cluster=<cluster>, which policies from the policy "
                  "directory need to select them as peers")
      ->default_str(flags.k8s_compat_labels ? "true" : "false")
      ->transform(cli::boolean_word());
  cmd->add_option("--cluster-name", flags.cluster_name,
                  "The Cilium agent's --cluster-name, used when its /v1/healthz does not tell it")
      ->capture_default_str();
}

Result<labels::LabelPolicy> label_policy_of(const LabelFlags& flags) {
  auto policy = labels::parse_label_policy(flags.meta_labels);
  if (!policy) return std::unexpected(policy.error());
  policy->k8s_compat = flags.k8s_compat_labels;
  policy->cluster_name = flags.cluster_name;
  return policy;
}

// --agent-option NAME=true|false, repeatable, the later of two for one NAME wins.
cilium::ReportedAgentOptions agent_option_overrides(const std::vector<std::string>& assignments) {
  cilium::ReportedAgentOptions out{};
  for (const auto& a : assignments) {
    // The flag's validator already refused anything this would not parse.
    if (auto parsed = cilium::parse_agent_option_assignment(a))
      out[static_cast<std::size_t>(parsed->first)] = parsed->second;
  }
  return out;
}

void add_agent_option_flag(CLI::App* cmd, std::vector<std::string>& into, const char* what) {
  cmd->add_option("--agent-option", into, what)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(cli::agent_option_assignment());
}

struct RunFlags {
  std::vector<std::string> agent_options;
  ConnectionFlags connection;
  LabelFlags labels;
  std::string log_level = "info";
  std::string log_format = "text";
  long long resync_seconds = 300;
  long long gc_grace_seconds = 600;
  long long unhealthy_after_seconds = 60;
  std::string lock_wait = "30s";
  labeler::cluster::ClusterDutyFlags cluster;
  labeler::ServicesFlags services;
};

const char* env_or_null(const char* name) {
  // getenv races only with a setenv, and nothing in the labeler changes its environment.
  const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe)
  return v && *v ? v : nullptr;
}

struct NomadConnection {
  nomad::NomadClientConfig config;
  std::unique_ptr<nomad::CurlNomadClient> client;
};

// The Nomad client of `run` and `explain`: the environment's settings, the address from
// --nomad-addr, else NOMAD_ADDR, else NOMAD_UNIX_ADDR. A bad address names where it came from, so
// that the operator fixes the right one.
Result<NomadConnection> connect_nomad(const std::string& flag_addr) {
  auto config = nomad::NomadClientConfig::from_env(env_or_null);
  if (!config) return std::unexpected(config.error());
  if (!flag_addr.empty()) config->address = flag_addr;
  auto client = nomad::CurlNomadClient::create(*config);
  if (!client) {
    const char* address_from = !flag_addr.empty()          ? "--nomad-addr"
                               : env_or_null("NOMAD_ADDR") ? "NOMAD_ADDR"
                                                           : "NOMAD_UNIX_ADDR";
    return fail(client.error().kind,
                std::string(address_from) + " " + config->address + ": " + client.error().message);
  }
  return NomadConnection{std::move(*config), std::move(*client)};
}

// The node's name as the kernel knows it: what Nomad and the Cilium agent name the node by
// default, so the leader key and the in-use report name the node as operators see it.
std::string local_hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "unknown";
  return name;
}

// The etcd client of `run` and `cluster status`, from the agent's configuration file.
Result<std::unique_ptr<etcd::CurlEtcdClient>> connect_etcd(const std::string& config_file) {
  auto config = etcd::load_etcd_config(config_file);
  if (!config) return std::unexpected(config.error());
  // The clock every other component of the labeler gets: a deadline means the same in all.
  etcd::EtcdClientOptions options;
  options.clock = &system_clock();
  auto client = etcd::CurlEtcdClient::create(std::move(*config), std::move(options));
  if (!client)
    return fail(client.error().kind,
                "--kvstore-config " + config_file + ": " + client.error().message);
  return client;
}

// A Nomad or etcd client that cannot be made: a malformed address or setting is the command
// line's fault (2), a file that cannot be read is the node's (1).
int client_error(std::string_view command, const Error& error) {
  return error.kind == ErrorKind::invalid ? cli::usage_error(std::cerr, command, error.message)
                                          : cli::runtime_failure(std::cerr, command, error.message);
}

int run(labeler::DaemonConfig config, const RunFlags& flags) {
  // Signals are blocked since main began (the clients may start threads; all inherit the mask).
  // Every check of the flags comes before the first log line, so that a mistake is one usage
  // line on stderr, as for any other subcommand.
  auto policy = label_policy_of(flags.labels);
  if (!policy)
    return cli::usage_error(std::cerr, "run", "--meta-labels: " + policy.error().message);
  config.policy = *policy;
  config.policies.resync_interval = std::chrono::seconds{flags.resync_seconds};
  config.policies.status_file = labeler::policy::policy_status_path(config.state_file);
  config.policies.audit_file = labeler::policy::policy_audit_path(config.state_file);
  config.policies.agent_option_overrides = agent_option_overrides(flags.agent_options);
  config.resync_interval = std::chrono::seconds{flags.resync_seconds};
  config.gc_grace = std::chrono::seconds{flags.gc_grace_seconds};
  auto services = labeler::services_settings(flags.services);
  if (!services) return cli::usage_error(std::cerr, "run", services.error().message);
  config.services = *services;
  config.services.resync_interval = std::chrono::seconds{flags.resync_seconds};
  config.unhealthy_after = std::chrono::seconds{flags.unhealthy_after_seconds};
  auto cluster_settings =
      labeler::cluster::cluster_duty_settings(flags.cluster, flags.labels.cluster_name);
  if (!cluster_settings)
    return cli::usage_error(std::cerr, "run", cluster_settings.error().message);
  if (cluster_settings->node.empty()) cluster_settings->node = local_hostname();
  config.node_name = cluster_settings->node;
  const auto lock_wait = parse_go_duration(flags.lock_wait);
  if (!lock_wait)
    return cli::usage_error(
        std::cerr, "run",
        "--lock-wait " + flags.lock_wait + ": not a duration such as 500ms, 2s, 15m");
  if (auto ok = labeler::setup_logging(flags.log_level, flags.log_format); !ok)
    return cli::usage_error(std::cerr, "run", ok.error().message);

  // Declared first, destroyed last: every return below, early ones included, wakes and joins
  // the signal thread, so a daemon that cannot start exits instead of waiting for a signal.
  std::stop_source stop;
  labeler::SignalWatcher signals(stop, spdlog::default_logger());

  // Before any client exists or anything is read: a second labeler must not touch the node.
  labeler::NodeLock node_lock(labeler::NodeLock::path_for(config.state_file));
  auto taken = node_lock.try_lock();
  if (!taken) {
    spdlog::error("cannot start: error=\"{}\"", taken.error().message);
    return 1;
  }
  if (!*taken) {
    // A restart overlaps the old process's exit for a moment; a Nomad rolling update does not.
    spdlog::warn("another labeler holds this node, waiting: holder_pid={} file={} lock_wait={}",
                 node_lock.holder_pid(), node_lock.path(), format_go_duration(*lock_wait));
    auto outcome = node_lock.wait(system_clock(),
                                  Deadline{system_clock().now() + *lock_wait, stop.get_token()});
    if (!outcome) {
      spdlog::error("cannot start: error=\"{}\"", outcome.error().message);
      return 1;
    }
    if (*outcome == labeler::NodeLock::Outcome::stopped) {
      spdlog::info("stopped while waiting for the node lock");
      return 0;
    }
    if (*outcome == labeler::NodeLock::Outcome::held) {
      spdlog::error("another labeler holds this node: holder_pid={} file={} lock_wait={}",
                    node_lock.holder_pid(), node_lock.path(), format_go_duration(*lock_wait));
      return cli::kExitNodeHeld;
    }
    spdlog::info("node lock taken: file={}", node_lock.path());
  }

  std::unique_ptr<etcd::CurlEtcdClient> etcd_client;
  if (!cluster_settings->kvstore_config.empty()) {
    auto client = connect_etcd(cluster_settings->kvstore_config);
    if (!client) return client_error("run", client.error());
    etcd_client = std::move(*client);
  }

  auto nomad = connect_nomad(flags.connection.nomad_addr);
  if (!nomad) return client_error("run", nomad.error());
  auto& nomad_client = nomad->client;
  cilium::CurlCiliumClient cilium_client(
      cilium::CiliumClientConfig::resolve(flags.connection.cilium_socket, env_or_null));
  spdlog::info(
      "starting cilium-nomad-labeler v{}: nomad={{{}}} cilium={{{}}} meta_labels={} "
      "k8s_compat_labels={} cluster={} policy_dir={}",
      CN_VERSION, nomad->config.redacted(), cilium_client.config().describe(),
      flags.labels.meta_labels.empty() ? "-" : flags.labels.meta_labels, config.policy.k8s_compat,
      config.policy.cluster_name, config.policies.dir.empty() ? "-" : config.policies.dir);

  labeler::LabelerDaemon daemon(
      config, *nomad_client, cilium_client, system_clock(), spdlog::default_logger(),
      labeler::ServicesApis{.of_nomad = nomad_client.get(), .of_agent = &cilium_client});
  std::unique_ptr<labeler::cluster::ClusterDuties> cluster;
  if (etcd_client) {
    spdlog::info(
        "cluster: etcd={} duties={} node={} dry_run={} identity_gc_interval={} "
        "leader_lease_ttl={}",
        etcd_client->describe(), cluster_settings->enabled, cluster_settings->node,
        cluster_settings->dry_run, format_go_duration(cluster_settings->identity_gc_interval),
        format_go_duration(cluster_settings->leader_lease_ttl));
    // Node reaping's markers record the region its node list comes from.
    cluster_settings->nomad_region = nomad->config.region;
    cluster = std::make_unique<labeler::cluster::ClusterDuties>(
        *cluster_settings, *etcd_client, cilium_client, *nomad_client, system_clock(),
        daemon.metrics(), spdlog::default_logger(), [&daemon] { return daemon.node_id(); });
  }

  std::unique_ptr<labeler::StatusServer> status;
  if (!config.metrics_addr.empty()) {
    status = std::make_unique<labeler::StatusServer>(daemon.metrics(), [&daemon] {
      auto verdict = labeler::daemon_readiness(daemon);
      return std::pair<bool, std::string>{verdict.ready, verdict.reason};
    });
    if (cluster) status->set_detail([&cluster] { return cluster->health_detail(); });
    if (auto ok = status->start(config.metrics_addr); !ok) {
      spdlog::error("cannot start: error=\"{}\"", ok.error().message);
      return 1;
    }
  }
  if (auto ok = daemon.start(stop.get_token()); !ok) {
    spdlog::error("cannot start: error=\"{}\"", ok.error().message);
    return 1;
  }
  if (cluster) cluster->start(stop.get_token());
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  cv.wait(lock, stop.get_token(), [] { return false; });
  daemon.stop();
  if (cluster) cluster->join();
  if (status) status->stop();
  spdlog::info("stopped");
  return 0;
}

struct ExplainFlags {
  std::string query;
  bool as_json = false;
  ConnectionFlags connection;
  LabelFlags labels;
};

int explain(labeler::explain::ExplainSettings settings, const ExplainFlags& flags) {
  auto policy = label_policy_of(flags.labels);
  if (!policy)
    return cli::usage_error(std::cerr, "explain", "--meta-labels: " + policy.error().message);
  settings.label_policy = *policy;
  settings.fallback_cluster_name = flags.labels.cluster_name;
  auto nomad = connect_nomad(flags.connection.nomad_addr);
  if (!nomad) return client_error("explain", nomad.error());
  cilium::CurlCiliumClient cilium_client(
      cilium::CiliumClientConfig::resolve(flags.connection.cilium_socket, env_or_null));
  return labeler::explain::explain(flags.query, flags.as_json, settings, *nomad->client,
                                   cilium_client, system_clock(), std::cout, std::cerr);
}

}  // namespace

// An exception that escapes main ends the process through std::terminate, whose abort message
// names it; the supervisor (systemd, Nomad) restarts the labeler, as after any crash.
int main(int argc, char** argv) {  // NOLINT(bugprone-exception-escape)
  // First of all: a supervisor's SIGTERM that comes while `run` is still parsing its flags is a
  // clean stop (exit 0), not death by signal. One-shot subcommands unblock them after parsing.
  labeler::SignalWatcher::block_signals();
  CLI::App app{"cilium-nomad-labeler: gives Nomad allocations their Cilium identity"};
  // A flag given twice: the later one wins, so that arguments appended to a unit's or a job's
  // own (CN_LABELER_ARGS) override them. Subcommands copy this when they are added.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.footer(
      "A flag given twice: the later one wins (a list such as --meta-labels is replaced "
      "whole). Exit codes: 0 done (or --help), 1 runtime failure, 2 usage error, 3 "
      "another labeler holds this node (run).");
  app.require_subcommand(1);
  // `--version` as well as `version`: what help2man and habit expect.
  app.set_version_flag("--version", std::string("cilium-nomad-labeler v") + CN_VERSION);

  labeler::DaemonConfig config;
  RunFlags flags;
  auto* run_cmd = app.add_subcommand("run", "Run the node-local labeler daemon");
  // Every variable the clients read (common/nomad/client, common/cilium/client); a test checks
  // that none is missing here.
  run_cmd->footer(
      "Environment (a flag wins over its variable):\n"
      "  NOMAD_ADDR             Nomad address: http://, https:// or unix://\n"
      "  NOMAD_UNIX_ADDR        Nomad's task API socket (unix://...), used when NOMAD_ADDR is "
      "unset\n"
      "  NOMAD_TOKEN            ACL token; its policy: conf-examples/acl-policy.hcl\n"
      "  NOMAD_REGION           region sent with every Nomad request\n"
      "  NOMAD_CACERT           CA file that signed Nomad's certificate\n"
      "  NOMAD_CAPATH           directory of CA files\n"
      "  NOMAD_CLIENT_CERT      client certificate for Nomad's mutual TLS\n"
      "  NOMAD_CLIENT_KEY       its key\n"
      "  NOMAD_TLS_SERVER_NAME  name expected in Nomad's certificate\n"
      "  NOMAD_SKIP_VERIFY      true: do not verify Nomad's certificate (tests only)\n"
      "  CILIUM_SOCK            Cilium agent API socket (--cilium-socket)");
  add_connection_options(run_cmd, flags.connection);
  run_cmd->add_option("--node-id", config.node_id,
                      "This node's Nomad node ID (default: discovered, see --nomad-data-dir)");
  run_cmd
      ->add_option("--nomad-data-dir", config.nomad_data_dir,
                   "The Nomad client's data_dir: without --node-id, the ID is read from "
                   "<dir>/client/client-id, else found in GET /v1/nodes by --node-name, "
                   "else asked of /v1/agent/self (empty: skip the file)")
      ->capture_default_str();
  run_cmd->add_option("--socket", config.socket_path, "Notification socket for the CNI plugin")
      ->capture_default_str();
  run_cmd->add_option("--state-file", config.state_file, "Node state file shared with the plugin")
      ->capture_default_str();
  add_label_options(run_cmd, flags.labels);
  run_cmd->add_option("--log-level", flags.log_level, "trace, debug, info, warn, error")
      ->capture_default_str();
  run_cmd->add_option("--log-format", flags.log_format, "text or json")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "json"}));
  run_cmd->add_option("--workers", config.workers, "Concurrent label workers")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  run_cmd
      ->add_option("--resync-interval", flags.resync_seconds,
                   "Seconds between full reconciles (0: never)")
      ->capture_default_str()
      ->check(CLI::Range(0LL, 86400LL));
  // One table from the flag's words to the mode: CLI11 validates and converts in one step.
  const std::map<std::string, labeler::WatchMode> watch_modes = {
      {"node", labeler::WatchMode::kNode},
      {"events", labeler::WatchMode::kEvents},
      {"none", labeler::WatchMode::kNone}};
  run_cmd
      ->add_option("--watch", config.watch, "node (blocking query), events (event stream) or none")
      ->transform(cli::one_of(watch_modes))
      ->default_str("node");
  run_cmd
      ->add_option("--metrics-addr", config.metrics_addr,
                   "HOST:PORT for /metrics and /healthz (empty: off)")
      ->capture_default_str()
      ->check(cli::listen_address());
  run_cmd
      ->add_option("--unhealthy-after", flags.unhealthy_after_seconds,
                   "Seconds Cilium or Nomad may stay unreachable before /healthz reports not ready")
      ->capture_default_str()
      ->check(CLI::Range(1LL, 86400LL));
  run_cmd
      ->add_option("--lock-wait", flags.lock_wait,
                   "How long to wait while another labeler holds this node's state file, then "
                   "exit 3 (Go duration; 0s: do not wait)")
      ->capture_default_str()
      ->check(cli::go_duration());
  run_cmd
      ->add_option("--cni-args-first", config.cni_args_first,
                   "Without --meta-labels, label a new allocation from its CNI_ARGS at once when "
                   "the watch has not seen it yet, and check against Nomad afterwards")
      ->default_str(config.cni_args_first ? "true" : "false")
      ->transform(cli::boolean_word());
  run_cmd->add_flag("--gc-endpoints", config.gc_endpoints,
                    "Delete orphaned endpoints after the grace period");
  run_cmd
      ->add_option("--gc-grace", flags.gc_grace_seconds,
                   "Seconds an endpoint stays orphaned before deletion")
      ->capture_default_str();

  run_cmd->add_option("--policy-dir", config.policies.dir,
                      "The agent's --static-cnp-path: write the policies kept in Nomad Variables "
                      "there (empty: off)");
  run_cmd
      ->add_option("--policy-namespace", config.policies.nomad_namespace,
                   "The operator's Nomad namespace: its policy variables may hold any policy; "
                   "every other namespace's only CiliumNetworkPolicies for itself")
      ->capture_default_str();
  run_cmd
      ->add_option("--policy-prefix", config.policies.prefix,
                   "Variable path prefix: one variable under it is one policy")
      ->capture_default_str();
  run_cmd
      ->add_option("--policy-max-count", config.policies.max_policies,
                   "Most policy files the labeler keeps in --policy-dir")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  add_agent_option_flag(run_cmd, flags.agent_options,
                        "NAME=true|false: an agent option as the policies see it, over what the "
                        "agent's GET /v1/config says (repeatable; docs/policies.md)");

  labeler::add_services_options(run_cmd, flags.services);
  labeler::cluster::add_cluster_duty_options(run_cmd, flags.cluster);

  std::string state_file = config.state_file;
  bool as_json = false;
  auto* state_cmd = app.add_subcommand(
      "state", "Show the node state file (read-only: a missing or corrupt file exits 1)");
  state_cmd->add_option("--state-file", state_file, "State file to read")->capture_default_str();
  state_cmd->add_flag("--json", as_json, "JSON keyed by allocation ID");

  auto* policy_cmd = app.add_subcommand("policy", "Policies distributed from Nomad Variables");
  policy_cmd->require_subcommand(1);
  std::string policy_state_file = config.state_file;
  bool policy_json = false;
  auto* policy_status_cmd =
      policy_cmd->add_subcommand("status", "Each policy's variable, file and state");
  policy_status_cmd
      ->add_option("--state-file", policy_state_file,
                   "The daemon's state file (the policy status file is beside it)")
      ->capture_default_str();
  bool policy_wide = false;
  policy_status_cmd->add_flag("--json", policy_json, "The status file as JSON");
  policy_status_cmd->add_flag("--wide", policy_wide,
                              "Every cell whole (the default table fits 100 columns)");
  std::vector<std::string> policy_files;
  auto* validate_cmd = policy_cmd->add_subcommand(
      "validate", "Check policy files (YAML or JSON) offline, as the distributor would");
  // The one list option: each file is checked, so repeating names adds files.
  validate_cmd->add_option("files", policy_files, "Policy files")
      ->required()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  labeler::ValidateScope validate_scope;
  validate_cmd
      ->add_option("--nomad-namespace", validate_scope.variable_namespace,
                   "The Nomad namespace of the variable the files would be in (docs/policies.md, "
                   "\"Delegation\")")
      ->capture_default_str();
  validate_cmd
      ->add_option("--policy-namespace", validate_scope.operator_namespace,
                   "The daemon's --policy-namespace: the operator's namespace, which may write "
                   "every policy")
      ->capture_default_str();
  std::vector<std::string> validate_agent_options;
  add_agent_option_flag(validate_cmd, validate_agent_options,
                        "NAME=true|false: check against this agent option instead of its "
                        "upstream default (repeatable)");

  std::string services_state_file = config.state_file;
  bool services_json = false;
  bool services_wide = false;
  auto* services_cmd = app.add_subcommand(
      "services",
      "Each Nomad service's VIP, ports, address modes and backends as the last pass saw them, "
      "and why a service or backend is left out (read-only)");
  services_cmd
      ->add_option("--state-file", services_state_file,
                   "The daemon's state file (the services status file is beside it)")
      ->capture_default_str();
  services_cmd->add_flag("--json", services_json, "The status file as JSON");
  services_cmd->add_flag("--wide", services_wide,
                         "Every backend and every cell whole (the default table fits 100 columns)");

  labeler::explain::ExplainSettings explain_settings;
  explain_settings.state_file = config.state_file;
  ExplainFlags explain_flags;
  auto* explain_cmd = app.add_subcommand(
      "explain",
      "Why an allocation has (or lacks) its labels: state entry, Cilium endpoint, Nomad's view, "
      "derived labels, policies and a verdict. Read-only; works with the daemon stopped. Give it "
      "the label flags `run` has, so that it derives the same labels");
  explain_cmd->add_option("alloc", explain_flags.query, "Allocation ID or unambiguous prefix")
      ->required();
  explain_cmd->add_flag("--json", explain_flags.as_json, "The same facts as one JSON object");
  add_connection_options(explain_cmd, explain_flags.connection);
  explain_cmd->add_option("--state-file", explain_settings.state_file, "Node state file")
      ->capture_default_str();
  explain_settings.socket_path = config.socket_path;
  explain_cmd
      ->add_option("--socket", explain_settings.socket_path,
                   "The daemon's notification socket: its absence means no labeler runs here")
      ->capture_default_str();
  explain_cmd->add_option("--policy-dir", explain_settings.policy_dir,
                          "The daemon's --policy-dir, to list the policies selecting it");
  add_label_options(explain_cmd, explain_flags.labels);

  auto* cluster_cmd = app.add_subcommand("cluster", "The cluster duties' view of etcd");
  cluster_cmd->require_subcommand(1);
  std::string cluster_kvstore_config;
  std::string cluster_name = "default";
  bool cluster_json = false;
  auto* cluster_status_cmd = cluster_cmd->add_subcommand(
      "status",
      "The leader, the nodes reporting identities in use, and the kvstore's key counts "
      "(read-only)");
  cluster_status_cmd
      ->add_option("--kvstore-config", cluster_kvstore_config,
                   "The Cilium agent's etcd configuration file")
      ->required();
  cluster_status_cmd->add_option("--cluster-name", cluster_name, "The labelers' --cluster-name")
      ->capture_default_str();
  cluster_status_cmd->add_flag("--json", cluster_json, "One JSON object");
  std::optional<std::uint32_t> status_cluster_id;
  std::optional<std::uint32_t> status_max_connected;
  cluster_status_cmd
      ->add_option("--cluster-id", status_cluster_id,
                   "The agent's --cluster-id: show the headroom of this cluster's identity range")
      ->check(CLI::Range(0, 511));
  cluster_status_cmd
      ->add_option("--max-connected-clusters", status_max_connected,
                   "The agent's --max-connected-clusters (255 or 511), with --cluster-id")
      ->check(CLI::IsMember({255, 511}));

  auto* version_cmd = app.add_subcommand("version", "Print the version");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli::parse_error(app, e, std::cout, std::cerr);
  }
  if (!*run_cmd) {
    labeler::SignalWatcher::unblock_signals();
    // A one-shot command ends with one line saying what failed; the clients' own warnings on the
    // way there would say it again, in another format.
    if (auto ok = labeler::setup_logging("error", "text"); !ok)
      return cli::runtime_failure(std::cerr, cli::command_path(app), ok.error().message);
  }

  if (*validate_cmd) {
    return labeler::validate_policy_files(
        policy_files,
        cilium::resolve_agent_options({}, agent_option_overrides(validate_agent_options)),
        validate_scope, std::cout, std::cerr);
  }

  if (*explain_cmd) return explain(explain_settings, explain_flags);

  if (*cluster_status_cmd) {
    auto client = connect_etcd(cluster_kvstore_config);
    if (!client) return client_error("cluster status", client.error());
    const auto range = labeler::cluster::resolve_identity_range(
        {status_cluster_id, status_max_connected, std::nullopt, std::nullopt});
    return labeler::cluster::render_cluster_status(**client, cluster_name, range, cluster_json,
                                                   system_clock(), std::cout, std::cerr);
  }

  if (*version_cmd) {
    std::cout << "cilium-nomad-labeler v" << CN_VERSION << "\n";
    return 0;
  }
  if (*state_cmd) {
    auto text = labeler::render_state(state_file, as_json);
    if (!text) return cli::runtime_failure(std::cerr, "state", text.error().message);
    std::cout << *text;
    return 0;
  }
  if (*policy_status_cmd) {
    const std::string file = labeler::policy::policy_status_path(policy_state_file);
    auto text =
        labeler::policy::render_policy_status(file,
                                              policy_json   ? labeler::policy::StatusView::json
                                              : policy_wide ? labeler::policy::StatusView::wide
                                                            : labeler::policy::StatusView::table,
                                              system_clock());
    if (!text)
      return cli::runtime_failure(std::cerr, "policy status",
                                  "cannot read " + file + ": " + text.error().message);
    std::cout << *text;
    return 0;
  }
  if (*services_cmd) {
    auto text = labeler::render_services(labeler::services_status_path(services_state_file),
                                         services_json   ? labeler::ServicesView::json
                                         : services_wide ? labeler::ServicesView::wide
                                                         : labeler::ServicesView::table,
                                         system_clock());
    if (!text) return cli::runtime_failure(std::cerr, "services", text.error().message);
    std::cout << *text;
    return 0;
  }
  return run(config, flags);
}
