#include "labeler/orphan_collector.h"

#include <set>

#include <spdlog/spdlog.h>

namespace cn::labeler {

OrphanCollector::OrphanCollector(nomad::NomadApi& nomad, cilium::CiliumApi& cilium, Clock& clock,
                                 Metrics& metrics, CallRecorder& calls, Options options,
                                 std::shared_ptr<spdlog::logger> log)
    : nomad_(nomad),
      cilium_(cilium),
      clock_(clock),
      metrics_(metrics),
      calls_(calls),
      options_(options),
      log_(log ? std::move(log) : spdlog::default_logger()) {}

std::vector<long long> OrphanCollector::collect(const ReconcileReport& report) {
  const MonoTime now = clock_.now();
  std::set<std::pair<std::string, long long>> current(report.orphan_endpoints.begin(),
                                                      report.orphan_endpoints.end());
  std::erase_if(first_seen_, [&](const auto& kv) { return !current.contains(kv.first); });
  for (const auto& key : current) first_seen_.try_emplace(key, now);

  std::vector<long long> deleted;
  if (!options_.delete_orphans) return deleted;
  for (auto it = first_seen_.begin(); it != first_seen_.end();) {
    const auto& [alloc_id, endpoint_id] = it->first;
    if (now - it->second < options_.grace) {
      ++it;
      continue;
    }
    auto alloc = nomad_.allocation(alloc_id, now + options_.call_timeout);
    calls_.record(Peer::nomad, alloc);
    // Stricter than is_terminal() on purpose: a stop-desired allocation may still be running out
    // its shutdown delay behind this endpoint. Deleting waits until the client says it stopped.
    bool gone = (!alloc && alloc.error().kind == ErrorKind::not_found) ||
                (alloc && alloc->is_client_terminal());
    if (!gone) {
      // Live elsewhere, unreadable, or Nomad unsure: keep it and look again next time.
      log_->info("orphan kept: endpoint={} alloc={} reason=\"{}\"", endpoint_id, alloc_id,
                 alloc ? "allocation not terminal" : alloc.error().message);
      ++it;
      continue;
    }
    auto ref = cilium::EndpointRef::local(endpoint_id);
    if (!ref) {
      metrics_.errors(ErrorKindLabel::endpoint_id).Increment();
      log_->warn("orphan kept: endpoint={} alloc={} reason=\"{}\"", endpoint_id, alloc_id,
                 ref.error().message);
      it = first_seen_.erase(it);
      continue;
    }
    auto ok = cilium_.delete_endpoint(*ref, now + options_.call_timeout);
    calls_.record(Peer::cilium, ok);
    if (ok || ok.error().kind == ErrorKind::not_found) {
      metrics_.endpoints_deleted().Increment();
      log_->warn("orphan endpoint deleted: endpoint={} alloc={} orphaned_s={}", endpoint_id,
                 alloc_id,
                 std::chrono::duration_cast<std::chrono::seconds>(now - it->second).count());
      deleted.push_back(endpoint_id);
      it = first_seen_.erase(it);
    } else {
      metrics_.errors(ErrorKindLabel::gc_delete).Increment();
      log_->warn("orphan delete failed: endpoint={} alloc={} error=\"{}\"", endpoint_id, alloc_id,
                 ok.error().message);
      ++it;
    }
  }
  return deleted;
}

}  // namespace cn::labeler
