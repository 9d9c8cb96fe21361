#include "labeler/cluster/duty_adapters.h"

#include <utility>

#include <spdlog/spdlog.h>

#include "labeler/cluster/cluster_config.h"
#include "labeler/cluster/heartbeat.h"
#include "labeler/cluster/identity_gc.h"
#include "labeler/cluster/ip_gc.h"
#include "labeler/cluster/lock_gc.h"
#include "labeler/cluster/node_reaper.h"

namespace cn::labeler::cluster {

namespace {

// Nomad's node list and this node's name in it, as node reaping and the IP GC read them each
// pass; the `call` of a failure for the log.
struct DutyNomadView {
  std::vector<nomad::NodeStub> nodes;
  std::string local_name;  // empty when the list lacks this node (the duties then doubt)
};
struct DutyNomadFailure {
  std::string_view call;
  Error error;
};
std::expected<DutyNomadView, DutyNomadFailure> read_duty_nomad_view(
    const DutyContext& ctx, std::chrono::milliseconds call_timeout, const std::stop_token& stop) {
  Deadline deadline{ctx.clock.now() + call_timeout, stop};
  const std::string node_id = ctx.node_id ? ctx.node_id() : std::string();
  if (node_id.empty()) {
    return std::unexpected(
        DutyNomadFailure{"node_id", Error{ErrorKind::invalid, "this node's ID is not known yet"}});
  }
  auto nodes = ctx.nomad.nodes(deadline);
  if (!nodes) return std::unexpected(DutyNomadFailure{"nodes", nodes.error()});
  DutyNomadView view{std::move(*nodes), {}};
  for (const auto& n : view.nodes)
    if (n.id == node_id) view.local_name = n.name;
  return view;
}

PassOutcome duty_nomad_read_failed(const DutyContext& ctx, std::string_view duty,
                                   const DutyNomadFailure& failure) {
  ctx.log->warn("cluster duty: Nomad not read: duty={} call={} error=\"{}\"", duty, failure.call,
                failure.error.message);
  PassOutcome out;
  out.end = PassEnd::read_failed;
  return out;
}

// What every deleting duty's report says to the runner; each adds its own skips.
PassOutcome duty_outcome(const DutyReport& r) {
  PassOutcome out;
  out.end = r.end;
  out.deleted = r.deleted + r.would_delete;
  out.changed = r.refused;
  out.over_cap = r.over_cap;
  return out;
}

class HeartbeatDuty final : public Duty {
 public:
  HeartbeatDuty(const ClusterDutySettings& settings, const DutyContext& ctx)
      : interval_(settings.heartbeat_interval),
        writer_(ctx.etcd, ctx.clock, HeartbeatOptions{settings.call_timeout, settings.dry_run},
                ctx.log) {}
  DutyName name() const override { return DutyName::heartbeat; }
  std::chrono::milliseconds interval() const override { return interval_; }
  PassOutcome run_pass(const LeaderFence& fence, std::stop_token stop) override {
    // On the leader lease: a dead leader's heartbeat goes with it (agents ignore deletes) and
    // the next leader's first pass writes a fresh one.
    HeartbeatReport r = writer_.write(fence, fence.lease, stop);
    PassOutcome out;
    out.end = r.end;
    return out;
  }

 private:
  std::chrono::milliseconds interval_;
  HeartbeatWriter writer_;
};

class IdentityGcDuty final : public Duty {
 public:
  IdentityGcDuty(const ClusterDutySettings& settings, const DutyContext& ctx)
      : interval_(settings.identity_gc_interval),
        metrics_(ctx.metrics),
        gc_(ctx.etcd, ctx.clock, options(settings), ctx.log) {}
  DutyName name() const override { return DutyName::identity_gc; }
  std::chrono::milliseconds interval() const override { return interval_; }
  PassOutcome run_pass(const LeaderFence& fence, std::stop_token stop) override {
    IdentityGcReport r = gc_.run_pass(fence, stop);
    metrics_.identity_range_size().Set(static_cast<double>(r.range_size));
    if (r.in_use_reports_read)
      metrics_.in_use_reports_unreadable().Set(static_cast<double>(r.unreadable_in_use_reports));
    if (r.counted) {
      metrics_.identities().Set(static_cast<double>(r.in_range));
      metrics_.identity_users("min").Set(static_cast<double>(r.users_min));
      metrics_.identity_users("max").Set(static_cast<double>(r.users_max));
      metrics_.identity_users("avg").Set(r.in_range > 0 ? static_cast<double>(r.users_total) /
                                                              static_cast<double>(r.in_range)
                                                        : 0.0);
      metrics_.identities_first_seen().Increment(static_cast<double>(r.first_seen));
      metrics_.identity_duplicates_unused().Set(static_cast<double>(r.duplicate_candidates));
    }
    PassOutcome out = duty_outcome(r);
    out.unknown_shape = r.skipped_unknown_shape + r.value_keys_unknown_shape;
    return out;
  }

