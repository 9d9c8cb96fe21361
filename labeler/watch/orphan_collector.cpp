#include "labeler/watch/orphan_collector.h"

#include <cctype>
#include <set>
#include <string_view>

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

namespace {

// Nomad's own answer for an allocation it does not have (nomad command/agent/alloc_endpoint.go):
// a 404 from a proxy, a load balancer or a path Nomad does not serve has another body.
constexpr std::string_view kNomadAllocNotFound = "alloc not found";

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  return text;
}

}  // namespace

OrphanCollector::Proof OrphanCollector::prove_gone(const std::string& alloc_id, MonoTime now) {
  auto alloc = nomad_.allocation(alloc_id, now + options_.call_timeout);
  calls_.record(Peer::nomad, alloc);
  if (!alloc) {
    if (alloc.error().kind == ErrorKind::not_found &&
        trimmed(alloc.error().message) == kNomadAllocNotFound) {
      return {true, ""};
    }
    return {false, alloc.error().message};
  }
  if (alloc->id != alloc_id) return {false, "Nomad answered for allocation " + alloc->id};
  // Stricter than is_terminal() on purpose: a stop-desired allocation may still be running out
  // its shutdown delay behind this endpoint. Deleting waits until the client says it stopped.
  if (alloc->is_client_terminal()) return {true, ""};
  return {false, "allocation not terminal"};
}

std::vector<long long> OrphanCollector::collect(const ReconcileReport& report) {
  const MonoTime now = clock_.now();
  std::set<std::pair<std::string, long long>> current(report.orphan_endpoints.begin(),
                                                      report.orphan_endpoints.end());
  std::erase_if(orphans_, [&](const auto& kv) { return !current.contains(kv.first); });
  for (const auto& key : current) orphans_.try_emplace(key, Orphan{now, std::nullopt});

  std::vector<long long> deleted;
  if (!options_.delete_orphans) return deleted;
  for (auto it = orphans_.begin(); it != orphans_.end();) {
    const auto& [alloc_id, endpoint_id] = it->first;
    Orphan& orphan = it->second;
    // Two proofs a grace period apart, each from Nomad itself: one answer, from a proxy or a
    // Nomad that just restarted without its state, never deletes a workload's endpoint.
    const bool second_due = orphan.first_proof && now - *orphan.first_proof >= options_.grace &&
                            now - orphan.first_seen >= options_.grace;
    if (orphan.first_proof && !second_due) {
      ++it;
      continue;
    }
    const Proof proof = prove_gone(alloc_id, now);
    if (!proof.gone) {
      // Live elsewhere, unreadable, or Nomad unsure: keep it, and start the proof again.
      orphan.first_proof.reset();
      log_->info("orphan kept: endpoint={} alloc={} reason=\"{}\"", endpoint_id, alloc_id,
                 proof.reason);
      ++it;
      continue;
    }
    if (!orphan.first_proof) {
      orphan.first_proof = now;
      ++it;
      continue;
    }
    auto ref = cilium::EndpointRef::local(endpoint_id);
    if (!ref) {
      metrics_.errors(ErrorKindLabel::endpoint_id).Increment();
      log_->warn("orphan kept: endpoint={} alloc={} reason=\"{}\"", endpoint_id, alloc_id,
                 ref.error().message);
      it = orphans_.erase(it);
      continue;
    }
    auto ok = cilium_.delete_endpoint(*ref, now + options_.call_timeout);
    calls_.record(Peer::cilium, ok);
    if (ok || ok.error().kind == ErrorKind::not_found) {
      metrics_.endpoints_deleted().Increment();
      log_->warn("orphan endpoint deleted: endpoint={} alloc={} orphaned_s={}", endpoint_id,
                 alloc_id,
                 std::chrono::duration_cast<std::chrono::seconds>(now - orphan.first_seen).count());
      deleted.push_back(endpoint_id);
      it = orphans_.erase(it);
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
