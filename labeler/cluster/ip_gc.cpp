#include "labeler/cluster/ip_gc.h"

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_set>

#include <spdlog/spdlog.h>

#include "labeler/cluster/duty_skeleton.h"
#include "labeler/cluster/fenced_txn.h"
#include "labeler/cluster/in_use_report.h"
#include "labeler/cluster/ip_key.h"
#include "labeler/cluster/kvstore_layout.h"
#include "labeler/cluster/node_reaper.h"

namespace cn::labeler::cluster {

// A HostIP's node as the node entries say; a HostIP two entries claim is nobody's. Outside the
// anonymous namespace: IpGc::Pass holds them.
struct IpGcOwner {
  std::string name;
  NodeVerdict verdict = NodeVerdict::never_listed;
  bool ambiguous = false;
};

namespace {

// Endpoint IPs of one node's report as 64-bit hashes: a collision can only make a dead IP look
// held (kept one more pass), never the reverse.
std::uint64_t ip_gc_hash(std::string_view ip) {
  return std::hash<std::string_view>{}(ip);
}

// What one node's in-use report says about its endpoints' IPs; nullopt: an older labeler's
// report without them, which proves nothing.
using ReportedIps = std::optional<std::unordered_set<std::uint64_t>>;

enum class IpGcVerdict { kept, node_gone, endpoint_gone };

// What the pass's reads say about one lease-less entry of a valid shape; counts why it is kept.
IpGcVerdict judge_ip_entry(const kvstore::IpEntry& entry,
                           const std::unordered_map<std::string, std::string>& gone,
                           const std::unordered_map<std::string, IpGcOwner>& owners,
                           const std::unordered_map<std::string, ReportedIps>& reported,
                           IpGcReport& report) {
  if (gone.contains(entry.host_ip)) return IpGcVerdict::node_gone;
  auto owner = owners.find(entry.host_ip);
  if (entry.host_ip.empty() || owner == owners.end() || owner->second.ambiguous) {
    ++report.no_owner;
    return IpGcVerdict::kept;
  }
  if (owner->second.verdict == NodeVerdict::never_listed) {
    ++report.not_ours;
    return IpGcVerdict::kept;
  }
  auto ips = reported.find(owner->second.name);
  if (ips == reported.end() || !ips->second) {
    ++report.no_report;
    return IpGcVerdict::kept;
  }
  if (ips->second->contains(ip_gc_hash(entry.ip))) {
    ++report.in_use;
    return IpGcVerdict::kept;
  }
  return IpGcVerdict::endpoint_gone;
}

// HostIPs proven gone this pass: by an entry now, or by the last pass and no entry since (unless
// Nomad lists the node alive again, a node back under its name).
std::unordered_map<std::string, std::string> ip_gc_gone_hosts(
    const std::unordered_map<std::string, IpGcOwner>& owners,
    const std::unordered_map<std::string, std::string>& before, const NomadListing& listing) {
  std::unordered_map<std::string, std::string> gone;
  for (const auto& [host, owner] : owners) {
    if (!owner.ambiguous &&
        (owner.verdict == NodeVerdict::down || owner.verdict == NodeVerdict::absent))
      gone.emplace(host, owner.name);
  }
  for (const auto& [host, name] : before) {
    if (owners.contains(host) || node_verdict(listing, name, true) == NodeVerdict::alive) continue;
    gone.emplace(host, name);
  }
  return gone;
}

// The scans of one pass, all at the revision the first pins.
struct IpGcReads {
  etcd::EtcdApi& etcd;
  Clock& clock;
  const IpGcOptions& options;
  etcd::Revision& revision;
  ScanCounters& counters;
  const std::stop_token& stop;
};

// This region's markers (which names node reaping's proof may call ours), then the node
// entries: HostIP -> node name and its verdict.
Status ip_gc_read_owners(IpGcReads& r, const NomadListing& listing,
                         std::unordered_map<std::string, IpGcOwner>& owners) {
  const std::string marker_prefix = nomad_node_marker_prefix(r.options.cluster_name);
  std::set<std::string, std::less<>> ours;
  auto read = scan_prefix(r.etcd, r.clock, r.options.scan, marker_prefix, r.revision, r.counters,
                          r.stop, [&](const etcd::KeyValue& kv) {
                            const std::string_view name =
                                std::string_view(kv.key).substr(marker_prefix.size());
                            auto marker = parse_nomad_node_marker(kv.value);
                            if (marker && marker->region == r.options.region && !name.empty() &&
                                name.find('/') == std::string_view::npos)
                              ours.emplace(name);
                          });
  if (!read) return read;
  const std::string& cluster = r.options.cluster_name;
  return scan_prefix(
      r.etcd, r.clock, r.options.scan, kvstore::node_prefix(cluster), r.revision, r.counters,
      r.stop, [&](const etcd::KeyValue& kv) {
        auto name = kvstore::parse_node_key(kv.key, cluster);
        auto entry = kvstore::parse_node_value(kv.value);
        if (!name || !entry || entry->name != *name) return;
        const NodeVerdict verdict = node_verdict(listing, *name, ours.contains(*name));
        for (const auto& ip : entry->ips) {
          auto [it, added] = owners.try_emplace(ip, IpGcOwner{std::string(*name), verdict, false});
          if (!added && it->second.name != *name) it->second.ambiguous = true;
        }
      });
}

// Each live node's endpoint IPs, by Cilium node name; an unreadable report proves nothing (the
// identity GC logs it).
Status ip_gc_read_reports(IpGcReads& r, std::unordered_map<std::string, ReportedIps>& reported,
                          IpGcReport& report) {
  return scan_prefix(r.etcd, r.clock, r.options.scan, in_use_prefix(r.options.cluster_name),
                     r.revision, r.counters, r.stop, [&](const etcd::KeyValue& kv) {
                       ++report.reports;
                       auto parsed = parse_in_use_report(kv.value);
                       if (!parsed) return;
                       ReportedIps ips;
                       if (parsed->ips) {
                         ips.emplace();
                         for (const auto& ip : *parsed->ips) ips->insert(ip_gc_hash(ip));
                       } else {
                         ++report.reports_without_ips;
                       }
                       reported.insert_or_assign(
                           cilium_node_name(parsed->node, r.options.name_rule), std::move(ips));
                     });
}

}  // namespace

IpGc::IpGc(etcd::EtcdApi& etcd, Clock& clock, IpGcOptions options,
           std::shared_ptr<spdlog::logger> log)
    : etcd_(etcd),
      clock_(clock),
      options_(std::move(options)),
      log_(log ? std::move(log) : spdlog::default_logger()),
      limiter_(clock, options_.deletions_per_minute) {
  options_.max_per_pass = std::max<std::int64_t>(options_.max_per_pass, 1);
}

// IP GC as a policy over the duty skeleton: markers, node entries and reports say whose IPs
// are gone; the two-pass rule decides; the skeleton caps and deletes.
class IpGc::Pass final : public DutyPolicy {
 public:
  Pass(IpGc& gc, const std::vector<nomad::NodeStub>& nomad_nodes, IpGcReport& report)
      : gc_(gc), nomad_nodes_(nomad_nodes), report_(report) {}