 private:
  static IdentityGcOptions options(const ClusterDutySettings& settings) {
    IdentityGcOptions o;
    o.cluster_name = settings.cluster_name;
    o.deletions_per_minute = settings.identity_gc_rate_limit;
    o.dry_run = settings.dry_run;
    o.range = resolve_identity_range(
        {settings.cluster_id, settings.max_connected_clusters, std::nullopt, std::nullopt});
    return o;
  }
  std::chrono::milliseconds interval_;
  Metrics& metrics_;
  IdentityGc gc_;
};

class LockGcDuty final : public Duty {
 public:
  LockGcDuty(const ClusterDutySettings& settings, const DutyContext& ctx)
      : interval_(settings.lock_gc_interval),
        gc_(ctx.etcd, ctx.clock, LockGcOptions{ScanSettings{}, settings.dry_run}, ctx.log) {}
  DutyName name() const override { return DutyName::lock_gc; }
  std::chrono::milliseconds interval() const override { return interval_; }
  PassOutcome run_pass(const LeaderFence& fence, std::stop_token stop) override {
    return duty_outcome(gc_.run_pass(fence, stop));
  }

 private:
  std::chrono::milliseconds interval_;
  LockGc gc_;
};

// Node reaping and the IP GC read Nomad's node list each pass, and start over (a new object)
// when this node's name in it changes: the duty doubts a list without this node, and a new name
// (or none) starts the grace clocks or the two passes again. `Rules` says which duty and how it
// is configured.
template <class Rules>
class NomadListedDuty final : public Duty {
 public:
  NomadListedDuty(ClusterDutySettings settings, DutyContext ctx)
      : settings_(std::move(settings)), ctx_(std::move(ctx)) {}
  DutyName name() const override { return Rules::kName; }
  std::chrono::milliseconds interval() const override { return Rules::interval(settings_); }
  PassOutcome run_pass(const LeaderFence& fence, std::stop_token stop) override {
    auto view = read_duty_nomad_view(ctx_, settings_.call_timeout, stop);
    if (!view) return duty_nomad_read_failed(ctx_, to_string(Rules::kName), view.error());
    if (!duty_ || view->local_name != local_name_) {
      duty_ = std::make_unique<typename Rules::Pass>(
          ctx_.etcd, ctx_.clock, Rules::options(settings_, view->local_name), ctx_.log);
      local_name_ = view->local_name;
    }
    return Rules::outcome(duty_->run_pass(view->nodes, fence, stop));
  }

