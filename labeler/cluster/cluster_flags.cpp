#include "labeler/cluster/cluster_flags.h"

#include <map>

#include "common/util/go_duration.h"
#include "labeler/commands/cli_checks.h"

namespace cn::labeler::cluster {

void add_cluster_duty_options(CLI::App* cmd, ClusterDutyFlags& flags) {
  auto& s = flags.settings;
  const char* group = "Cluster duties (README, \"Cluster duties\")";
  cmd->add_flag("--cluster-duties", s.enabled,
                "Campaign for the cluster's one leader and, while leading, keep Cilium's etcd "
                "kvstore clean (needs --kvstore-config)")
      ->group(group);
  cmd->add_option("--kvstore-config", s.kvstore_config,
                  "The Cilium agent's etcd configuration file (YAML: endpoints, TLS files); with "
                  "it alone the labeler reports its node's identities in use")
      ->group(group);
  cmd->add_option("--node-name", s.node,
                  "This node's name in the leader key and the in-use report (default: the "
                  "hostname; in a Nomad job: ${node.unique.name})")
      ->group(group);
  cmd->add_option("--leader-lease-ttl", flags.leader_lease_ttl,
                  "Lease of the leader key: a dead leader is replaced within about this long")
      ->capture_default_str()
      ->check(cli::go_duration())
      ->group(group);
  cmd->add_option("--heartbeat-interval", flags.heartbeat_interval,
                  "How often the leader writes cilium/.heartbeat")
      ->capture_default_str()
      ->check(cli::go_duration())
      ->group(group);
  cmd->add_option("--identity-gc-interval", flags.identity_gc_interval,
                  "Time between identity GC passes; an identity unused on two passes in a row is "
                  "deleted")
      ->capture_default_str()
      ->check(cli::go_duration())
      ->group(group);
  cmd->add_option("--lock-gc-interval", flags.lock_gc_interval,
                  "Time between stale allocator lock passes")
      ->capture_default_str()
      ->check(cli::go_duration())
      ->group(group);
  cmd->add_option("--node-reap-grace", flags.node_reap_grace,
                  "How long a node stays down in (or gone from) Nomad before its Cilium node "
                  "entry is deleted")
      ->capture_default_str()
      ->check(cli::go_duration())
      ->group(group);
  cmd->add_option("--node-reap-max-per-pass", s.node_reap_max_per_pass,
                  "Most Cilium node entries deleted a node reaping pass; the rest wait for the "
                  "next pass")
      ->capture_default_str()
      ->check(CLI::Range(1, 100'000))
      ->group(group);
  cmd->add_option("--heartbeat", s.heartbeat, "Write the kvstore heartbeat")
      ->default_str(s.heartbeat ? "true" : "false")
      ->transform(cli::boolean_word())
      ->group(group);
  cmd->add_option("--identity-gc", s.identity_gc, "Delete unused security identities")
      ->default_str(s.identity_gc ? "true" : "false")
      ->transform(cli::boolean_word())
      ->group(group);
  cmd->add_option("--lock-gc", s.lock_gc, "Delete stale allocator locks")
      ->default_str(s.lock_gc ? "true" : "false")
      ->transform(cli::boolean_word())
      ->group(group);
  cmd->add_option("--ip-gc", s.ip_gc,
                  "Delete lease-less ipcache entries (cilium/state/ip/v1/default/<ip>) of IPs no "
                  "endpoint holds, on two passes every --identity-gc-interval")
      ->default_str(s.ip_gc ? "true" : "false")
      ->transform(cli::boolean_word())
      ->group(group);
  cmd->add_option("--node-reaping", s.node_reaping,
                  "Delete the Cilium node entries of nodes Nomad reports down or gone")
      ->default_str(s.node_reaping ? "true" : "false")
      ->transform(cli::boolean_word())
      ->group(group);
  cmd->add_option("--cluster-config", s.cluster_config,
                  "Write cilium/cluster-config/<cluster> for ClusterMesh peers (with a non-zero "
                  "--cluster-id; never over another writer's value)")
      ->default_str(s.cluster_config ? "true" : "false")
      ->transform(cli::boolean_word())
      ->group(group);
  cmd->add_option("--identity-gc-rate-limit", s.identity_gc_rate_limit,
                  "Most identities deleted a minute (0: no limit)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1'000'000))
      ->group(group);
  cmd->add_option("--cluster-id", s.cluster_id,
                  "The agent's --cluster-id: identity GC collects only this cluster's identity "
                  "range, and refuses to run without it; non-zero, the leader writes "
                  "cilium/cluster-config/<cluster> for ClusterMesh peers")
      ->check(CLI::Range(0, 511))
      ->group(group);
  cmd->add_option("--max-connected-clusters", s.max_connected_clusters,
                  "The agent's --max-connected-clusters, 255 or 511: with --cluster-id, fixes the "
                  "identity range; identity GC refuses to run without it")
      ->check(CLI::IsMember({255, 511}))
      ->group(group);
  const std::map<std::string, NodeNameRule> rules = {{"name", NodeNameRule::name},
                                                     {"short-name", NodeNameRule::short_name}};
  cmd->add_option("--cilium-node-name", s.node_name_rule,
                  "Cilium node name of a Nomad node: name (the Nomad node name) or short-name "
                  "(up to its first '.')")
      ->transform(cli::one_of(rules))
      ->default_str("name")
      ->group(group);
  cmd->add_flag("--dry-run", s.dry_run,
                "Log and count what the duties would delete or write, and change nothing")
      ->group(group);
}

Result<ClusterDutySettings> cluster_duty_settings(const ClusterDutyFlags& flags,
                                                  const std::string& cluster_name) {
  ClusterDutySettings s = flags.settings;
  s.cluster_name = cluster_name;
  using std::chrono::milliseconds;
  using std::chrono::seconds;
  for (auto [flag, text, min, out] :
       {std::tuple{"--leader-lease-ttl", &flags.leader_lease_ttl, milliseconds{seconds{2}},
                   &s.leader_lease_ttl},
        std::tuple{"--heartbeat-interval", &flags.heartbeat_interval, milliseconds{100},
                   &s.heartbeat_interval},
        std::tuple{"--identity-gc-interval", &flags.identity_gc_interval, milliseconds{100},
                   &s.identity_gc_interval},
        std::tuple{"--lock-gc-interval", &flags.lock_gc_interval, milliseconds{100},
                   &s.lock_gc_interval},
        std::tuple{"--node-reap-grace", &flags.node_reap_grace, milliseconds{0},
                   &s.node_reap_grace}}) {
    if (auto ok = cli::read_duration(flag, *text, min, *out); !ok)
      return std::unexpected(ok.error());
  }
  if (s.leader_lease_ttl % seconds{1} != milliseconds{0})
    return fail("--leader-lease-ttl " + flags.leader_lease_ttl + ": etcd leases are whole seconds");
  if (s.node.find('/') != std::string::npos)
    return fail("--node-name \"" + s.node + "\": must not contain '/'");
  if (s.enabled && s.kvstore_config.empty())
    return fail("--cluster-duties needs --kvstore-config (the agent's etcd configuration file)");
  if (cluster_name.empty() || cluster_name.find('/') != std::string::npos)
    return fail("--cluster-name \"" + cluster_name + "\": must be a non-empty name without '/'");
  return s;
}

}  // namespace cn::labeler::cluster
