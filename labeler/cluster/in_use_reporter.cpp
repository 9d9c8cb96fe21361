#include "labeler/cluster/in_use_reporter.h"

#include <algorithm>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "labeler/cluster/in_use_report.h"

namespace cn::labeler::cluster {

namespace {

// Identities below 256 are Cilium's reserved ones (host, world, health, init...): never in the
// kvstore, never collected.
constexpr std::int64_t kFirstGlobalIdentity = 256;

}  // namespace

InUseReporter::InUseReporter(etcd::EtcdApi& etcd, cilium::CiliumApi& cilium, Clock& clock,
                             InUseReporterSettings settings, std::shared_ptr<spdlog::logger> log,
                             OnReport on_report)
    : etcd_(etcd),
      cilium_(cilium),
      clock_(clock),
      settings_(std::move(settings)),
      log_(log ? std::move(log) : spdlog::default_logger()),
      on_report_(std::move(on_report)) {}

Status InUseReporter::ensure_lease(const Deadline& deadline) {
  if (lease_ != 0) {
    auto ttl = etcd_.keep_alive(lease_, deadline);
    if (ttl) return {};
    if (ttl.error().kind != ErrorKind::not_found) return std::unexpected(ttl.error());
    lease_ = 0;  // expired while etcd was away: the report went with it, put it again
  }
  // Three missed reports before the report vanishes: one slow round never drops it.
  auto ttl = std::chrono::duration_cast<std::chrono::seconds>(settings_.interval * 3);
  auto granted = etcd_.grant_lease(std::max(ttl, std::chrono::seconds{10}), deadline);
  if (!granted) return std::unexpected(granted.error());
  lease_ = granted->id;
  return {};
}

Status InUseReporter::report_once(std::stop_token stop) {
  Deadline deadline{clock_.now() + settings_.call_timeout, stop};
  auto endpoints = cilium_.endpoints(deadline);
  if (!endpoints) return std::unexpected(with_context("Cilium endpoints", endpoints.error()));
  std::vector<std::uint64_t> ids;
  ids.reserve(endpoints->endpoints.size());
  // Every endpoint's addresses, whatever its identity: the agent writes an ipcache entry for
  // each, and the IP GC spares what is listed here.
  std::vector<std::string> ips;
  for (const auto& ep : endpoints->endpoints) {
    if (ep.identity_id >= kFirstGlobalIdentity)
      ids.push_back(static_cast<std::uint64_t>(ep.identity_id));
    for (const auto& a : ep.addressing) {
      if (!a.ipv4.empty()) ips.push_back(a.ipv4);
      if (!a.ipv6.empty()) ips.push_back(a.ipv6);
    }
  }
  std::sort(ips.begin(), ips.end());
  ips.erase(std::unique(ips.begin(), ips.end()), ips.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  if (auto ok = ensure_lease(deadline); !ok)
    return std::unexpected(with_context("etcd lease", ok.error()));
  std::string key = in_use_key(settings_.cluster_name, settings_.node);
  auto put = etcd_.put(key, in_use_report_json(settings_.node, ids, ips, clock_.wall_now()), lease_,
                       deadline);
  if (!put) return std::unexpected(with_context("etcd put " + key, put.error()));
  return {};
}

void InUseReporter::run(std::stop_token stop) {
  bool failing = false;
  while (!stop.stop_requested()) {
    auto ok = report_once(stop);
    if (on_report_ && !stop.stop_requested()) on_report_(ok.has_value());
    if (!ok && !stop.stop_requested()) {
      log_->warn("identity in-use report failed: error=\"{}\"", ok.error().message);
      failing = true;
    } else if (ok && failing) {
      log_->info("identity in-use report: recovered");
      failing = false;
    }
    clock_.sleep_for(settings_.interval, stop);
  }
  if (lease_ != 0) {
    Deadline deadline{clock_.now() + settings_.call_timeout};
    if (auto revoked = etcd_.revoke_lease(lease_, deadline); !revoked)
      log_->debug("identity in-use report: lease revoke: error=\"{}\"", revoked.error().message);
  }
}

}  // namespace cn::labeler::cluster