 private:
  ClusterDutySettings settings_;
  DutyContext ctx_;
  std::unique_ptr<typename Rules::Pass> duty_;
  std::string local_name_;
};

struct NodeReapingRules {
  using Pass = NodeReaper;
  static constexpr DutyName kName = DutyName::node_reaping;
  // A fifth of the grace, between 1 s and 1 min: a node is reaped at most that long after its
  // grace ends, and Nomad is asked for its node list at most once a second.
  static std::chrono::milliseconds interval(const ClusterDutySettings& settings) {
    return std::clamp<std::chrono::milliseconds>(settings.node_reap_grace / 5,
                                                 std::chrono::seconds{1}, std::chrono::minutes{1});
  }
  static NodeReaperOptions options(const ClusterDutySettings& settings,
                                   const std::string& local_name) {
    NodeReaperOptions o;
    o.cluster_name = settings.cluster_name;
    o.local_node = local_name;
    o.name_rule = settings.node_name_rule;
    o.grace = settings.node_reap_grace;
    o.max_per_pass = settings.node_reap_max_per_pass;
    o.region = settings.nomad_region;
    o.dry_run = settings.dry_run;
    return o;
  }
  static PassOutcome outcome(const NodeReapReport& r) {
    PassOutcome out = duty_outcome(r);
    out.unknown_shape = r.skipped_unknown_shape;
    out.never_listed = r.never_listed;
    return out;
  }
};

struct IpGcRules {
  using Pass = IpGc;
  static constexpr DutyName kName = DutyName::ip_gc;
  // The identity GC's schedule: two passes apart, like it, and one paged scan each.
  static std::chrono::milliseconds interval(const ClusterDutySettings& settings) {
    return settings.identity_gc_interval;
  }
  static IpGcOptions options(const ClusterDutySettings& settings, const std::string& local_name) {
    IpGcOptions o;
    o.cluster_name = settings.cluster_name;
    o.local_node = local_name;
    o.region = settings.nomad_region;
    o.name_rule = settings.node_name_rule;
    o.deletions_per_minute = settings.identity_gc_rate_limit;
    o.dry_run = settings.dry_run;
    return o;
  }
  static PassOutcome outcome(const IpGcReport& r) {
    PassOutcome out = duty_outcome(r);
    out.unknown_shape = r.unknown_shape;
    out.never_listed = r.not_ours;
    return out;
  }
};

class ClusterConfigDuty final : public Duty {
 public:
  ClusterConfigDuty(const ClusterDutySettings& settings, const DutyContext& ctx)
      : writer_(ctx.etcd, ctx.clock, options(settings), ctx.log) {}
  DutyName name() const override { return DutyName::cluster_config; }
  // Upstream's schedule; a pass that failed is retried sooner by the runner.
  std::chrono::milliseconds interval() const override { return kClusterConfigInterval; }
  PassOutcome run_pass(const LeaderFence& fence, std::stop_token stop) override {
    ClusterConfigReport r = writer_.run_pass(fence, stop);
    PassOutcome out;
    out.end = r.end;
    out.not_ours = r.action == ClusterConfigAction::not_ours ? 1 : 0;
    out.changed = r.action == ClusterConfigAction::changed ? 1 : 0;
    return out;
  }

 private:
  static ClusterConfigOptions options(const ClusterDutySettings& settings) {
    ClusterConfigOptions o;
    o.cluster_name = settings.cluster_name;
    o.cluster_id = settings.cluster_id;
    o.max_connected_clusters = settings.max_connected_clusters;
    o.call_timeout = settings.call_timeout;
    o.dry_run = settings.dry_run;
    return o;
  }
  ClusterConfigWriter writer_;
};

}  // namespace

std::unique_ptr<Duty> make_heartbeat_duty(const ClusterDutySettings& settings,
                                          const DutyContext& ctx) {
  return std::make_unique<HeartbeatDuty>(settings, ctx);
}
std::unique_ptr<Duty> make_identity_gc_duty(const ClusterDutySettings& settings,
                                            const DutyContext& ctx) {
  return std::make_unique<IdentityGcDuty>(settings, ctx);
}
std::unique_ptr<Duty> make_lock_gc_duty(const ClusterDutySettings& settings,
                                        const DutyContext& ctx) {
  return std::make_unique<LockGcDuty>(settings, ctx);
}
std::unique_ptr<Duty> make_node_reaping_duty(const ClusterDutySettings& settings, DutyContext ctx) {
  return std::make_unique<NomadListedDuty<NodeReapingRules>>(settings, std::move(ctx));
}

std::unique_ptr<Duty> make_ip_gc_duty(const ClusterDutySettings& settings, DutyContext ctx) {
  return std::make_unique<NomadListedDuty<IpGcRules>>(settings, std::move(ctx));
}

std::unique_ptr<Duty> make_cluster_config_duty(const ClusterDutySettings& settings,
                                               const DutyContext& ctx) {
  return std::make_unique<ClusterConfigDuty>(settings, ctx);
}

}  // namespace cn::labeler::cluster
