#pragma once
// Endpoints whose allocation Nomad no longer runs on this node ("orphans": a DEL that never
// came, a client crash). Always reported; deleted only with --gc-endpoints, after they stayed
// orphaned for the grace period, and only after Nomad proved twice, a grace period apart, that
// the allocation is gone (its own 404 body, "alloc not found") or stopped on its client. The node
// list silently omits allocations in namespaces the token cannot read, and a proxy answers 404
// for anything, so neither alone ever justifies a deletion.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/fwd.h>

#include "common/cilium/client/cilium_api.h"
#include "common/nomad/client/nomad_api.h"
#include "labeler/serve/call_recorder.h"
#include "labeler/serve/metrics.h"
#include "labeler/watch/reconciler.h"

namespace cn::labeler {

class OrphanCollector {
 public:
  struct Options {
    bool delete_orphans = false;
    std::chrono::seconds grace{600};
    std::chrono::milliseconds call_timeout{5000};
  };

  OrphanCollector(nomad::NomadApi& nomad, cilium::CiliumApi& cilium, Clock& clock, Metrics& metrics,
                  CallRecorder& calls, Options options, std::shared_ptr<spdlog::logger> log);

  // Called after each reconcile with what it found; returns the endpoints deleted.
  std::vector<long long> collect(const ReconcileReport& report);

 private:
  nomad::NomadApi& nomad_;
  cilium::CiliumApi& cilium_;
  Clock& clock_;
  Metrics& metrics_;
  CallRecorder& calls_;
  Options options_;
  std::shared_ptr<spdlog::logger> log_;
  struct Proof {
    bool gone = false;
    std::string reason;  // why not, for the log
  };
  Proof prove_gone(const std::string& alloc_id, MonoTime now);

  struct Orphan {
    MonoTime first_seen;
    std::optional<MonoTime> first_proof;  // when Nomad first proved the allocation gone
  };
  // (alloc ID, endpoint ID) -> what is known. Bounded by the endpoints on the node.
  std::map<std::pair<std::string, long long>, Orphan> orphans_;
};

}  // namespace cn::labeler
