#pragma once
// Labels one allocation's endpoint: fetch the allocation (Job embedded), find the endpoint,
// derive the labels, write them at most once, confirm the identity resolved, record it.
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <semaphore>
#include <stop_token>
#include <string>
#include <vector>

#include <spdlog/fwd.h>

#include "common/cilium/client/cilium_api.h"
#include "common/labels/derive_labels.h"
#include "common/labels/label_policy.h"
#include "common/nomad/client/nomad_api.h"
#include "common/notify/protocol.h"
#include "common/state/state_store.h"
#include "common/util/backoff.h"
#include "common/util/mutex.h"
#include "common/util/retry_rule.h"
#include "labeler/daemon/cluster_name.h"
#include "labeler/daemon/work_item.h"
#include "labeler/labeling/alloc_cache.h"
#include "labeler/labeling/identity_trust.h"
#include "labeler/labeling/label_failure.h"
#include "labeler/labeling/label_path_deps.h"
#include "labeler/labeling/label_step.h"
#include "labeler/serve/call_recorder.h"
#include "labeler/serve/metrics.h"

namespace cn::labeler {

struct LabelSettings {
  // policy.cluster_name is --cluster-name; `cluster_name`, when set, overrides it.
  labels::LabelPolicy policy;
  // Shared by every worker, so that the agent's name, once the daemon has read it, reaches the
  // labels of every later derivation (label_policy()).
  std::shared_ptr<ClusterName> cluster_name;
  // The watch's allocation cache, shared with the watchers and the reconciler that fill it. Null:
  // every notification asks Nomad.
  std::shared_ptr<AllocCache> cache;
  // --cni-args-first: on a cache miss without meta labels, label from CNI_ARGS at once and check
  // against Nomad afterwards; false: CNI_ARGS are never read (labeler/labeling/identity_trust.h).
  bool cni_args_first = true;
  std::chrono::milliseconds call_timeout{5000};
  // How long a worker keeps at one item's lookups and confirmation (endpoint not there yet,
  // identity resolving) before it hands the item back as a delayed retry.
  std::chrono::milliseconds item_budget{15000};
  // A label write's own budget. Cilium's endpoint-patch limiter (apiRateLimitDefaults in
  // cilium/cilium daemon/cmd/api_limits.go) may hold a PATCH for its MaxWaitDuration, 15 s by
  // default, before serving it, and the agent then regenerates the endpoint: the write must
  // outlast both, or a queued write is abandoned and sent again from the back of the queue.
  std::chrono::milliseconds write_budget{30000};
  // Label writes in flight at once. Kept below the worker count so that writes stalled in the
  // agent's limiter never hold every worker: other allocations' lookups and confirmations go on.
  int max_concurrent_writes = 3;
  // Tests only: called before each step, may throw to prove that a stray exception costs one
  // item, never the worker or the daemon. Unset in production.
  LabelFaultHook fault_hook;
};

// The policy to derive labels with now: settings.policy with the current cluster name.
labels::LabelPolicy label_policy(const LabelSettings& settings);

struct LabelOutcome {
  notify::ReplyStatus status = notify::ReplyStatus::kPending;
  long long endpoint_id = 0;
  long long identity = 0;
  std::vector<std::string> labels;
  std::string message;
  bool wrote = false;
  bool degraded = false;  // labelled from CNI_ARGS because Nomad did not answer
  // Labelled from CNI_ARGS (degraded, or CNI_ARGS first): Nomad's answer must check it.
  bool verify = false;
  IdentitySource identity_from = IdentitySource::nomad;
  // Whether and when to try again (common/util/retry_rule.h); never when finished.
  RetryRule retry = RetryRule::never;
  // What an operator must fix before a retry can help (at_resync), for the log.
  std::string remedy;
  // Why it did not label; nullopt when it did, or when the attempt was only stopped (shutdown).
  std::optional<LabelFailure> failure;

  bool will_retry() const { return retry == RetryRule::now || retry == RetryRule::later; }
};

class AllocLabeler {
 public:
  AllocLabeler(LabelPathDeps deps, LabelSettings settings);

  // `stop` abandons the item's calls and waits (shutdown): the outcome is then a cancelled retry.
  // A failure is counted by reason and recorded as the entry's last_attempt; a success clears it.
  LabelOutcome label(const WorkItem& item, std::stop_token stop = {});

 private:
  LabelOutcome attempt_label(const WorkItem& item, std::stop_token stop);
  void record_failure(const WorkItem& item, LabelFailure failure, const LabelOutcome& out);
  struct Identity {
    labels::AllocationIdentity identity;
    IdentitySource source = IdentitySource::nomad;
    bool degraded = false;
  };
  [[nodiscard]] std::expected<Identity, LabelOutcome> identity_of_live(
      const nomad::Allocation& alloc, std::string_view alloc_id, IdentitySource source) const;
  TrustRules trust_rules() const;
  struct Attempt;  // one label() call's deadlines and stop
  [[nodiscard]] std::expected<Identity, LabelOutcome> fetch_identity(const WorkItem& item,
                                                                     const Attempt& attempt);
  [[nodiscard]] std::expected<Identity, LabelOutcome> resolve_identity(const WorkItem& item,
                                                                       const Attempt& attempt);
  [[nodiscard]] std::expected<cilium::Endpoint, LabelOutcome> find_endpoint(const WorkItem& item,
                                                                            const Attempt& attempt);
  [[nodiscard]] std::expected<cilium::Endpoint, LabelOutcome> write_labels(
      const WorkItem& item, cilium::Endpoint ep, const labels::LabelSet& desired,
      const Attempt& attempt, bool& wrote);
  [[nodiscard]] std::expected<cilium::Endpoint, LabelOutcome> confirm(
      const cilium::EndpointRef& ref, const labels::LabelSet& desired, const Attempt& attempt);
  void record(const WorkItem& item, const cilium::Endpoint& ep,
              const labels::AllocationIdentity& identity, const labels::LabelSet& desired);
  Deadline call_deadline(const Attempt& attempt) const;
  // A failed call as an outcome: the retry rule, remedy and failure come from the error's kind.
  static LabelOutcome failed_call(Peer peer, std::string context, const Error& error);
  // When this process last saw each allocation's endpoint carry its labels. A prefetched
  // endpoint read before that is stale: planning a write from it would write a second time.
  void note_labeled(const std::string& alloc_id) EXCLUDES(labeled_mu_);
  bool labeled_since(const std::string& alloc_id, MonoTime since) EXCLUDES(labeled_mu_);

  LabelPathDeps deps_;
  LabelSettings settings_;
  std::counting_semaphore<64> write_slots_;
  BackoffJitter confirm_jitter_;  // the identity polls', shared by the workers
  // The endpoint ID form this agent answered last (cni-attachment-id on 1.15+, container-id on
  // older ones): tried first next time, which saves a 400/404 round trip per allocation.
  std::atomic<int> preferred_kind_{static_cast<int>(cilium::EndpointIdKind::cni_attachment)};
  std::atomic<bool> endpoint_patch_gone_{false};
  Mutex labeled_mu_;
  std::map<std::string, MonoTime> labeled_at_ GUARDED_BY(labeled_mu_);
};

}  // namespace cn::labeler
