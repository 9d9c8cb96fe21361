#include "labeler/daemon/labeler_daemon.h"

#include <malloc.h>

#include <spdlog/spdlog.h>

#include "labeler/daemon/node_identity.h"
#include "labeler/services/lb_api_detect.h"
#include "labeler/services/lb_rest_writer.h"
#include "labeler/services/lb_state_file_writer.h"
#include "labeler/services/node_addresses.h"
#include "labeler/services/services_status.h"
#include "labeler/watch/event_watcher.h"
#include "labeler/watch/node_watcher.h"

namespace cn::labeler {
namespace {

constexpr int kMaxAttempts = 10;

}  // namespace

LabelerDaemon::LabelerDaemon(DaemonConfig config, nomad::NomadApi& nomad, cilium::CiliumApi& cilium,
                             Clock& clock, std::shared_ptr<spdlog::logger> log,
                             ServicesApis services)
    : config_(std::move(config)),
      nomad_(nomad),
      cilium_(cilium),
      clock_(clock),
      log_(log ? std::move(log) : spdlog::default_logger()),
      health_(clock_, config_.unhealthy_after),
      state_({config_.state_file}, clock_, log_),
      cluster_name_(std::make_shared<ClusterName>(config_.policy.cluster_name)),
      alloc_cache_(std::make_shared<AllocCache>(config_.policy.meta_keys)),
      services_apis_(services) {
  state_.set_on_written(
      [this](std::size_t entries) { metrics_.state_entries().Set(static_cast<double>(entries)); });
  // The oldest wait grows between events: a scrape sees its age now, not at the last change.
  metrics_.set_before_render([this] {
    unlabeled_.publish();
    metrics_.alloc_cache_entries().Set(static_cast<double>(alloc_cache_->size()));
  });
  LabelSettings settings;
  settings.policy = config_.policy;
  settings.cluster_name = cluster_name_;
  settings.cache = alloc_cache_;
  settings.cni_args_first = config_.cni_args_first;
  settings.call_timeout = config_.call_timeout;
  settings.item_budget = config_.item_budget;
  settings.write_budget = config_.write_budget;
  settings.fault_hook = config_.label_fault_hook;
  // One worker always stays free of writes held in the agent's limiter.
  settings.max_concurrent_writes = std::max(1, config_.workers - 1);
  const LabelPathDeps label_path{nomad_, cilium_, state_, clock_, metrics_, calls_, log_};
  labeler_ = std::make_unique<AllocLabeler>(label_path, settings);
  reconciler_ = std::make_unique<Reconciler>(label_path, settings);
  {
    MutexLock lock(reconcile_mu_);  // no reconcile runs yet; the lock states who owns it
    reconciler_->track_unlabeled(unlabeled_);
  }
  orphans_ = std::make_unique<OrphanCollector>(
      nomad_, cilium_, clock_, metrics_, calls_,
      OrphanCollector::Options{config_.gc_endpoints, config_.gc_grace, config_.call_timeout}, log_);
  if (!config_.policies.dir.empty()) {
    policies_ = std::make_unique<policy::PolicyDistributor>(config_.policies, nomad_, clock_,
                                                            metrics_, calls_, log_, &cilium_);
    auditor_ = std::make_unique<policy::PolicyAuditor>(config_.policies, cilium_, clock_, metrics_,
                                                       calls_, log_);
    policies_->set_on_pass([this] { auditor_->kick(); });
  }
  server_ = std::make_unique<NotifyServer>(
      NotifyServer::Options{config_.socket_path, config_.allowed_uids}, clock_, metrics_, log_);
  queue_ = std::make_unique<WorkQueue>(clock_, config_.workers, config_.max_queued,
                                       [this](WorkItem item) { process(std::move(item)); });
  // Health follows every outside call: any answer shows the peer is there; no answer (or a
  // server error) starts or extends an outage.
  calls_.set_listener([this](Peer peer, const Error* error) {
    const Dependency dep = peer == Peer::cilium ? Dependency::kCilium : Dependency::kNomad;
    if (error == nullptr || !counts_as_unreachable(*error)) {
      health_.succeeded(dep);
    } else {
      health_.failed(dep, std::string(to_string(error->kind)) + ": " + error->message);
    }
  });
}

LabelerDaemon::~LabelerDaemon() {
  stop();
}

void LabelerDaemon::set_reason(std::string reason) {
  MutexLock lock(reason_mu_);
  not_ready_reason_ = std::move(reason);
}

std::string LabelerDaemon::not_ready_reason() const {
  MutexLock lock(reason_mu_);
  return not_ready_reason_;
}

Status LabelerDaemon::start(std::stop_token stop) {
  if (auto ok = server_->listen(); !ok) return ok;
  queue_->start();
  server_->start([this](const notify::Request& r) { on_notification(r); });
  log_->info("listening: socket={} state={} workers={} watch={} resync_s={}", config_.socket_path,
             config_.state_file, config_.workers, to_string(config_.watch),
             config_.resync_interval.count());

  // Policies need neither the agent nor this node's ID: the agent reads the directory whenever
  // it starts, so the files are there first.
  if (policies_) {
    policy_thread_ = std::jthread([this](std::stop_token st) { policies_->run(st); });
    audit_thread_ = std::jthread([this](std::stop_token st) { auditor_->run(st); });
  }

  // The caller's stop, or stop(): whichever comes first ends a half-started daemon's waits.
  std::stop_callback forward(stop, [this] { shutdown_.request_stop(); });
  const std::stop_token halt = shutdown_token();
  const BackoffPolicy start_backoff{std::chrono::milliseconds{500}, std::chrono::seconds{60},
                                    std::chrono::milliseconds{250}};
  BackoffStrategy agent_backoff(start_backoff, jitter_);
  while (!halt.stop_requested()) {
    auto ready = cilium_.ready(Deadline{clock_.now() + config_.call_timeout, halt});
    calls_.record(Peer::cilium, ready);
    if (ready) break;
    set_reason("Cilium agent not answering: " + ready.error().message);
    log_->warn("waiting for the Cilium agent: kind={} error=\"{}\"", to_string(ready.error().kind),
               ready.error().message);
    clock_.sleep_for(agent_backoff.next_delay(), halt);
  }
  // Without the compat labels the name labels nothing: no call, and no warning about it.
  if (config_.policy.k8s_compat && !halt.stop_requested()) adopt_agent_cluster_name(halt);
  const NodeIdentitySources id_sources{
      config_.node_id, config_.nomad_data_dir, config_.node_name, {}};
  BackoffStrategy node_id_backoff(start_backoff, jitter_);
  while (node_id_.empty() && !halt.stop_requested()) {
    auto id = find_node_id(id_sources, nomad_, Deadline{clock_.now() + config_.call_timeout, halt});
    // A file or a flag is no sign of Nomad's health either way.
    if (!id || id->asked_nomad) calls_.record(Peer::nomad, id);
    if (id) {
      node_id_ = id->id;
      log_->info("node id: node={} source=\"{}\"", node_id_, id->source);
      break;
    }
    set_reason("Nomad agent not answering: " + id.error().message);
    const auto fix = remedy(id.error(), Peer::nomad);
    log_->warn("waiting for Nomad to tell this node's ID: kind={} error=\"{}\"{}",
               to_string(id.error().kind), id.error().message,
               fix.empty() ? std::string() : " fix=\"" + std::string(fix) + "\"");
    clock_.sleep_for(node_id_backoff.next_delay(), halt);
  }
  if (config_.services.enabled() && !halt.stop_requested()) {
    if (auto started = start_services(halt); !started) return started;
  }
  std::uint64_t first_index = 0;
  BackoffStrategy reconcile_backoff(start_backoff, jitter_);
  while (!halt.stop_requested()) {
    auto report = reconcile_now(halt);
    if (report) {
      first_index = report->nomad_index;
      break;
    }
    set_reason("first reconcile failed: " + report.error().message);
    log_->warn("startup reconcile failed, retrying: kind={} error=\"{}\"",
               to_string(report.error().kind), report.error().message);
    // The reconciler's own line names the fix, knowing which peer failed.
    clock_.sleep_for(reconcile_backoff.next_delay(), halt);
  }
  if (halt.stop_requested()) return {};
  ready_ = true;
  health_.started();
  set_reason("");
  log_->info("ready: node={} cluster={}", node_id_, cluster_name_->get());
  if (config_.resync_interval.count() > 0) {
    resync_thread_ = std::jthread([this](std::stop_token st) { resync_loop(st); });
  }
  start_watcher(first_index);
  return {};
}

void LabelerDaemon::adopt_agent_cluster_name(std::stop_token halt) {
  // A wrong name keeps every endpoint out of the peers of every directory policy (from Cilium
  // 1.19 their selectors require the agent's name). Asked once, at startup: an agent restarted
  // with another --cluster-name is noticed when the labeler restarts.
  auto agent = cilium_.cluster_name(Deadline{clock_.now() + config_.call_timeout, halt});
  calls_.record(Peer::cilium, agent);
  const std::string& flag = config_.policy.cluster_name;
  if (!agent) {
    log_->warn(
        "agent's cluster name unknown, labeling with --cluster-name: cluster={} kind={} "
        "error=\"{}\"",
        flag, to_string(agent.error().kind), agent.error().message);
    return;
  }
  if (*agent == flag) return;
  log_->warn(
      "cluster name differs, labeling with the agent's: agent={} flag={} fix=\"set "
      "the labeler's --cluster-name={}\"",
      *agent, flag, *agent);
  // Endpoints labeled with the old name before this are rewritten by the first reconcile, which
  // runs after this and sees their cluster label differ from the one it derives.
  cluster_name_->set(*agent);
}

void LabelerDaemon::start_watcher(std::uint64_t index) {
  auto enqueue = [this](WorkItem item) {
    bool ok = queue_->enqueue(std::move(item));
    metrics_.queue_depth().Set(static_cast<double>(queue_->depth()));
    return ok;
  };
  auto resync = [this] {
    if (auto report = reconcile_now(shutdown_token()); !report) {
      metrics_.errors(ErrorKindLabel::reconcile).Increment();
      log_->warn("watch resync failed: error=\"{}\"", report.error().message);
    }
  };
  // Either watcher starts right after the first reconcile, which covered everything up to
  // `index`, and fills the allocation cache.
  const auto start_watcher = [&]<class WatcherT, class Options>(Options options) {
    options.initial_index = index;
    options.cache = alloc_cache_.get();
    watcher_ = std::make_unique<WatcherT>(
        WatcherDeps{nomad_, clock_, metrics_, calls_, node_id_, enqueue, resync, log_}, options);
  };
  switch (config_.watch) {
    case WatchMode::kNode:
      start_watcher.operator()<NodeWatcher>(NodeWatchOptions{});
      break;
    case WatchMode::kEvents:
      start_watcher.operator()<EventWatcher>(EventWatchOptions{});
      break;
    case WatchMode::kNone:
      return;  // plugin notifications and the periodic resync only
  }
  watch_thread_ = std::jthread([this](std::stop_token st) {
    // A watcher that throws is started again after a pause: without it, nothing would see what
    // the plugin missed until the next resync.
    BackoffStrategy restarts(BackoffPolicy{std::chrono::seconds{1}, std::chrono::seconds{60},
                                           std::chrono::milliseconds{500}},
                             jitter_);
    while (!st.stop_requested()) {
      try {
        watcher_->run(st);
        return;
      } catch (const std::exception& e) {
        metrics_.errors(ErrorKindLabel::exception).Increment();
        log_->error("watcher threw, restarting: mode={} error=\"{}\"", watcher_->mode(), e.what());
      }
      clock_.sleep_for(restarts.next_delay(), st);
    }
  });
}

Status LabelerDaemon::start_services(std::stop_token halt) {
  const ServicesSettings& settings = config_.services;
  if (services_apis_.of_nomad == nullptr || services_apis_.of_agent == nullptr) {
    return fail(ErrorKind::invalid, "the services feature needs the services clients");
  }
  std::vector<IpPrefix> taken;
  auto pods = cilium_.alloc_ranges(Deadline{clock_.now() + config_.call_timeout, halt});
  calls_.record(Peer::cilium, pods);
  if (pods) {
    taken = *pods;
  } else {
    log_->warn(
        "pod CIDRs unknown, the VIP range is checked against this node's addresses only: "
        "kind={} error=\"{}\"",
        to_string(pods.error().kind), pods.error().message);
  }
  if (auto own = node_interface_addresses()) {
    taken.insert(taken.end(), own->begin(), own->end());
  } else {
    log_->warn("this node's addresses unknown: error=\"{}\"", own.error().message);
  }
  auto range = VipRange::parse(settings.vip_range, taken);
  if (!range) return std::unexpected(range.error());
  vip_range_ = std::make_unique<VipRange>(*range);
  VipTableOptions table;
  table.release_grace = settings.vip_grace;
  vip_table_ =
      std::make_unique<VipTable>(nomad_, *services_apis_.of_nomad, *vip_range_, clock_, table);
  ServicesSyncOptions sync;
  lb_writer_ = make_lb_writer(halt, sync.check.shared_backends_safe);
  if (!lb_writer_) return {};  // stopped while asking the agent
  sync.node_id = node_id_;
  sync.check.vip_ranges = {vip_range_->prefix()};
  services_sync_ = std::make_unique<ServicesSync>(nomad_, *services_apis_.of_nomad, *vip_table_,
                                                  *lb_writer_, sync);
  ServicesLoopOptions loop;
  loop.call_timeout = config_.call_timeout;
  loop.check_interval = settings.check_interval;
  loop.resync_interval = settings.resync_interval;
  services_loop_ = std::make_unique<ServicesLoop>(
      ServicesLoopDeps{nomad_, *services_sync_, clock_, metrics_, calls_, log_}, loop);
  log_->info("services: vip_range={} lb_api={} lb_state_file={} shared_backends_safe={}",
             prefix_text(vip_range_->prefix()), to_string(lb_writer_->api()),
             lb_writer_->api() == LbApi::rest ? "-" : settings.lb_state_file,
             sync.check.shared_backends_safe);
  services_status_ = std::make_unique<ServicesStatusFile>(services_status_path(config_.state_file));
  ServicesStatusSource source{lb_writer_->api(),
                              lb_writer_->api() == LbApi::rest ? "rest" : settings.lb_state_file,
                              {vip_range_->prefix()}};
  // The loop's thread only: `services` reads the file, never the daemon.
  services_loop_->set_on_pass([this, source](const Result<ServicesPass>& pass) {
    ServicesStatus status =
        pass ? build_services_status(*pass, source)
             : failed_services_status(services_status_->last(), source, pass.error().message);
    if (auto wrote = services_status_->publish(std::move(status), clock_.wall_now()); !wrote) {
      log_->warn("services status not written: file={} error=\"{}\"", services_status_->path(),
                 wrote.error().message);
    }
  });
  services_thread_ = std::jthread([this](std::stop_token st) { services_loop_->run(st); });
  return {};
}

std::unique_ptr<LbWriter> LabelerDaemon::make_lb_writer(std::stop_token halt,
                                                        bool& shared_backends_safe) {
  const ServicesSettings& settings = config_.services;
  // Asked even when --lb-api names the API: the release also tells whether two services may
  // share a backend.
  std::optional<LbApiDetection> detected;
  BackoffStrategy backoff(BackoffPolicy{std::chrono::milliseconds{500}, std::chrono::seconds{30},
                                        std::chrono::milliseconds{250}},
                          jitter_);
  while (!halt.stop_requested()) {
    auto d = detect_lb_api(*services_apis_.of_agent,
                           Deadline{clock_.now() + config_.call_timeout, halt});
    calls_.record(Peer::cilium, d);
    if (d) {
      detected = *d;
      break;
    }
    // Only auto must know; a named API goes on, and shares no backend between services.
    if (settings.api != LbApiChoice::automatic) break;
    log_->warn(
        "services: waiting for the agent to tell its load-balancer API: kind={} "
        "error=\"{}\"",
        to_string(d.error().kind), d.error().message);
    clock_.sleep_for(backoff.next_delay(), halt);
  }
  if (halt.stop_requested()) return nullptr;
  shared_backends_safe = detected && detected->shared_backends_safe;
  LbApi api = settings.api == LbApiChoice::rest         ? LbApi::rest
              : settings.api == LbApiChoice::state_file ? LbApi::state_file
                                                        : detected->api;
  std::string release = "unknown";
  if (detected && detected->version) {
    const auto& v = *detected->version;
    release = std::to_string(v.major) + "." + std::to_string(v.minor) + "." +
              std::to_string(v.patch) + (v.prerelease ? "-pre" : "");
  }
  if (detected && detected->api != api) {
    log_->warn("services: --lb-api {} overrides what the agent supports: release={} supports={}",
               to_string(api), release, to_string(detected->api));
  }
  if (api == LbApi::rest) {
    if (settings.api == LbApiChoice::automatic) {
      log_->warn(
          "services: the agent takes no state file, using its REST API instead: "
          "release={} lb_state_file={}",
          release, settings.lb_state_file);
    }
    LbRestWriterOptions rest;
    rest.vip_ranges = {vip_range_->prefix()};
    rest.log = log_;
    return std::make_unique<LbRestWriter>(*services_apis_.of_agent, rest);
  }
  return std::make_unique<LbStateFileWriter>(settings.lb_state_file);
}

void LabelerDaemon::stop() {
  // First: every in-flight call (a PATCH queued in the agent's limiter, a confirmation poll, a
  // reconcile's listing) is abandoned, so the joins below are quick.
  shutdown_.request_stop();
  // Asked first, joined last: a node-mode blocking query in flight holds the watcher until it
  // returns, and nothing else should wait behind it.
  if (watch_thread_.joinable()) watch_thread_.request_stop();
  if (policy_thread_.joinable()) policy_thread_.request_stop();
  if (services_thread_.joinable()) services_thread_.request_stop();
  if (resync_thread_.joinable()) {
    resync_thread_.request_stop();
    resync_thread_ = {};
  }
  if (server_) server_->stop();
  if (queue_) queue_->stop();
  if (watch_thread_.joinable()) watch_thread_ = {};
  if (policy_thread_.joinable()) policy_thread_ = {};
  if (services_thread_.joinable()) services_thread_ = {};
  if (audit_thread_.joinable()) audit_thread_ = {};
}

Result<ReconcileReport> LabelerDaemon::reconcile_now(std::stop_token stop) {
  MutexLock lock(reconcile_mu_);
  // Decoding a big node's lists can run out of memory: one failed pass, retried like any other.
  try {
    auto report = reconciler_->run(
        node_id_, [this](WorkItem item) { return queue_->enqueue(std::move(item)); },
        std::move(stop));
    if (report) orphans_->collect(*report);
    // Labels may have changed under an audit-mode policy's selector.
    if (auditor_) auditor_->kick();
    return report;
  } catch (const std::exception& e) {
    metrics_.errors(ErrorKindLabel::exception).Increment();
    return fail(ErrorKind::io, std::string("reconcile threw: ") + e.what());
  }
}

void LabelerDaemon::resync_loop(std::stop_token stop) {
  while (!stop.stop_requested()) {
    // +-10% jitter so that the nodes of a cluster do not all ask Nomad at the same second.
    auto interval = std::chrono::duration_cast<std::chrono::milliseconds>(config_.resync_interval);
    long long spread = interval.count() / 10;
    const auto wait = interval + std::chrono::milliseconds{jitter_.uniform(-spread, spread)};
    if (!clock_.sleep_for(wait, stop)) return;
    if (auto report = reconcile_now(shutdown_token()); !report) {
      metrics_.errors(ErrorKindLabel::reconcile).Increment();
      log_->warn("resync failed: error=\"{}\"", report.error().message);
    }
  }
}

void LabelerDaemon::on_notification(const notify::Request& request) {
  try {
    handle_notification(request);
  } catch (const std::exception& e) {
    // The plugin fails open on its own deadline; the daemon must not die of one notification.
    metrics_.errors(ErrorKindLabel::exception).Increment();
    log_->error("notification threw: alloc={} error=\"{}\"", request.alloc_id, e.what());
  }
}

void LabelerDaemon::handle_notification(const notify::Request& request) {
  if (request.op == notify::Op::kDel) {
    // cilium-cni deletes the endpoint; the plugin already dropped the entry. Nothing to label.
    server_->reply(request.alloc_id,
                   notify::Reply{notify::ReplyStatus::kFailed, 0, 0, {}, "deleted"});
    unlabeled_.done(request.alloc_id);
    refresh_state_entries();
    return;
  }
  unlabeled_.waiting(request.alloc_id, unix_millis(clock_.wall_now()));
  WorkItem item;
  item.alloc_id = request.alloc_id;
  item.ifname = request.ifname;
  item.ips = request.ips;
  item.hint = request.nomad;
  item.added_unix_ms = unix_millis(clock_.wall_now());
  item.source = WorkSource::kNotify;
  if (!queue_->enqueue(std::move(item))) {
    metrics_.errors(ErrorKindLabel::queue_full).Increment();
    log_->warn("queue full, leaving the allocation to the next reconcile: alloc={}",
               request.alloc_id);
    server_->reply(request.alloc_id,
                   notify::Reply{notify::ReplyStatus::kPending, 0, 0, {}, "labeler queue full"});
  }
  metrics_.queue_depth().Set(static_cast<double>(queue_->depth()));
}

void LabelerDaemon::refresh_state_entries() {
  // Read-only and unlocked: a notification never waits behind a writer for a gauge.
  auto entries = state::count_state_entries(config_.state_file);
  if (entries) metrics_.state_entries().Set(static_cast<double>(*entries));
}

void LabelerDaemon::after_outcome(const WorkItem& item, const LabelOutcome& out) {
  if (out.status == notify::ReplyStatus::kLabeled) {
    if (out.identity != 0) {
      unlabeled_.done(item.alloc_id);
      return;
    }
    // Written without waiting for the identity (a reconcile's work): look again shortly, so the
    // state file records the identity once it resolves rather than "resolving" until the next
    // resync. The look finds our labels in place and only confirms.
    if (shutdown_.stop_requested()) return;
    WorkItem look = item;
    look.confirm = true;
    look.endpoint.reset();
    if (!queue_->enqueue_after(std::move(look), item_backoff_.delay(0, jitter_))) {
      log_->warn("identity check not queued, leaving it to the next resync: alloc={}",
                 item.alloc_id);
    }
    return;
  }
  if (!out.failure) return;  // stopped: nothing learned
  if (out.failure == LabelFailure::alloc_terminal ||
      out.failure == LabelFailure::nomad_alloc_unknown) {
    unlabeled_.done(item.alloc_id);  // not this node's to label any more
    return;
  }
  unlabeled_.waiting(item.alloc_id, item.added_unix_ms.value_or(unix_millis(clock_.wall_now())));
}

void LabelerDaemon::process(WorkItem item) {
  const std::string alloc_id = item.alloc_id;
  // A worker survives anything one item throws (out of memory, a library's exception): the item
  // is counted, logged and left to its retry or the next resync; the worker takes the next one.
  try {
    process_item(std::move(item));
    // A newly labeled endpoint may be the subject of an audit-mode policy.
    if (auditor_) auditor_->kick();
  } catch (const std::exception& e) {
    metrics_.errors(ErrorKindLabel::exception).Increment();
    log_->error(
        "labeling threw, item dropped until the next retry or resync: alloc={} error=\"{}\"",
        alloc_id, e.what());
  } catch (...) {
    metrics_.errors(ErrorKindLabel::exception).Increment();
    log_->error(
        "labeling threw a non-standard exception, item dropped until the next resync: alloc={}",
        alloc_id);
  }
}

void LabelerDaemon::process_item(WorkItem item) {
  auto started = clock_.now();
  LabelOutcome out = labeler_->label(item, shutdown_token());
  // What the log says must be what happens: after the last attempt nothing is retried.
  const bool retry =
      out.will_retry() && item.attempt + 1 < kMaxAttempts && !shutdown_.stop_requested();
  // A waiting plugin hears "labeled" only with a resolved identity. Work that did not confirm
  // (reconcile) leaves it waiting: its own notification runs right after and confirms. Work that
  // will be tried again (a write slot busy, the identity still resolving, the agent away) leaves
  // it waiting too, up to its own deadline: a "pending" now would start the workload under
  // reserved:init although the retry may label it in time.
  const bool unconfirmed = out.status == notify::ReplyStatus::kLabeled && out.identity == 0;
  if (out.status != notify::ReplyStatus::kLabeled && retry) {
    server_->note_retrying(item.alloc_id, out.message);
  } else if (!unconfirmed) {
    server_->reply(item.alloc_id, notify::Reply{out.status, out.endpoint_id, out.identity,
                                                out.labels, out.message});
  }
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(clock_.now() - started).count();
  if (out.status == notify::ReplyStatus::kLabeled) {
    if (item.added_unix_ms && out.wrote) {
      double seconds =
          static_cast<double>(unix_millis(clock_.wall_now()) - *item.added_unix_ms) / 1000.0;
      metrics_.add_to_labeled_seconds().Observe(std::max(0.0, seconds));
    }
    log_->info(
        "labeled: alloc={} source={} identity_from={} endpoint={} identity={} wrote={} "
        "degraded={} ms={}",
        item.alloc_id, to_string(item.source), to_string(out.identity_from), out.endpoint_id,
        out.identity, out.wrote, out.degraded, ms);
  } else {
    const char* next = retry ? "backoff" : out.retry == RetryRule::at_resync ? "resync" : "none";
    log_->log(retry ? spdlog::level::info : spdlog::level::warn,
              "not labeled: alloc={} source={} outcome={} reason=\"{}\" attempt={} retry={}{}",
              item.alloc_id, to_string(item.source), notify::to_string(out.status), out.message,
              item.attempt, next,
              out.remedy.empty() ? std::string() : " fix=\"" + out.remedy + "\"");
  }
  after_outcome(item, out);
  if (out.will_retry() && !retry && !shutdown_.stop_requested()) {
    log_->warn("giving up after {} attempts, leaving the allocation to the next resync: alloc={}",
               kMaxAttempts, item.alloc_id);
  }
  if (retry) {
    const std::string id = item.alloc_id;
    const auto delay = item_backoff_.delay(item.attempt, jitter_);
    WorkItem again = std::move(item);
    again.attempt += 1;
    again.source = out.verify ? WorkSource::kRetry : again.source;
    again.endpoint.reset();  // re-read: it may have changed or appeared
    // The re-check must come from Nomad (the cache or a GET), not from CNI_ARGS again.
    again.verify_cni_args = again.verify_cni_args || out.verify;
    if (!queue_->enqueue_after(std::move(again), delay)) {
      log_->warn(
          "retry not queued (queue full or stopping), leaving it to the next resync: alloc={}", id);
    }
  }
  metrics_.queue_depth().Set(static_cast<double>(queue_->depth()));
  // The last item of a burst (the startup reconcile's work, a job's group count): each worker's
  // malloc arena holds what its state writes and endpoint reads freed, which would otherwise stay
  // in the RSS until the next reconcile trims. This item is still counted as running.
  if (queue_->depth() == 0 && queue_->in_flight() <= 1) ::malloc_trim(0);
}

}  // namespace cn::labeler