  DutyScan scan(ScanCounters& counters, const std::stop_token& stop) override {
    auto listing = nomad_listing(nomad_nodes_, gc_.options_.local_node, gc_.options_.name_rule);
    if (!listing) return std::unexpected(DutyStop{PassEnd::doubt, listing.error().message});

    // 1-3. Markers, node entries and in-use reports, at one revision.
    IpGcReads reads{gc_.etcd_, gc_.clock_, gc_.options_, report_.revision, counters, stop};
    auto read = ip_gc_read_owners(reads, *listing, owners_);
    if (read) read = ip_gc_read_reports(reads, reported_, report_);
    if (!read) return duty_scan(read);
    gone_ = ip_gc_gone_hosts(owners_, gc_.gone_hosts_, *listing);

    // 4. The IP keys.
    read = scan_prefix(gc_.etcd_, gc_.clock_, gc_.options_.scan, kvstore::kIpDefaultPrefix,
                       report_.revision, counters, stop,
                       [&](const etcd::KeyValue& kv) { judge_ip_key(kv); });
    return duty_scan(read);
  }

  std::vector<FencedDeletion> decide(const LeaderFence& /*fence*/,
                                     const std::stop_token& /*stop*/) override {
    // Every read complete: this pass is the one the next pass confirms against.
    gc_.remembered_ = std::move(candidates_);
    gc_.gone_hosts_ = std::move(gone_);
    return confirmed_;
  }

