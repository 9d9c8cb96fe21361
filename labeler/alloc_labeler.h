#pragma once
// Labels one allocation's endpoint: fetch the allocation (Job embedded), find the endpoint,
// derive the labels, write them at most once, confirm the identity resolved, record it.
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <spdlog/fwd.h>

#include "common/cilium/client/cilium_api.h"
#include "common/labels/derive_labels.h"
#include "common/labels/label_policy.h"
#include "common/nomad/client/nomad_api.h"
#include "common/notify/protocol.h"
#include "common/state/state_store.h"
#include "labeler/metrics.h"
#include "labeler/work_item.h"

namespace cn::labeler {

struct LabelSettings {
  labels::LabelPolicy policy;
  std::chrono::milliseconds call_timeout{5000};
  // How long a worker keeps at one item (endpoint not there yet, identity resolving) before it
  // hands it back as a delayed retry.
  std::chrono::milliseconds item_budget{15000};
};

struct LabelOutcome {
  notify::ReplyStatus status = notify::ReplyStatus::kPending;
  long long endpoint_id = 0;
  long long identity = 0;
  std::vector<std::string> labels;
  std::string message;
  bool wrote = false;
  bool degraded = false;  // labelled from CNI_ARGS only: re-check once Nomad answers
  bool retry = false;     // not finished: try again later
};

class AllocLabeler {
 public:
  AllocLabeler(nomad::NomadApi& nomad, cilium::CiliumApi& cilium, state::StateStore& state, Clock& clock,
               Metrics& metrics, LabelSettings settings, std::shared_ptr<spdlog::logger> log);

  LabelOutcome label(const WorkItem& item);

 private:
  struct Identity {
    labels::AllocationIdentity identity;
    bool degraded = false;
  };
  std::expected<Identity, LabelOutcome> resolve_identity(const WorkItem& item, MonoTime deadline);
  std::expected<cilium::Endpoint, LabelOutcome> find_endpoint(const WorkItem& item, MonoTime deadline);
  std::expected<cilium::Endpoint, LabelOutcome> write_labels(const WorkItem& item, cilium::Endpoint ep,
                                                           const labels::LabelSet& desired, MonoTime deadline,
                                                           bool& wrote);
  std::expected<cilium::Endpoint, LabelOutcome> confirm(const cilium::EndpointRef& ref,
                                                      const labels::LabelSet& desired, MonoTime deadline);
  void record(const WorkItem& item, const cilium::Endpoint& ep, const labels::AllocationIdentity& identity,
              const labels::LabelSet& desired);
  MonoTime call_deadline(MonoTime item_deadline) const;
  void count_call(const char* target, const Error* error);
  // When this process last saw each allocation's endpoint carry its labels. A prefetched
  // endpoint read before that is stale: planning a write from it would write a second time.
  void note_labeled(const std::string& alloc_id);
  bool labeled_since(const std::string& alloc_id, MonoTime since);

  nomad::NomadApi& nomad_;
  cilium::CiliumApi& cilium_;
  state::StateStore& state_;
  Clock& clock_;
  Metrics& metrics_;
  LabelSettings settings_;
  std::shared_ptr<spdlog::logger> log_;
  // The endpoint ID form this agent answered last (cni-attachment-id on 1.15+, container-id on
  // older ones): tried first next time, which saves a 400/404 round trip per allocation.
  std::atomic<int> preferred_kind_{static_cast<int>(cilium::EndpointIdKind::cni_attachment)};
  std::atomic<bool> endpoint_patch_gone_{false};
  std::mutex labeled_mu_;
  std::map<std::string, MonoTime> labeled_at_;
};

}  // namespace cn::labeler
