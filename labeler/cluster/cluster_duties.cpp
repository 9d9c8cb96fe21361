#include "labeler/cluster/cluster_duties.h"

#include <algorithm>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "labeler/cluster/duty_adapters.h"

namespace cn::labeler::cluster {

namespace {

InUseReporterSettings reporter_settings(const ClusterDutySettings& s) {
  InUseReporterSettings r;
  r.cluster_name = s.cluster_name;
  r.node = s.node;
  // At least three reports per GC interval, so that a fresh user is reported before two passes
  // can have missed it; never more often than a second.
  r.interval = std::clamp<std::chrono::milliseconds>(
      s.identity_gc_interval / 3, std::chrono::seconds{1}, std::chrono::minutes{1});
  r.call_timeout = s.call_timeout;
  return r;
}

}  // namespace

ClusterDuties::ClusterDuties(const ClusterDutySettings& settings, etcd::EtcdApi& etcd,
                             cilium::CiliumApi& cilium, nomad::NomadApi& nomad, Clock& clock,
                             Metrics& metrics, std::shared_ptr<spdlog::logger> log,
                             std::function<std::string()> node_id)
    : settings_(settings),
      metrics_(metrics),
      log_(log ? std::move(log) : spdlog::default_logger()),
      reporter_(etcd, cilium, clock, reporter_settings(settings), log_,
                [&metrics](bool ok) { metrics.identity_reports(ok).Increment(); }) {
  metrics_.init_cluster_duty_series();
  if (!settings_.enabled) return;
  LeaderElectionSettings es;
  es.key = leader_key(settings_.cluster_name);
  es.holder = settings_.node;
  es.lease_ttl = std::chrono::duration_cast<std::chrono::seconds>(settings_.leader_lease_ttl);
  es.call_timeout = settings_.call_timeout;
  election_ = std::make_unique<LeaderElection>(etcd, clock, es, log_);
  election_->set_observer([this, terms = std::uint64_t{0}](const LeaderView& view) mutable {
    metrics_.cluster_leader().Set(view.leading ? 1 : 0);
    metrics_.set_cluster_leader_holder(view.holder);
    if (view.terms > terms)
      metrics_.cluster_leader_terms().Increment(static_cast<double>(view.terms - terms));
    terms = view.terms;
  });

  DutyContext ctx{etcd, nomad, clock, metrics_, log_, std::move(node_id)};
  std::vector<std::unique_ptr<Duty>> duties;
  if (settings_.heartbeat) duties.push_back(make_heartbeat_duty(settings_, ctx));
  if (settings_.identity_gc) duties.push_back(make_identity_gc_duty(settings_, ctx));
  if (settings_.lock_gc) duties.push_back(make_lock_gc_duty(settings_, ctx));
  if (settings_.node_reaping) duties.push_back(make_node_reaping_duty(settings_, ctx));
  if (settings_.cluster_config) duties.push_back(make_cluster_config_duty(settings_, ctx));
  if (settings_.ip_gc) duties.push_back(make_ip_gc_duty(settings_, ctx));
  const bool dry_run = settings_.dry_run;
  Clock* wall = &clock;
  runner_ = std::make_unique<DutyRunner>(
      *election_, clock, std::move(duties),
      [this, dry_run, wall](DutyName duty, const PassOutcome& outcome, std::chrono::milliseconds) {
        metrics_.cluster_duty_passes(duty, outcome.end).Increment();
        if (outcome.end == PassEnd::complete)
          metrics_.cluster_duty_last_success(duty).Set(
              static_cast<double>(unix_millis(wall->wall_now())) / 1000.0);
        if (duty == DutyName::heartbeat) return;
        if (outcome.deleted > 0)
          metrics_.cluster_duty_deletions(duty, dry_run)
              .Increment(static_cast<double>(outcome.deleted));
        if (outcome.unknown_shape > 0)
          metrics_.cluster_duty_skips(duty, SkipReason::unknown_shape)
              .Increment(static_cast<double>(outcome.unknown_shape));
        if (outcome.changed > 0)
          metrics_.cluster_duty_skips(duty, SkipReason::changed)
              .Increment(static_cast<double>(outcome.changed));
        if (outcome.end == PassEnd::doubt)
          metrics_.cluster_duty_skips(duty, SkipReason::doubt).Increment();
        if (outcome.never_listed > 0)
          metrics_.cluster_duty_skips(duty, SkipReason::never_listed)
              .Increment(static_cast<double>(outcome.never_listed));
        if (outcome.over_cap > 0)
          metrics_.cluster_duty_skips(duty, SkipReason::over_cap)
              .Increment(static_cast<double>(outcome.over_cap));
        if (outcome.not_ours > 0)
          metrics_.cluster_duty_skips(duty, SkipReason::not_ours)
              .Increment(static_cast<double>(outcome.not_ours));
      },
      log_);
}

ClusterDuties::~ClusterDuties() {
  join();
}

void ClusterDuties::start(std::stop_token stop) {
  reporter_thread_ = std::jthread([this, stop] { reporter_.run(stop); });
  if (!election_) return;
  election_thread_ = std::jthread([this, stop] { election_->run(stop); });
  runner_->start(stop);
}

void ClusterDuties::join() {
  // The runner first: its passes end with the term, which ends when the election resigns or the
  // stop is requested; the election thread resigns only after its loop sees the stop.
  if (runner_) runner_->join();
  if (election_thread_.joinable()) election_thread_.join();
  if (reporter_thread_.joinable()) reporter_thread_.join();
}

std::string ClusterDuties::health_detail() const {
  if (!election_) return {};
  LeaderView view = election_->view();
  std::string line = "cluster duties: leader=";
  line += view.holder.empty() ? "unknown" : view.holder;
  if (view.leading) line += " (this labeler)";
  if (!view.last_error.empty()) line += " etcd_error=\"" + view.last_error + "\"";
  return line + "\n";
}

}  // namespace cn::labeler::cluster