  void over_cap(std::size_t due) override {
    gc_.log_->warn("ip gc leaves confirmed keys for the next pass: due={} max_per_pass={}", due,
                   gc_.options_.max_per_pass);
  }

  void would_delete(std::size_t i) override {
    gc_.log_->info("ip gc dry run, would delete: key=\"{}\"", confirmed_[i].key);
  }

  void deleted(std::size_t i, bool applied) override {
    // Deleted or changed since the read: either way it must be found twice again.
    gc_.remembered_.erase(confirmed_[i].key);
    if (applied) {
      gc_.log_->info("ip gc deleted a stale ipcache entry: key=\"{}\"", confirmed_[i].key);
    } else {
      gc_.log_->info("ip gc kept an ipcache entry changed since read: key=\"{}\"",
                     confirmed_[i].key);
    }
  }

  void complete(const LeaderFence& /*fence*/, const std::stop_token& /*stop*/) override {
    gc_.log_->info(
        "ip gc pass: scanned={} leased={} candidates={} node_gone={} endpoint_gone={} deleted={} "
        "would_delete={} refused={} no_report={} requests={}",
        report_.scanned, report_.leased, report_.candidates, report_.node_gone,
        report_.endpoint_gone, report_.deleted, report_.would_delete, report_.refused,
        report_.no_report, report_.etcd_requests);
  }

  void ended_early() override {
    gc_.log_->warn("ip gc pass ended early: end={} detail=\"{}\" deleted={}",
                   to_string(report_.end), report_.detail, report_.deleted);
  }

 private:
  void judge_ip_key(const etcd::KeyValue& kv) {
    ++report_.scanned;
    if (kv.lease != 0) {
      ++report_.leased;
      return;
    }
    auto ip = kvstore::parse_ip_key(kv.key);
    auto entry = kvstore::parse_ip_value(kv.value);
    if (!ip || !entry || entry->ip != *ip) {
      ++report_.unknown_shape;
      gc_.log_->debug("ip gc: unknown ipcache entry shape, skipped: key=\"{}\"", kv.key);
      return;
    }
    const IpGcVerdict verdict = judge_ip_entry(*entry, gone_, owners_, reported_, report_);
    if (verdict == IpGcVerdict::kept) return;
    ++(verdict == IpGcVerdict::node_gone ? report_.node_gone : report_.endpoint_gone);
    ++report_.candidates;
    candidates_.emplace(kv.key, kv.mod_revision);
    auto seen = gc_.remembered_.find(kv.key);
    if (seen != gc_.remembered_.end() && seen->second == kv.mod_revision) {
      ++report_.confirmed;
      confirmed_.push_back(FencedDeletion{kv.key, {mod_revision_is(kv.key, kv.mod_revision)}, {}});
    }
  }

  IpGc& gc_;
  const std::vector<nomad::NodeStub>& nomad_nodes_;
  IpGcReport& report_;
  std::unordered_map<std::string, IpGcOwner> owners_;
  std::unordered_map<std::string, ReportedIps> reported_;
  std::unordered_map<std::string, std::string> gone_;
  std::unordered_map<std::string, etcd::Revision> candidates_;
  std::vector<FencedDeletion> confirmed_;
};

IpGcReport IpGc::run_pass(const std::vector<nomad::NodeStub>& nomad_nodes, const LeaderFence& fence,
                          std::stop_token stop) {
  IpGcReport report;
  Pass pass(*this, nomad_nodes, report);
  run_duty_pass(pass, report,
                DutyDeletes{etcd_,
                            clock_,
                            &limiter_,
                            {options_.deletions_per_txn, options_.scan.call_timeout},
                            options_.dry_run,
                            options_.max_per_pass},
                fence, stop);
  return report;
}

}  // namespace cn::labeler::cluster
