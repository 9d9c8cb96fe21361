#pragma once
// Wires the labeler together: notification server -> work queue -> AllocLabeler, the
// reconciler at startup and on every resync, and the readiness the health endpoint reports.
#include <atomic>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>

#include <spdlog/fwd.h>

#include "common/cilium/client/cilium_services_api.h"
#include "common/util/backoff.h"
#include "common/util/mutex.h"
#include "labeler/daemon/cluster_name.h"
#include "labeler/daemon/daemon_config.h"
#include "labeler/daemon/work_queue.h"
#include "labeler/labeling/alloc_labeler.h"
#include "labeler/labeling/unlabeled_tracker.h"
#include "labeler/policy/policy_auditor.h"
#include "labeler/policy/policy_distributor.h"
#include "labeler/serve/call_recorder.h"
#include "labeler/serve/health_tracker.h"
#include "labeler/serve/notify_server.h"
#include "labeler/services/services_loop.h"
#include "labeler/services/services_status.h"
#include "labeler/services/vip_range.h"
#include "labeler/services/vip_table.h"
#include "labeler/watch/orphan_collector.h"
#include "labeler/watch/reconciler.h"
#include "labeler/watch/watcher.h"

namespace cn::labeler {

// What the services feature asks of Nomad and of the agent beyond the label path's calls.
struct ServicesApis {
  nomad::NomadServicesApi* of_nomad = nullptr;
  cilium::CiliumServicesApi* of_agent = nullptr;
};

class LabelerDaemon {
 public:
  // `services`: needed only with the services feature (DaemonConfig::services).
  LabelerDaemon(DaemonConfig config, nomad::NomadApi& nomad, cilium::CiliumApi& cilium,
                Clock& clock, std::shared_ptr<spdlog::logger> log, ServicesApis services = {});
  ~LabelerDaemon();

  // Listens on the notification socket and starts the workers at once (so no plugin waits on a
  // missing socket), then waits for the agent and Nomad and runs the first reconcile, retrying
  // with backoff until `stop`. Returns an error only for what retrying cannot fix.
  [[nodiscard]] Status start(std::stop_token stop);
  void stop();

  // For tests and the health endpoint.
  bool ready() const { return ready_; }
  std::string not_ready_reason() const EXCLUDES(reason_mu_);
  Metrics& metrics() { return metrics_; }
  CallRecorder& calls() { return calls_; }
  HealthTracker& health() { return health_; }
  UnlabeledTracker& unlabeled() { return unlabeled_; }
  WorkQueue& queue() { return *queue_; }
  const std::string& node_id() const { return node_id_; }
  // What `k8s:io.cilium.k8s.policy.cluster` is derived from now.
  std::string cluster_name() const { return cluster_name_->get(); }
  policy::PolicyDistributor* policies() { return policies_.get(); }
  policy::PolicyAuditor* policy_auditor() { return auditor_.get(); }
  const AllocCache& alloc_cache() const { return *alloc_cache_; }
  ServicesLoop* services() { return services_loop_.get(); }
  [[nodiscard]] Result<ReconcileReport> reconcile_now(std::stop_token stop = {})
      EXCLUDES(reconcile_mu_);

 private:
  void on_notification(const notify::Request& request);
  void handle_notification(const notify::Request& request);
  void process(WorkItem item);
  void process_item(WorkItem item);
  void resync_loop(std::stop_token stop);
  // Stops every call and wait of the daemon's own threads (workers, reconciles) at once: stop()
  // requests it first, so nothing it joins afterwards still waits out a deadline.
  std::stop_token shutdown_token() const { return shutdown_.get_token(); }
  void set_reason(std::string reason) EXCLUDES(reason_mu_);
  // Reads the agent's cluster name once it answers, and labels with it when it differs from
  // --cluster-name (logged once, with the fix). Failure keeps --cluster-name.
  void adopt_agent_cluster_name(std::stop_token halt);
  // --watch: runs the configured watcher on its own thread; `index` is the first reconcile's.
  void start_watcher(std::uint64_t index);
  // The services feature, once this node's ID is known: the VIP range checked against the pod
  // CIDRs and this node's addresses (an overlap is an error retrying cannot fix), the agent's
  // load-balancer API, then the loop.
  [[nodiscard]] Status start_services(std::stop_token halt);
  // The writer --lb-api asks for; with auto, the one the agent supports (lb_api_detect.h).
  std::unique_ptr<LbWriter> make_lb_writer(std::stop_token halt, bool& shared_backends_safe);
  // What one outcome means for the unlabeled gauges, and the follow-up an unconfirmed write needs.
  void after_outcome(const WorkItem& item, const LabelOutcome& out);
  // The plugin changed the file (ADD, DEL): the entries gauge follows without waiting for the
  // labeler's own next write.
  void refresh_state_entries();

  DaemonConfig config_;
  nomad::NomadApi& nomad_;
  cilium::CiliumApi& cilium_;
  Clock& clock_;
  std::shared_ptr<spdlog::logger> log_;
  Metrics metrics_;
  CallRecorder calls_{metrics_};
  HealthTracker health_;
  UnlabeledTracker unlabeled_{clock_, metrics_};
  state::StateStore state_;
  std::shared_ptr<ClusterName> cluster_name_;  // shared with the workers' LabelSettings
  std::shared_ptr<AllocCache> alloc_cache_;    // filled by the watch and the reconcile
  std::unique_ptr<AllocLabeler> labeler_;
  std::unique_ptr<Reconciler> reconciler_ PT_GUARDED_BY(reconcile_mu_);
  std::unique_ptr<OrphanCollector> orphans_ PT_GUARDED_BY(reconcile_mu_);
  std::unique_ptr<NotifyServer> server_;
  std::unique_ptr<WorkQueue> queue_;
  std::string node_id_;
  std::atomic<bool> ready_{false};
  mutable Mutex reason_mu_;
  std::string not_ready_reason_ GUARDED_BY(reason_mu_) = "starting";
  std::stop_source shutdown_;
  // Work items that did not finish: from half a second up to a minute, full jitter.
  // An item carries its own count of attempts from one queue pass to the next.
  const BackoffPolicy item_backoff_{std::chrono::milliseconds{500}, std::chrono::seconds{60},
                                    std::chrono::milliseconds{100}};
  // The jitter of every wait here: startup retries, watcher restarts, items, resync spread.
  BackoffJitter jitter_;
  std::jthread resync_thread_;
  Mutex reconcile_mu_;  // the resync loop and the watcher may both ask for a reconcile
  std::unique_ptr<Watcher> watcher_;
  std::jthread watch_thread_;
  std::unique_ptr<policy::PolicyDistributor> policies_;  // with --policy-dir only
  std::unique_ptr<policy::PolicyAuditor> auditor_;       // with policies_
  std::jthread policy_thread_;
  std::jthread audit_thread_;
  ServicesApis services_apis_;
  std::unique_ptr<VipRange> vip_range_;  // with services only, as are the four below
  std::unique_ptr<VipTable> vip_table_;
  std::unique_ptr<LbWriter> lb_writer_;
  std::unique_ptr<ServicesSync> services_sync_;
  std::unique_ptr<ServicesLoop> services_loop_;
  std::unique_ptr<ServicesStatusFile> services_status_;  // written on the loop's thread
  std::jthread services_thread_;
};

}  // namespace cn::labeler
